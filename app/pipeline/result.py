"""What the orchestrator hands back to the serving layer."""

from __future__ import annotations

from dataclasses import dataclass, field

from app import metrics
from app.domain.types import (
    AbstentionReason,
    Claim,
    Conflict,
    Document,
    Evidence,
    FetchedPage,
    GroundingStatus,
    Plan,
    Route,
    SearchOutcome,
    Selection,
)
from app.pipeline.answerability import Answerability
from app.pipeline.context import RunContext

MAX_ABSTENTION_LINKS = 20  # search results an abstention lists for the user to read themselves

ABSTENTION_MESSAGES = {
    AbstentionReason.no_search_results: "I could not find any search results for this question.",
    AbstentionReason.no_usable_pages: "I found search results, but none of the pages could be read.",
    AbstentionReason.insufficient_sources: "I found too few independent sources to answer this reliably.",
    AbstentionReason.no_primary_source: "I could not find a primary (official) source for this question.",
    AbstentionReason.stale_evidence: "The sources I found are too old to answer a time-sensitive question.",
    AbstentionReason.conflicting_evidence: "The sources disagree on this, so I will not pick an answer.",
    AbstentionReason.unsupported_answer: "I could not write an answer that the sources support.",
    AbstentionReason.invalid_citations: "The draft answer cited sources that do not exist, so it was withheld.",
    AbstentionReason.evidence_does_not_answer: "The sources I found do not answer this question.",
    AbstentionReason.upstream_unavailable: "A service I depend on is unavailable, so I cannot answer right now.",
    AbstentionReason.budget_exhausted: "The request's budget ran out before an answer could be grounded.",
}


@dataclass
class Abstention:
    reason: AbstentionReason
    failed_checks: list[str]
    queries_run: list[str]
    links_found: list[str]

    @property
    def message(self) -> str:
        return ABSTENTION_MESSAGES[self.reason]


@dataclass
class PipelineResult:
    ctx: RunContext
    status: GroundingStatus
    content: str
    composer: str
    route: Route
    plan: Plan | None = None
    search: SearchOutcome | None = None
    pages: list[FetchedPage] = field(default_factory=list)
    documents: list[Document] = field(default_factory=list)
    selection: Selection | None = None
    evidence: list[Evidence] = field(default_factory=list)
    cited: list[Evidence] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    dropped_claims: list[Claim] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    abstention: Abstention | None = None
    groundedness: float | None = None
    finish_reason: str = "stop"
    evidence_versions: dict[str, str] = field(default_factory=dict)  # page url -> content hash
    answerability: Answerability | None = None


def abstain(result: PipelineResult, reason: AbstentionReason, failed: list[str]) -> PipelineResult:
    result.status = GroundingStatus.abstained
    links = [h.url for h in (result.search.candidates if result.search else [])][:MAX_ABSTENTION_LINKS]
    result.abstention = Abstention(reason, failed, result.plan.queries if result.plan else [], links)
    result.content = result.abstention.message
    result.finish_reason = "stop"  # the message is whole, whatever cut the draft it replaces
    result.cited, result.claims = [], result.claims if result.claims else []
    metrics.ABSTENTIONS.labels(reason=reason.value).inc()
    return result
