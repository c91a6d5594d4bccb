"""Numbers for the support scorer (app/language/support.py): every number of a claim must be in the
passages ("1,200" = "1200", "$410m" = "$410 million", "2-1" as a whole), and a number bound to a noun
("12 rebounds") must not be one the passages give another number for; app.language.values is a
second opinion for forms the digits miss ("two hours")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.language.support_terms import norm_apostrophes, norm_number, token_terms

if TYPE_CHECKING:
    from app.language.support_passages import Passage

_MULT = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "mln": 1e6,
    "million": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "tn": 1e12,
    "trillion": 1e12,
}
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*(?:-\d+)*")  # "27,934.02", and hyphen groups "2-1", "14-0-1", "787-9"
_MAGNITUDE = re.compile(r" ?(k|thousand|mn|mln|million|bn|billion|tn|trillion|m|b)\b")
# the word a number counts ("11 rebounds", "$2.53 in per-share earnings"): after an optional unit
# sign and one optional small word
_COUNTED = re.compile(r"(?:%| ?percent| per cent)? (?:(?:a|an|the|in|of|to|for|at|per|on) )?([a-z][a-z'-]*)")
_NOT_COUNTED = frozenset(_MULT) | {"percent", "per", "cent"}


@dataclass(slots=True)
class Numbers:
    raw: frozenset[str]  # normalised mantissas
    scaled: frozenset[float]  # mantissa x magnitude ("$6.5bn" -> 6.5e9; a bare number as itself)
    scores: frozenset[str]  # hyphenated groups ("2-1")
    items: list[tuple[str, float | None]]  # (mantissa, scaled or None), in order
    bound: dict[str, frozenset[str]]  # counted word's term -> the numbers written before it


def find_numbers(text: str) -> Numbers:
    low = norm_apostrophes(text).lower()
    raw: set[str] = set()
    scaled: set[float] = set()
    scores: set[str] = set()
    items: list[tuple[str, float | None]] = []
    bound: dict[str, set[str]] = {}
    size = len(low)
    for m in _DIGITS.finditer(low):
        a, b = m.span()
        if a and (low[a - 1].isalnum() or low[a - 1] in "._"):
            continue  # inside a word or a dotted code: "clc1", "a350", ".0100"
        if b < size and (low[b].isalnum() or low[b] == "_"):
            mag = _MAGNITUDE.match(low, b)
            if not mag or "-" in m.group():
                continue  # "5th", "787x"
        else:
            mag = _MAGNITUDE.match(low, b) if b < size else None
        g = m.group()
        if "-" in g:
            parts = g.split("-")
            iso_date = len(parts) == 3 and len(parts[0]) == 4 and all(len(x) <= 2 for x in parts[1:])
            if all(len(x) <= 3 for x in parts):
                scores.add(g)  # a score, record or model number ("2-1", "14-0-1", "787-9"): kept whole
            for k, part in enumerate(parts):
                mant = norm_number(part)
                raw.add(mant)
                if mant.count(".") <= 1:
                    scaled.add(round(float(mant), 3))
                if not (iso_date and k == 1):  # the month of 2019-11-19 may be written as a name
                    items.append((mant, None))
            continue
        mant = norm_number(g)
        if mant.count(".") > 1:  # a version ("5.4.2"): compared as written, never as an amount
            raw.add(mant)
            items.append((mant, None))
            continue
        mult = _MULT[mag.group(1)] if mag else None
        value = round(float(mant) * mult, 3) if mult else None
        raw.add(mant)
        scaled.add(value if value is not None else round(float(mant), 3))
        items.append((mant, value))
        counted = _COUNTED.match(low, mag.end() if mag else b)
        if counted and counted.group(1) not in _NOT_COUNTED:
            ws = token_terms(counted.group(1).rstrip("'-"))
            if ws:
                bound.setdefault(ws[0], set()).add(mant)
    return Numbers(
        frozenset(raw), frozenset(scaled), frozenset(scores), items, {w: frozenset(v) for w, v in bound.items()}
    )


_VALUES_MODULE: object | None = None
_VALUES_TRIED = False


def _values():
    """app.language.values (find_values/same_value) when it exists; None otherwise."""
    global _VALUES_MODULE, _VALUES_TRIED
    if not _VALUES_TRIED:
        _VALUES_TRIED = True
        try:
            from app.language import values as mod  # noqa: PLC0415 -- optional, written separately

            if callable(getattr(mod, "find_values", None)) and callable(getattr(mod, "same_value", None)):
                _VALUES_MODULE = mod
        except Exception:  # noqa: BLE001 -- absent or broken: digit matching alone
            _VALUES_MODULE = None
    return _VALUES_MODULE


def number_problems(claim: str, ps: list[Passage]) -> tuple[list[str], list[str]]:
    """(reasons, the claim's numbers): every number must be in the passages; a number bound to a
    noun must not be one the passages give another number for."""
    cn = find_numbers(claim)
    if not cn.items and not cn.scores:
        return [], []
    raw: set[str] = set()
    scaled: set[float] = set()
    scores: set[str] = set()
    for p in ps:
        pn = p.numbers
        raw |= pn.raw
        scaled |= pn.scaled
        scores |= pn.scores
    out: list[str] = []
    for mant, value in cn.items:
        ok = (
            (value in scaled)
            if value is not None
            else (mant in raw or (mant.count(".") <= 1 and round(float(mant), 3) in scaled))
        )
        if not ok and not _values_agree(claim, mant, value, ps):
            out.append(f"number_missing:{mant}")
    for s in sorted(cn.scores):
        if s not in scores and not _range_written_out(s, ps):
            out.append(f"number_missing:{s}")
    if not out and cn.bound:
        for w, nums in cn.bound.items():
            known: set[str] = set()
            for p in ps:
                known |= p.numbers.bound.get(w, frozenset())
            extra = nums - known
            if known and extra:
                out.append(f"number_mismatch:{min(extra)} {w}")
                break
    return out, sorted({mant for mant, _ in cn.items})


def _range_written_out(group: str, ps: list[Passage]) -> bool:
    """A two-number group of the claim ("20-30") written as a range in a passage ("20 to 30")."""
    parts = group.split("-")
    if len(parts) != 2:
        return False
    rx = re.compile(
        r"(?<![\d.,])"
        + re.escape(parts[0])
        + r"(?:%| ?percent)?\s*(?:\u2013|to|and|through)\s*"
        + re.escape(parts[1])
        + r"(?![\d])"
    )
    return any(rx.search(p.text) for p in ps)


def _values_agree(claim: str, mant: str, value: float | None, ps: list[Passage]) -> bool:
    """Second opinion from app.language.values, when it exists: the same value written another way
    ("two hours"), the passage's amount within the rounding of the claim's ("$0.45m" for "$449,000")."""
    mod = _values()
    if mod is None or (
        value is None and ("." in mant or float(mant) > 100)
    ):  # "." first: "5.4.2" never reaches float()
        return False  # only small counts ("two hours") and amounts with a magnitude can be written otherwise
    try:
        target = value if value is not None else float(mant)
        decimals = len(mant.partition(".")[2])
        tolerance = 0.5 * 10**-decimals * (target / float(mant) if float(mant) else 1.0) + 1e-9
        mine = [
            v
            for v in mod.find_values(claim)
            if v.amount is not None
            and (
                abs(v.amount - target) <= 1e-9 * max(1.0, abs(target))
                or abs(v.amount - float(mant)) <= 1e-9 * max(1.0, float(mant))
            )
        ]
        if not mine:
            return False
        for p in ps:
            for pv in p.values(mod):
                for v in mine:
                    if pv.amount is not None and mod.same_value(v, pv) and abs(pv.amount - v.amount) <= tolerance:
                        return True
    except Exception:  # noqa: BLE001 -- a second opinion must never break scoring
        return False
    return False
