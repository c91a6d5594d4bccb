"""Gate: is there enough independent, fresh, relevant, non-conflicting evidence to answer?
A failed gate costs no composition call."""
from __future__ import annotations

import re
from datetime import date

from app.pipeline.context import RunContext
from app.pipeline.types import AbstentionReason, Conflict, Evidence, GateVerdict
from app.pipeline.anchors import about_a_sibling, asked_value_kind, covered, question_anchors, value_stated
from app.language.text import terms

# Share of the question's content terms the evidence must contain: with 3 terms all 3... 2 of 3,
# with 5 terms 4 — "most of what was asked is addressed" (see docs/ARCHITECTURE.md).
MIN_COVERAGE = 0.65


def check_gate(evidence: list[Evidence], conflicts: list[Conflict], question: str, freshness_days: int,
               time_sensitive: bool, ctx: RunContext, *, candidates: int, usable_pages: int,
               dropped_stale: int = 0) -> GateVerdict:
    opts = ctx.options
    if candidates == 0:
        return GateVerdict(False, AbstentionReason.no_search_results, ["search_results>0"])
    if usable_pages == 0:
        return GateVerdict(False, AbstentionReason.no_usable_pages, ["usable_pages>0"])
    if not evidence:
        if dropped_stale:
            return GateVerdict(False, AbstentionReason.stale_evidence,
                               [f"evidence_within_{3 * freshness_days}d ({dropped_stale} pages older)"])
        return GateVerdict(False, AbstentionReason.evidence_does_not_answer, ["relevant_evidence>0"])
    failed: list[tuple[AbstentionReason, str]] = []
    future = future_year_in_past_tense(question, ctx.today)
    if future:
        # "Who won the 2031 final?" asked in 2026: no evidence can report an outcome that has not happened.
        failed.append((AbstentionReason.evidence_does_not_answer, f"event_in_the_past ({future} is after today)"))
    anchors = question_anchors(question)
    # Each passage's terms once; a passage about a sibling model (the Vanta S2 for the S3) counts for
    # neither coverage nor the asked value.
    on_subject = [(e, pt) for e in evidence
                  if not about_a_sibling(pt := set(terms(f"{e.title} {e.section} {e.text}")), anchors)]
    cov, missing = question_coverage(terms(question), anchors, [pt for _, pt in on_subject])
    if missing:
        failed.append((AbstentionReason.evidence_does_not_answer, f"anchors_present (missing {', '.join(missing)})"))
    elif cov < MIN_COVERAGE:
        failed.append((AbstentionReason.evidence_does_not_answer, f"question_coverage>={MIN_COVERAGE} (got {cov:.2f})"))
    kind = asked_value_kind(question)
    if kind and not any(value_stated(question, kind, e.text) for e, _ in on_subject):
        # "How many employees…?" is not answered by pages that give no number at all.
        failed.append((AbstentionReason.evidence_does_not_answer, f"asked_value_present ({kind})"))
    domains = {e.domain for e in evidence}
    has_primary = any(e.primary for e in evidence)
    if len(domains) < opts.min_sources and not (has_primary and ctx.settings.primary_satisfies_min_sources):
        failed.append((AbstentionReason.insufficient_sources, f"independent_sources>={opts.min_sources} (got {len(domains)})"))
    if opts.require_primary and not has_primary:
        failed.append((AbstentionReason.no_primary_source, "primary_source_present"))
    if time_sensitive and not any(_fresh(e, ctx.today, freshness_days) for e in evidence):
        failed.append((AbstentionReason.stale_evidence, f"dated_evidence_within_{freshness_days}d"))
    if conflicts and opts.on_conflict == "abstain":
        failed.append((AbstentionReason.conflicting_evidence, f"no_conflict ({conflicts[0].attribute})"))
    if not failed:
        return GateVerdict(True)
    return GateVerdict(False, failed[0][0], [c for _, c in failed])


def _fresh(e: Evidence, today: date, window: int) -> bool:
    # Unknown age never counts as fresh.
    latest = max((d for d in (e.published_at, e.modified_at) if d is not None), default=None)
    return latest is not None and (today - latest).days <= window


def question_coverage(q_terms: list[str], anchors: list[str], passages: list[set[str]]) -> tuple[float, list[str]]:
    """(share of the question's terms the passages hold, anchors they lack). Counted over all the
    passages together, because a multi-hop answer joins passages ("made by Nimbus" + "Nimbus is
    based in Tampere"). Lexical: it catches evidence about something else, not a reversed meaning."""
    q = set(q_terms)
    found: set[str] = set().union(*passages)
    missing = sorted(a for a in anchors if not covered(a, found))
    if not q:
        return 1.0, missing
    return sum(covered(t, found) for t in q) / len(q), missing


_PAST_TENSE = re.compile(r"\b(won|did|was|were|happened|took place|released|launched|ended|finished|scored|"
                         r"elected|announced|reported|had)\b", re.I)
_YEAR = re.compile(r"\b(1[5-9]\d\d|2\d\d\d)\b")


def future_year_in_past_tense(question: str, today: date) -> int | None:
    """A year after today's in a question that asks, in the past tense, what happened."""
    if not _PAST_TENSE.search(question):
        return None
    future = [int(y) for y in _YEAR.findall(question) if int(y) > today.year]
    return max(future) if future else None
