"""Typed data passed between pipeline stages.

Internal data are plain dataclasses (cheap to build on the hot path); the wire protocol lives in
app/api/protocol/ and is built from these at the edge.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any


class GroundingStatus(str, enum.Enum):
    grounded = "grounded"
    abstained = "abstained"
    ungrounded = "ungrounded"


class AbstentionReason(str, enum.Enum):
    """The closed set of reasons an answer is withheld (documented in docs/API.md)."""

    no_search_results = "no_search_results"
    no_usable_pages = "no_usable_pages"
    insufficient_sources = "insufficient_sources"
    no_primary_source = "no_primary_source"
    stale_evidence = "stale_evidence"
    conflicting_evidence = "conflicting_evidence"
    unsupported_answer = "unsupported_answer"
    invalid_citations = "invalid_citations"
    evidence_does_not_answer = "evidence_does_not_answer"
    upstream_unavailable = "upstream_unavailable"
    budget_exhausted = "budget_exhausted"


class FetchReason(str, enum.Enum):
    """Why a page was (not) used. Bounded: these are metric label values."""

    ok = "ok"
    not_modified = "not_modified"
    cached = "cached"
    from_provider = "from_provider"
    robots = "robots"
    blocked_address = "blocked_address"
    blocked_scheme = "blocked_scheme"
    blocked_port = "blocked_port"
    timeout = "timeout"
    too_large = "too_large"
    too_many_redirects = "too_many_redirects"
    unsupported_type = "unsupported_type"
    http_error = "http_error"
    network_error = "network_error"
    empty_extraction = "empty_extraction"
    skipped = "skipped"


# --- route / plan ---------------------------------------------------------------------------


@dataclass(slots=True)
class Route:
    needs_search: bool
    reason: str  # e.g. "mode_always", "time_sensitive", "text_transformation"
    by: str = "heuristic"  # heuristic | llm | request


@dataclass(slots=True)
class Plan:
    queries: list[str]
    freshness_days: int
    question: str  # the standalone question the answer must address
    by: str = "heuristic"  # heuristic | llm
    needs_search: bool = True  # the LLM planner's view; settles routes the heuristics left unclear


# --- search ---------------------------------------------------------------------------------


@dataclass(slots=True)
class SearchHit:
    url: str
    title: str = ""
    snippet: str = ""
    rank: int = 0  # 0-based rank inside the provider's answer to one query
    provider: str = ""
    published_at: datetime | None = None
    # Providers that hold the document itself (local corpus, Tavily raw_content) put it here so the
    # fetch stage does not go to the network for it.
    raw_content: str | None = None
    raw_content_type: str = "text/html"
    # content_digest(raw_content) when the provider has it at hand (the local corpus stores it):
    # the extraction memo is looked up by it, without encoding and hashing the document again.
    raw_content_digest: str | None = None
    primary: bool = False
    queries: list[str] = field(default_factory=list)
    # A page the provider holds but did not hand over (the local corpus): how to read it. The fetch
    # stage calls it only when the extraction memo lacks the page (a 4 MB page read per answer, only to
    # find its extraction remembered, cost ~1 ms each). Not serialised.
    read_page: Callable[[], Awaitable[tuple[str, str] | None]] | None = field(default=None, repr=False, compare=False)

    @property
    def held(self) -> bool:
        """The provider holds this page: it is read from there, never fetched."""
        return self.raw_content is not None or self.read_page is not None


def content_digest(text: str) -> str:
    """The name of a provider-held document's content: SHA-256 of its UTF-8."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(slots=True)
class SearchResult:
    """One provider's answer to one query."""

    provider: str
    query: str
    hits: list[SearchHit]
    unresponsive_engines: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0


@dataclass(slots=True)
class SearchOutcome:
    """The search stage's output: merged, deduplicated candidates, best first."""

    candidates: list[SearchHit]
    results: list[SearchResult]
    calls: int = 0
    errors: list[str] = field(default_factory=list)
    filtered: dict[str, int] = field(default_factory=dict)  # filter name -> results removed


# --- fetch / extract ------------------------------------------------------------------------


@dataclass(slots=True)
class FetchedPage:
    url: str  # final URL after redirects
    requested_url: str
    reason: FetchReason
    status: int = 0
    content_type: str = ""
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased names
    fetched_at: datetime | None = None
    elapsed_ms: float = 0.0
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.reason in (FetchReason.ok, FetchReason.from_provider, FetchReason.not_modified, FetchReason.cached)


@dataclass(slots=True)
class TextBlock:
    kind: str  # "heading" | "paragraph" | "list" | "pre" | "table"
    text: str
    level: int = 0  # heading level (1-6), 0 otherwise


@dataclass(slots=True)
class PageDates:
    published: date | None = None
    modified: date | None = None
    source: str = "unknown"  # json-ld | meta | time | byline | http-last-modified | text | unknown


@dataclass(slots=True)
class Document:
    """One extracted page."""

    url: str
    title: str
    domain: str  # registrable domain
    blocks: list[TextBlock]
    dates: PageDates
    fetched_at: datetime | None
    content_hash: str
    rank: int  # best candidate rank (project ranking), lower is better
    primary: bool = False
    density: float = 1.0  # extracted text / page text; low means an empty shell
    via: str = "page"  # "page" (fetched and extracted) | "snippet" (the search engine's snippet, not read)

    @property
    def text(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)


# --- evidence -------------------------------------------------------------------------------


@dataclass(slots=True)
class Evidence:
    """A passage selected to be shown to the composer, addressed as [S<n>]."""

    span_id: str  # "S1", "S2", ...
    url: str
    title: str
    domain: str
    text: str
    published_at: date | None
    date_source: str
    fetched_at: datetime | None
    score: float
    primary: bool
    tokens: int
    also_reported_by: list[str] = field(default_factory=list)
    section: str = ""  # the heading the passage sits under
    kind: str = "prose"  # "prose" | "code"
    via: str = "page"  # "snippet" when the page was not read (see Document.via)
    modified_at: date | None = None  # the page's last-modified date, when it says
    # The score without a reranker's view (None: no reranker ran): answerability's passage feature was
    # fitted on lexical scores, so a reranker chooses the evidence without shifting that feature.
    lexical_score: float | None = None

    @property
    def answer_score(self) -> float:
        """The passage score answerability reads (see lexical_score)."""
        return self.score if self.lexical_score is None else self.lexical_score


@dataclass(slots=True)
class SelectionDecision:
    url: str
    decision: str  # kept | dropped
    reason: str  # e.g. "duplicate_of:<url>", "domain_quota", "stale", "budget", "low_score"


@dataclass(slots=True)
class Selection:
    evidence: list[Evidence]
    decisions: list[SelectionDecision]
    prompt_tokens: int = 0


@dataclass(slots=True)
class Conflict:
    attribute: str
    values: list[dict[str, Any]]  # [{"value": ..., "span_ids": [...], "urls": [...], "published_at": ...}]


@dataclass(slots=True)
class GateVerdict:
    passed: bool
    reason: AbstentionReason | None = None
    failed_checks: list[str] = field(default_factory=list)


# --- compose / cite / verify ----------------------------------------------------------------


@dataclass(slots=True)
class Draft:
    text: str
    composer: str  # "extractive" | "llm:<model>"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""
    no_answer: bool = False  # the composer found no answer in the evidence (the contract's NO_ANSWER)
    # max_tokens ended it: the model stopped at the limit, or the extractive composer left a sentence out
    truncated: bool = False


@dataclass(slots=True)
class Claim:
    text: str
    span_ids: list[str]  # evidence span ids ("S1") the sentence cites
    markers: list[int]  # citation numbers in the final answer
    quote: str = ""
    supported: bool = False
    support: float = 0.0
    factual: bool = True
    start: int = 0  # offsets in the final content
    end: int = 0
    judged: bool | None = None  # the entailment model's or the LLM judge's verdict when one settled it, else None
    judged_by: str | None = None  # who settled it: "entailment" (app/pipeline/entail.py) or "llm" (the judge)
    decisive: bool = True  # the lexical scorer settled it; False sends it to the judge


@dataclass(slots=True)
class CitedAnswer:
    content: str
    claims: list[Claim]
    dropped_claims: list[Claim]
    cited: list[Evidence]  # cited[n-1] is what [n] points to
    invalid_refs: list[str] = field(default_factory=list)
    removed_urls: int = 0
