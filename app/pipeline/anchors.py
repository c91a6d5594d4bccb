"""Anchors: the terms an answer cannot do without (names, model numbers, years, versions), their
siblings (the Vanta S2 next to the Vanta S3, Python 3.10 next to 3.11), and the kind of value a
question asks for. Shared by the gate and the extractive composer."""
from __future__ import annotations

import re

from app.pipeline.conflicts import _MONTHS, PATTERNS, asked_attribute
from app.language.text import STOP_WORDS, terms

_NUMBER_ANCHOR = re.compile(r"\b(?:1[5-9]|2[0-9])\d\d\b|\b\d+(?:\.\d+)+\b")
_MODEL = re.compile(r"^([a-z]*?)(\d+(?:\.\d+)*)$")  # "s3" -> ("s", "3"); "3.11" -> ("", "3.11")


def covered(term: str, passage_terms: set[str]) -> bool:
    """"3.11" is covered by "3.11.0": versions and numbers match on a dotted prefix."""
    return term in passage_terms or (term[:1].isdigit() and any(t.startswith(term + ".") for t in passage_terms))


def question_anchors(question: str) -> list[str]:
    """Years, version numbers and names (capitalised words after the first). Evidence about Python
    3.10 does not answer a question about 3.12, nor does the 2029 final answer 2031's."""
    found = set(_NUMBER_ANCHOR.findall(question))
    tokens = re.findall(r"[\w.+#-]+", question)
    for tok in tokens[1:]:
        if any(c.isupper() for c in tok) and tok.lower() not in STOP_WORDS:
            found.update(terms(tok))
    return sorted(found)


def _siblings(anchor: str, term: str) -> bool:
    """T7 and T9, S2 and S3, 3.10 and 3.11: the same family, another member. Years are not models."""
    a, t = _MODEL.match(anchor), _MODEL.match(term)
    if not a or not t or a.group(1) != t.group(1) or a.group(2) == t.group(2):
        return False
    if not a.group(1):  # bare numbers: only dotted versions with the same major ("3.10" vs "3.11")
        if "." not in a.group(2) or "." not in t.group(2):
            return False
        if t.group(2).startswith(a.group(2) + ".") or a.group(2).split(".")[0] != t.group(2).split(".")[0]:
            return False
    return True


def about_a_sibling(passage_terms: set[str], anchors: list[str]) -> bool:
    """The passage names a sibling of a model anchor and never the anchor itself."""
    for anchor in anchors:
        if not _MODEL.match(anchor) or covered(anchor, passage_terms):
            continue
        if any(_siblings(anchor, t) for t in passage_terms):
            return True
    return False


_HOW_MANY = re.compile(r"\b(?:how many|number of)\s+(\w+)|\b(headcount|population)\b", re.I)
# A measurement names its dimension; the evidence must state a number next to that same word.
_MEASURE = re.compile(r"\b(speed|weight|weigh|range|capacity|battery|height|length|width|size|distance|"
                      r"temperature|resolution|storage|memory|power|mileage|duration)\b", re.I)
_PRESENT = {
    "price": PATTERNS["price"],
    "version": PATTERNS["version"],
    # Presence is looser than conflict detection: "released in 2017" answers "when".
    "date": re.compile(PATTERNS["date"].pattern + r"|\b(?:1[5-9]|20)\d\d\b|\b(?:" + _MONTHS + r")\.?\s+\d{1,2}\b"
                       r"|\b(?:yesterday|today|last (?:week|month|year))\b", re.I),
    "count": re.compile(r"\b\d[\d,.]*\b"),
    "measure": re.compile(r"\b\d[\d,.]*\b"),
}


_ASKS_VALUE = re.compile(r"\b(what(?:'s| is| are| was)|how (?:fast|heavy|far|long|big|large|tall|much|many))\b", re.I)


def asked_value_kind(question: str) -> str | None:
    kind = asked_attribute(question)
    if kind:
        return kind
    if _HOW_MANY.search(question):
        return "count"
    return "measure" if _MEASURE.search(question) and _ASKS_VALUE.search(question) else None


def has_value(kind: str, text: str) -> bool:
    return bool(_PRESENT[kind].search(text))


def value_stated(question: str, kind: str, text: str) -> bool:
    """Does the text state a value of the asked kind? For counts and measures the number must sit in
    a sentence with the word it counts or measures ("a top speed of 25 km/h", "employs 900 people")."""
    if kind not in ("count", "measure"):
        return has_value(kind, text)
    if kind == "count":
        m = _HOW_MANY.search(question)
        word = set(terms(m.group(1) or m.group(2)))
    else:
        word = set(terms(" ".join(_MEASURE.findall(question))))
    for sentence in re.split(r"(?<=[.!?])\s+|\n", text):
        if _PRESENT["count"].search(sentence) and word & set(terms(sentence)):
            return True
    return False
