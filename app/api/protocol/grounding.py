"""The `grounding` object of an answer (a chat completion, its last stream chunk, a response): the
route, queries, sources, claims, conflicts, abstention, fetches, cost, cache outcomes and timings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from app.api.protocol.common import Wire, omitted
from app.domain.types import AbstentionReason, FetchReason, GroundingStatus


class SourceOut(Wire):
    id: int | None = Field(..., description="Citation number [n] when cited, else null")
    span_id: str
    url: str
    title: str
    domain: str = Field(..., description="Registrable domain.")
    published_at: str | None = Field(..., description="ISO date, or null when the page is undated.")
    date_source: str = Field(
        ..., description="Where the date came from: json-ld, meta, time, byline, http-last-modified, text, unknown."
    )
    fetched_at: str | None = Field(..., description="ISO timestamp of the fetch, or null.")
    score: float
    primary: bool
    also_reported_by: list[str] = Field(..., description="URLs of near-duplicate copies folded into this source.")
    via: Literal["page", "snippet"] = Field(
        ..., description="page: fetched and extracted; snippet: a primary source's search snippet, the page not read."
    )


class ClaimOut(Wire):
    text: str
    source_ids: list[int] = Field(..., description="Citation numbers [n] the sentence carries.")
    span_ids: list[str] = Field(..., description="Evidence span ids (S1, S2, ...) the sentence cites.")
    quote: str = Field(..., description="The best supporting sentence of the evidence.")
    supported: bool
    support_score: float = Field(..., description="Lexical support score.")
    factual: bool
    judged: bool | None = Field(
        ...,
        description="The verdict of the entailment model or the LLM judge when one settled the sentence "
        "(the lexical check could not), else null.",
    )
    judged_by: Literal["entailment", "llm"] | None = Field(
        ..., description="Who settled it: the local entailment model or the LLM judge; null: the lexical check."
    )


class AbstentionOut(Wire):
    reason: AbstentionReason
    message: str
    failed_checks: list[str]
    queries_run: list[str]
    links_found: list[str]


class RouteOut(Wire):
    needs_search: bool
    reason: str = Field(..., description="e.g. mode_always, time_sensitive, default_grounded, small_talk.")
    by: Literal["heuristic", "llm", "request"]


class ConflictValue(Wire):
    value: str
    span_ids: list[str]
    domains: list[str]
    urls: list[str]
    published_at: str | None
    primary: bool


class ConflictOut(Wire):
    attribute: str
    values: list[ConflictValue]
    policy: Literal["surface", "prefer", "abstain"]


class SelectionOut(Wire):
    url: str
    decision: Literal["dropped", "edited"]
    reason: str = Field(
        ...,
        description="near_duplicate_of:<url>, domain_quota:<domain>, stale:<age>, "
        "exclude_domains, blocked_domains, include_domains, "
        "instructions_removed:<n>, conflict_not_preferred:<span>.",
    )


class FetchOut(Wire):
    url: str = Field(..., description="The URL asked for.")
    final_url: str = Field(..., description="The URL after redirects.")
    outcome: FetchReason
    status: int = Field(..., description="HTTP status, 0 when no response was received.")


class TokenCount(Wire):
    prompt: int
    completion: int


class CostOut(Wire):
    usd: float
    tokens: dict[str, TokenCount] = Field(..., description="Tokens by model.")
    prompt_tokens: int
    completion_tokens: int
    search_calls: int
    fetches: int
    by_stage_usd: dict[str, float]
    cached: bool = omitted("Present (true) only on an answer served from the answer cache, which costs 0.")
    original_usd: float = omitted(
        "Present only on an answer served from the answer cache: what the run that produced it cost."
    )


CacheLayer = Literal["answer", "search", "page"]
CacheOutcome = Literal["hit", "miss", "coalesced", "revalidated", "partial"]


class GroundingOut(Wire):
    status: GroundingStatus
    composer: str = Field(..., description="extractive, llm:<model>, extractive:fallback, extractive:budget.")
    route: RouteOut
    queries: list[str]
    freshness_days: int | None
    sources: list[SourceOut]
    claims: list[ClaimOut]
    dropped_claims: list[ClaimOut]
    conflicts: list[ConflictOut]
    abstention: AbstentionOut | None
    groundedness: float | None
    filtered: dict[str, int] = Field(..., description="Search results removed by code, by filter.")
    selection: list[SelectionOut] = Field(..., description="Pages dropped or edited during selection.")
    search_errors: list[str] = Field(..., description="Providers that failed or were skipped, and why.")
    fallbacks: list[dict[str, str | int]] = Field(
        ...,
        description="Fallbacks used, in order: {stage: search | compose, from: the provider or model that failed, "
        "failed fast or found nothing, to: the provider, model or `extractive` asked instead, reason, count}.",
    )
    fetches: list[FetchOut]
    cost: CostOut
    cache: dict[CacheLayer, CacheOutcome] = Field(..., description="Cache outcome per layer.")
    timings_ms: dict[str, float] = Field(..., description="Per stage, and total.")
    ignored_params: list[str]
    request_id: str
