"""Text measures of the harness, kept apart from app/text.py on purpose: the metrics must not
grade the service with the service's own tokenizer."""

from __future__ import annotations

import re

# A small English stop list (function words and question words): what carries no claim content.
STOP = frozenset(
    """
a an the and or but nor if then of to in on at by for with from into onto over under about after before
as is are was were be been being am do does did have has had having it its this that these those there
here what which who whom whose when where why how can could should would may might must shall will
i me my we our you your he him his she her they them their not no so than too very just also any all
some each every more most other such only own same both said says per via up out off
""".split()
)
_WORD = re.compile(r"[A-Za-z0-9$€£]+(?:[.,'’-][A-Za-z0-9]+)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9$€£])")
# A piece ending in one of these was cut at an abbreviation ("Sentencing is scheduled for Feb. 14."):
# the reader must see the whole sentence, as the service's own splitter does (the same list as
# app/language/text._ABBREV: initials and "U.S." join too, also where they end a real sentence).
_ABBREVIATION_END = re.compile(
    r"\b(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|No|vs|e\.g|i\.e|U\.S|[A-Z])\.$"
)
_MARKER = re.compile(r"\s*\[\s*S?\d+(?:\s*[,;–-]\s*S?\d+)*\s*\]")


def _norm(word: str) -> str:
    w = word.lower().strip(".,'’")
    # Plural/verb -s and -ed folded: "releases" ~ "released" ~ "release".
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix) and not w[-len(suffix) - 1].isdigit():
            return w[: -len(suffix)]
    return w


def content_terms(text: str, stem: bool = True) -> list[str]:
    out = []
    for w in _WORD.findall(text):
        lw = w.lower()
        if lw in STOP or len(lw) < 2 and not lw.isdigit():
            continue
        out.append(_norm(w) if stem else lw)
    return out


def numbers_in(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def sentences(text: str) -> list[str]:
    out = []
    for block in re.split(r"\n\s*\n|\n", text):
        block = " ".join(block.split())
        pieces: list[str] = []
        for s in _SENTENCE_END.split(block):
            if pieces and _ABBREVIATION_END.search(pieces[-1]):
                pieces[-1] = f"{pieces[-1]} {s.strip()}"
            elif s.strip():
                pieces.append(s.strip())
        out.extend(pieces)
    return out


def strip_markers(text: str) -> str:
    return _MARKER.sub("", text)


def lexical_support(claim: str, source_text: str) -> float:
    """Share of the claim's content terms found in one sentence window (the best sentence and its
    neighbours) of the source, zeroed when a number of the claim is absent from the source."""
    c = set(content_terms(claim))
    if not c:
        return 1.0
    if numbers_in(claim) - numbers_in(source_text):
        return 0.0
    sents = sentences(source_text)
    best = 0.0
    for i in range(len(sents)):
        window = set(content_terms(" ".join(sents[max(0, i - 1) : i + 2])))
        best = max(best, len(c & window) / len(c))
    return round(best, 3)


def normalised(text: str) -> str:
    return " ".join(text.lower().replace("\u2019", "'").split())
