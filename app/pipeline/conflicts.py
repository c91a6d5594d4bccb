"""Conflicts: where sources give different values for what the question asks.

The question's analysis (app/language/question.py) decides the attribute — any value kind: price,
date, version, count, measure (of the asked dimension), percent; each source's evidence yields its
values of that kind, read by the one value parser (app/language/values); sources whose leading value
differs are in conflict.
"""

from __future__ import annotations

import re
from collections import Counter

from app.domain.types import Conflict, Evidence
from app.language.anchors import covered
from app.language.question import AskedKind, analyse
from app.language.text import split_sentences, terms
from app.language.values import Value, find_values
from app.language.values.units import of_dimension

# The asked kinds whose values can disagree, and the value kind each is read as.
ATTRIBUTES = {
    AskedKind.price: "price",
    AskedKind.date: "date",
    AskedKind.version: "version",
    AskedKind.count: "count",
    AskedKind.measure: "measure",
    AskedKind.percent: "percent",
}
_QUANTITIES = frozenset({"count", "measure", "percent"})
_CURRENCY_SIGNS = {"USD": "$", "EUR": "€", "GBP": "£"}
# A price's billing period is part of it: "$9.99/month" and "$9.99/year" are different prices.
_PERIOD = re.compile(r"^\s?(?:/|per|a|an)\s?(month|mo|year|yr|user|seat)\b", re.I)
_PERIOD_NAMES = {"mo": "month", "yr": "year"}
_PERIOD_LOOKAHEAD = 12  # characters after a price where its period may be written


def asked_attribute(question: str) -> str | None:
    """The value kind a question asks for, when values of it can be compared; else None."""
    return ATTRIBUTES.get(analyse(question).kind)


def _amount(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,.6g}"


def _label(v: Value, text: str) -> str | None:
    """One display form per value, whatever its surface form: "$49" = "$49.00" = "49 dollars"."""
    if v.kind == "price" and v.amount is not None:
        sign = _CURRENCY_SIGNS.get(v.unit)
        money = f"{sign}{_amount(v.amount)}" if sign else f"{_amount(v.amount)} {v.unit}".strip()
        period = _PERIOD.match(text[v.end : v.end + _PERIOD_LOOKAHEAD])
        return money + (f"/{_PERIOD_NAMES.get(period.group(1).lower(), period.group(1).lower())}" if period else "")
    if v.kind == "date":
        if v.unit != "day" or v.amount is None:
            return None  # "March 2020" and "March 3" are not the same precision as a full date
        n = int(v.amount)
        return f"{n // 10000:04d}-{n // 100 % 100:02d}-{n % 100:02d}"
    if v.kind == "version":
        return v.unit.lower().removeprefix("v") or None
    if v.amount is None:
        return None
    if v.kind == "percent":
        return f"{_amount(v.amount)}%"
    if v.kind == "measure":
        return f"{_amount(v.amount)} {v.unit}"
    return _amount(v.amount)


def values_in(kind: str, text: str, dimensions: frozenset[str] = frozenset()) -> list[str]:
    """The values of one kind a text states, as display labels in order of appearance; a measure
    only of the given dimensions (any when empty)."""
    out: list[str] = []
    for v in find_values(text, (kind,)):
        if kind == "measure" and dimensions and not of_dimension(v.unit, dimensions):
            continue
        label = _label(v, text)
        if label is not None:
            out.append(label)
    return out


def detect_conflicts(question: str, evidence: list[Evidence]) -> list[Conflict]:
    analysis = analyse(question)
    kind = ATTRIBUTES.get(analysis.kind)
    if kind is None:
        return []
    if kind in _QUANTITIES and not analysis.focus:
        # A page states many counts and durations; without the counted noun or measured dimension
        # named ("how many employees", "what is the range"), two of them are not one fact.
        return []
    q_terms = set(terms(question))
    per_source: dict[str, Counter] = {}
    spans: dict[tuple[str, str], list[str]] = {}
    for ev in evidence:
        # Only sentences that talk about the question's subject vote.
        for sentence in split_sentences(ev.text):
            words = set(terms(sentence))
            if len(q_terms & words) < min(2, len(q_terms)):
                continue
            if kind in _QUANTITIES and not any(covered(f, words) for f in analysis.focus):
                continue  # a quantity votes only beside what the question counts or measures
            for value in values_in(kind, sentence, analysis.dimensions):
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
