"""Conflicts: where sources give different values for what the question asks.

The question decides the attribute (price, version, date, number); each source's evidence yields
its candidate values of that kind; sources whose leading value differs are in conflict.
"""

from __future__ import annotations

import re
from collections import Counter

from app.domain.types import Conflict, Evidence
from app.language.text import terms

_MONTHS = "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
PATTERNS = {
    "price": re.compile(
        r"(?:[$€£]\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?(?:usd|eur|gbp|dollars|euros))(?:\s?(?:/|per)\s?(?:month|mo|year|yr|user|seat))?",
        re.I,
    ),
    "version": re.compile(r"\b(?:v(?:ersion)?\s?)?\d+\.\d+(?:\.\d+)?(?:[a-z]+\d*)?\b", re.I),
    "date": re.compile(
        rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}|(?:{_MONTHS})\.?\s+\d{{1,2}},?\s+\d{{4}}|\d{{1,2}}\s+(?:{_MONTHS})\.?\s+\d{{4}})\b",
        re.I,
    ),
}
_ASKS = [
    (
        "price",
        re.compile(
            r"\b(price|pricing|cost|costs|fee|per month|subscription)\b|\bhow much\b(?!.*\b(weigh|weight|heavy|"
            r"long|time|memory|storage|space|power|energy|data|ram|water|fuel)\b)",
            re.I,
        ),
    ),
    ("date", re.compile(r"\b(when|what date|release date|released on|date of)\b", re.I)),
    ("version", re.compile(r"\b(version|latest release|which release|what release)\b", re.I)),
]


def asked_attribute(question: str) -> str | None:
    for name, rx in _ASKS:
        if rx.search(question):
            return name
    return None


_UNIT = re.compile(r"(?:/|per)\s?(month|mo|year|yr|user|seat)", re.I)
_UNIT_NAMES = {"mo": "month", "yr": "year"}


def _normalise(kind: str, value: str) -> str:
    v = value.lower().replace(",", "").replace(" ", "")
    if kind == "version":
        return v.removeprefix("version").removeprefix("v")
    if kind == "price":
        # "$49", "$49.00" and "49 USD" are one price; the billing unit stays part of it.
        num = re.search(r"\d+(?:\.\d+)?", v)
        cur = (
            "$"
            if "$" in v or "usd" in v or "dollar" in v
            else "€"
            if "€" in v or "eur" in v
            else "£"
            if "£" in v or "gbp" in v
            else ""
        )
        unit = _UNIT.search(value)
        amount = f"{float(num.group(0)):.2f}".rstrip("0").rstrip(".") if num else v
        return f"{cur}{amount}" + (f"/{_UNIT_NAMES.get(unit.group(1).lower(), unit.group(1).lower())}" if unit else "")
    return v


def values_in(kind: str, text: str) -> set[str]:
    """The normalised values of one kind a text states."""
    return {_normalise(kind, m.group(0)) for m in PATTERNS[kind].finditer(text)}


def detect_conflicts(question: str, evidence: list[Evidence]) -> list[Conflict]:
    kind = asked_attribute(question)
    if kind is None:
        return []
    q_terms = set(terms(question))
    per_source: dict[str, Counter] = {}
    spans: dict[tuple[str, str], list[str]] = {}
    for ev in evidence:
        # Only sentences that talk about the question's subject vote.
        for sentence in re.split(r"(?<=[.!?])\s+", ev.text):
            if len(q_terms & set(terms(sentence))) < min(2, len(q_terms)):
                continue
            for m in PATTERNS[kind].finditer(sentence):
                value = _normalise(kind, m.group(0))
                per_source.setdefault(ev.domain, Counter())[value] += 1
                spans.setdefault((ev.domain, value), []).append(ev.span_id)
    # A source's leading value: its most frequent, ties to the first mentioned ("now $9.99, was $12.99").
    leading = {
        domain: max(counts, key=lambda v: (counts[v], -list(counts).index(v)))
        for domain, counts in per_source.items()
        if counts
    }
    if len(set(leading.values())) < 2:
        return []
    # Sources disagree only when neither mentions the other's value: a page that says "now $9.99,
    # was $12.99" agrees with one that says "$12.99 until May, now $9.99".
    disagree = any(
        leading[a] not in per_source[b] and leading[b] not in per_source[a] for a in leading for b in leading if a < b
    )
    if not disagree:
        return []
    by_value: dict[str, list[str]] = {}
    for domain, value in leading.items():
        by_value.setdefault(value, []).append(domain)
    ev_by_span = {e.span_id: e for e in evidence}
    values = []
    for value, domains in by_value.items():
        ids = sorted({s for d in domains for s in spans[(d, value)]}, key=lambda s: int(s[1:]))
        dates = [d for s in ids if (d := ev_by_span[s].published_at)]
        values.append(
            {
                "value": value,
                "span_ids": ids,
                "domains": sorted(domains),
                "urls": sorted({ev_by_span[s].url for s in ids}),
                "published_at": max(dates).isoformat() if dates else None,
                "primary": any(ev_by_span[s].primary for s in ids),
            }
        )
    return [Conflict(attribute=kind, values=values)]


def preferred_value(conflict: Conflict) -> dict:
    """The more authoritative (primary) and then more recent value."""
    return max(conflict.values, key=lambda v: (v["primary"], v["published_at"] or "", len(v["domains"])))


def keep_preferred(conflicts: list[Conflict], evidence: list[Evidence]) -> tuple[list[Evidence], list[Evidence]]:
    """Policy `prefer`: spans that only support a losing value leave the evidence, so neither the
    composer nor the extractive answer can state it. Returns (kept, dropped)."""
    losing: set[str] = set()
    for c in conflicts:
        best = preferred_value(c)
        for v in c.values:
            if v is not best:
                losing |= set(v["span_ids"]) - set(best["span_ids"])
    kept = [e for e in evidence if e.span_id not in losing]
    return kept, [e for e in evidence if e.span_id in losing]
