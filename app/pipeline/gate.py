"""Gate: is there enough independent, fresh, relevant, non-conflicting evidence to answer?
A failed gate costs no composition call."""
from __future__ import annotations

import re
from datetime import date

from app.pipeline.context import RunContext
from app.pipeline.types import AbstentionReason, Conflict, Evidence, GateVerdict
from app.text import STOP_WORDS, terms

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
    cov, missing = question_coverage(terms(question), anchors, evidence)
    if missing:
        failed.append((AbstentionReason.evidence_does_not_answer, f"anchors_present (missing {', '.join(missing)})"))
    elif cov < MIN_COVERAGE:
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


def _covered(term: str, passage_terms: set[str]) -> bool:
    # "3.11" is covered by "3.11.0": versions and numbers match on a dotted prefix.
    return term in passage_terms or (term[:1].isdigit() and any(t.startswith(term + ".") for t in passage_terms))


def question_coverage(q_terms: list[str], anchors: list[str], evidence: list[Evidence]) -> tuple[float, list[str]]:
    """(share of the question's terms the evidence holds, anchors it lacks). Counted over all the
    evidence together, because a multi-hop answer joins passages ("made by Nimbus" + "Nimbus is
    based in Tampere"). Lexical: it catches evidence about something else, not a reversed meaning."""
    q = set(q_terms)
    found: set[str] = set()
    for e in evidence:
        found |= set(terms(f"{e.title} {e.section} {e.text}"))
    missing = sorted(a for a in anchors if not _covered(a, found))
    if not q:
        return 1.0, missing
    return sum(_covered(t, found) for t in q) / len(q), missing


_PAST_TENSE = re.compile(r"\b(won|did|was|were|happened|took place|released|launched|ended|finished|scored|"
                         r"elected|announced|reported|had)\b", re.I)
_YEAR = re.compile(r"\b(1[5-9]\d\d|2\d\d\d)\b")


def future_year_in_past_tense(question: str, today: date) -> int | None:
    """A year after today's in a question that asks, in the past tense, what happened."""
    if not _PAST_TENSE.search(question):
        return None
    future = [int(y) for y in _YEAR.findall(question) if int(y) > today.year]
    return max(future) if future else None


_NUMBER_ANCHOR = re.compile(r"\b(?:1[5-9]|2[0-9])\d\d\b|\b\d+(?:\.\d+)+\b")


def question_anchors(question: str) -> list[str]:
    """Terms an answer cannot do without: years, version numbers and names (capitalised words
    after the first). Evidence about Python 3.10 does not answer a question about 3.12, nor does
    the 2029 final answer 2031's."""
    found = set(_NUMBER_ANCHOR.findall(question))
    tokens = re.findall(r"[\w.+#-]+", question)
    for tok in tokens[1:]:
        if any(c.isupper() for c in tok) and tok.lower() not in STOP_WORDS:
            found.update(terms(tok))
    return sorted(found)
