"""Gate: is there enough independent, fresh, relevant, non-conflicting evidence to answer?
A failed gate costs no composition call."""
from __future__ import annotations

from datetime import date

from app.pipeline.context import RunContext
from app.pipeline.types import AbstentionReason, Conflict, Evidence, GateVerdict
from app.text import terms

MIN_COVERAGE = 0.5  # share of the question's content terms the evidence must contain


def check_gate(evidence: list[Evidence], conflicts: list[Conflict], question: str, freshness_days: int,
               time_sensitive: bool, ctx: RunContext, *, candidates: int, usable_pages: int) -> GateVerdict:
    opts = ctx.options
    if candidates == 0:
        return GateVerdict(False, AbstentionReason.no_search_results, ["search_results>0"])
    if usable_pages == 0:
        return GateVerdict(False, AbstentionReason.no_usable_pages, ["usable_pages>0"])
    if not evidence:
        return GateVerdict(False, AbstentionReason.evidence_does_not_answer, ["relevant_evidence>0"])
    failed: list[tuple[AbstentionReason, str]] = []
    q_terms = terms(question)
    cov = _coverage(q_terms, evidence)
    if cov < MIN_COVERAGE:
        failed.append((AbstentionReason.evidence_does_not_answer, f"question_coverage>={MIN_COVERAGE} (got {cov:.2f})"))
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
    return e.published_at is not None and (today - e.published_at).days <= window


def _coverage(q_terms: list[str], evidence: list[Evidence]) -> float:
    q = set(q_terms)
    if not q:
        return 1.0
    seen: set[str] = set()
    for e in evidence:
        seen |= q & set(terms(e.text + " " + e.title))
    return len(seen) / len(q)
