"""``find_values`` and ``same_value``: the scan, then ranges ("20-30 minutes", "$40-50 billion",
"between 20 and 30 people") and versions in context ("Python 3.11"), as ``Value`` items."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from app.language.values.classify import Item
from app.language.values.cues import NEXT_WORD, RANGE_SEP, plural
from app.language.values.scanner import scan

KINDS = frozenset({"price", "count", "measure", "percent", "date", "version", "year", "number"})
_DEFAULT_KINDS = KINDS - {"number"}


@dataclass(frozen=True, slots=True)
class Value:
    kind: str  # "price" | "count" | "measure" | "percent" | "date" | "version" | "year" | "number"
    amount: float | None  # normalised number: "$410m" -> 410e6, "twenty-five euros" -> 25.0
    unit: str  # price: ISO code; measure: canonical unit; percent: "%"; count/year/number: ""
    text: str  # the surface form as found
    start: int
    end: int


_HYPHENS = frozenset({"-", "–", "—"})


def _link_ranges(text: str, items: list[Item]) -> None:
    """ "20-30 minutes", "$40-50 billion", "between 20 and 30 people": the first end takes the
    second's kind, unit and scale; "$5-10": the second takes the first's currency."""
    for a, b in zip(items, items[1:]):
        sep = text[a.end : b.start]
        if not RANGE_SEP.fullmatch(sep):
            continue
        dash = sep.strip() in _HYPHENS
        if a.kind == "year" and dash and b.kind in ("bare", "count", "year") and b.end - b.start in (2, 4):
            b.kind = "year" if b.end - b.start == 4 else "drop"  # "2019-20 season", "2019–2020"
            continue
        if (
            a.kind == "bare"
            and b.kind in ("price", "percent", "measure")
            or a.kind == "bare"
            and not a.after_name
            and b.kind == "count"
        ):
            if b.kind == "count":
                if dash:
                    nxt = NEXT_WORD.match(text, b.end)
                    if not nxt or not plural(nxt["w"]):
                        b.kind = "bare"  # "a 5-4 decision", "the 2-1 win"
                        continue
                if " and " in sep.lower() and not _BETWEEN.search(text, max(0, a.start - 9), a.start):
                    continue
            a.kind, a.unit, a.weak = b.kind, b.unit, False
            if b.scale > 1 and a.scale == 1 and a.amount is not None:
                a.amount *= b.scale
                a.scale = b.scale
        elif (
            a.kind == "price"
            and b.kind == "price"
            and a.unit == b.unit
            and b.scale > 1
            and a.scale == 1
            and a.amount is not None
            and b.amount is not None
            and a.amount * b.scale <= b.amount
        ):
            a.amount *= b.scale  # "$3 to $4 billion"
            a.scale = b.scale
        elif a.kind == "price" and b.kind == "bare" and not b.after_name and (dash or sep.strip() == "to"):
            b.kind, b.unit = "price", a.unit  # "$5-10"
            if b.scale > 1 and a.scale == 1 and a.amount is not None:
                a.amount *= b.scale
                a.scale = b.scale


_BETWEEN = re.compile(r"\bbetween\s+$", re.I)
_DOTTED = re.compile(r"\d+\.\d+")


def _versions_in_context(text: str, items: list[Item]) -> None:
    """ "Python 3.11", "iOS 13.2": a dotted number right after a name is a version; so is a bare
    dotted number with the major of a version found ("faster than 3.10")."""
    for i in items:
        if i.kind == "bare" and i.after_name and _DOTTED.fullmatch(text, i.start, i.end):
            i.kind, i.unit, i.amount = "version", text[i.start : i.end], None
    majors = {i.unit.split(".")[0] for i in items if i.kind == "version"}
    if majors:
        for i in items:
            if (
                i.kind == "bare"
                and _DOTTED.fullmatch(text, i.start, i.end)
                and text[i.start : i.end].split(".")[0] in majors
            ):
                i.kind, i.unit, i.amount = "version", text[i.start : i.end], None


# A relative change written as a fraction: "reduced by a third", "cut by half", "by two-thirds" — not
# "by a third party", "by half a percentage point", "by a half-point", "by half past five", "by a
# quarter of an hour".
_FRACTION_CHANGE = re.compile(
    r"\bby\s+(?:(?P<n>a|one|two|three|four)[\s-]+)?(?P<d>half|thirds?|quarters?|fifths?|tenths?)\b"
    r"(?![\s-]*(?:part(?:y|ies)|past|of|an?|point|percent|percentage|hour|mile)\b)",
    re.I,
)
_NUMERATORS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4}
_DENOMINATORS = {"half": 2, "third": 3, "quarter": 4, "fifth": 5, "tenth": 10}


def _fraction_changes(text: str) -> list[Value]:
    """ "by a third" -> a share of 33.3 %: the answer to "By how much did it shrink?"."""
    if "by" not in text and "By" not in text and "BY" not in text:
        return []
    out = []
    for m in _FRACTION_CHANGE.finditer(text):
        d = m["d"].lower().rstrip("s")
        n = _NUMERATORS[m["n"].lower()] if m["n"] else 1
        if d != "half" and not m["n"] or n >= _DENOMINATORS[d]:
            continue  # "by thirds" is no amount; "by four quarters" no share
        start = m.start("n") if m["n"] else m.start("d")
        out.append(Value("percent", round(100 * n / _DENOMINATORS[d], 2), "%", text[start : m.end()], start, m.end()))
    return out


def find_values(text: str, kinds: Iterable[str] | None = None) -> list[Value]:
    """All values in ``text`` of the given kinds (default: all but "number"), in order of appearance,
    non-overlapping."""
    wanted = _DEFAULT_KINDS if kinds is None else frozenset(kinds)
    if not text:
        return []
    fractions = _fraction_changes(text) if "percent" in wanted else []
    items = scan(text)
    if not items:
        return fractions
    if len(items) > 1:
        _link_ranges(text, items)
    _versions_in_context(text, items)
    out: list[Value] = []
    for i in items:
        kind = i.kind
        if fractions and any(f.start < i.end and i.start < f.end for f in fractions):
            continue  # "two" of "by two thirds" is the fraction's numerator, not a count
        if kind == "bare":
            if i.weak or i.after_name:
                continue
            kind = "number"
        if kind in wanted:
            out.append(Value(kind, i.amount, i.unit, text[i.start : i.end], i.start, i.end))
    if fractions:
        out = sorted(out + fractions, key=lambda v: v.start)
    return out


_EXACT_KINDS = frozenset({"date", "year", "version"})


def same_value(a: Value, b: Value) -> bool:
    """Same kind, unit and amount (within 0.5%; dates, years and versions exactly):
    "$410 million" == "410 million dollars" == "$410m"."""
    if a.kind != b.kind or a.unit != b.unit:
        return False
    if a.amount is None or b.amount is None:
        return a.amount is None and b.amount is None
    if a.kind in _EXACT_KINDS:
        return a.amount == b.amount
    x, y = a.amount, b.amount
    if x == y:
        return True
    return abs(x - y) <= 0.005 * max(abs(x), abs(y))
