"""Gate: structural checks only — results found, usable pages, freshness window, independent
sources, primary source, conflict policy. A failed gate costs no composition call. Whether the
evidence answers the question is not decided here but by the answerability component
(app/pipeline/answerability.py), the composer and verification."""

from __future__ import annotations

from datetime import date

from app.domain.types import AbstentionReason, Conflict, Evidence, GateVerdict
from app.pipeline.context import RunContext
from app.pipeline.select import STALE_WINDOWS


def check_gate(
    evidence: list[Evidence],
    conflicts: list[Conflict],
    question: str,
    freshness_days: int,
    time_sensitive: bool,
    ctx: RunContext,
    *,
    candidates: int,
    usable_pages: int,
    dropped_stale: int = 0,
) -> GateVerdict:
    opts = ctx.options
    if candidates == 0:
        return GateVerdict(False, AbstentionReason.no_search_results, ["search_results>0"])
    if usable_pages == 0:
        return GateVerdict(False, AbstentionReason.no_usable_pages, ["usable_pages>0"])
    if not evidence:
        if dropped_stale:
            return GateVerdict(
                False,
                AbstentionReason.stale_evidence,
                [f"evidence_within_{STALE_WINDOWS * freshness_days}d ({dropped_stale} pages older)"],
            )
        return GateVerdict(False, AbstentionReason.evidence_does_not_answer, ["relevant_evidence>0"])
    failed: list[tuple[AbstentionReason, str]] = []
    domains = {e.domain for e in evidence}
    has_primary = any(e.primary for e in evidence)
    if len(domains) < opts.min_sources and not (has_primary and ctx.settings.primary_satisfies_min_sources):
        failed.append(
            (AbstentionReason.insufficient_sources, f"independent_sources>={opts.min_sources} (got {len(domains)})")
        )
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
