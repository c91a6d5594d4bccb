"""Wire protocol: the OpenAI chat-completions request, the grounding options, the response.

Validation errors here become 400s in OpenAI's error shape (see app/api/errors.py). Imports no
provider and no stage.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

from app.domain.types import AbstentionReason, FetchReason, GroundingStatus

# Parameters accepted from the OpenAI body that this service cannot apply: ignored, and named in
# grounding.ignored_params so the caller knows.
IGNORABLE_PARAMS = (
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
    "logprobs",
    "top_logprobs",
    "parallel_tool_calls",
    "service_tier",
    "store",
    "reasoning_effort",
    "modalities",
    "prediction",
    "audio",
    "web_search_options",
    "prompt_cache_key",
    "safety_identifier",
    "verbosity",
)
_ALLOWED_PART_TYPES = ("text", "input_text")
_ROLES = ("system", "developer", "user", "assistant")


def domain_list(values: list[str]) -> list[str]:
    """'https://www.Example.com/x' -> 'example.com'; blanks and junk are refused."""
    from app.urls import normalize_domain

    out = [normalize_domain(d) for d in values]
    for d in out:
        if not d or " " in d:
            raise ValueError(f"not a domain: {d!r}")
    return list(dict.fromkeys(out))


class TextPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[TextPart] | None = None
    name: str | None = None

    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text or "" for p in self.content)


class GroundingOptions(BaseModel):
    """Per-request grounding controls. Unset fields take the server's configured defaults."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["auto", "always", "never"] = Field(
        "auto", description="auto: the router decides whether to search; always / never override."
    )
    freshness_days: int | None = Field(
        None,
        ge=1,
        le=3650,
        description="Evidence age window in days (1-3650). Default: from the planner "
        "(short for time-sensitive questions), else GA_DEFAULT_FRESHNESS_DAYS.",
    )
    include_domains: list[str] = Field(
        default_factory=list, max_length=50, description="Only these domains (and subdomains). Default: any."
    )
    exclude_domains: list[str] = Field(
        default_factory=list, max_length=50, description="Never these domains (and subdomains)."
    )
    primary_domains: list[str] = Field(
        default_factory=list,
        max_length=50,
        description="Official sources for the subject; boosted and "
        "required when require_primary. Default: GA_PRIMARY_DOMAINS.",
    )
    max_queries: int | None = Field(None, ge=1, le=4, description="Search queries planned (1-4). Default 3.")
    max_results: int | None = Field(None, ge=1, le=50, description="Results asked per query (1-50). Default 8.")
    max_fetches: int | None = Field(None, ge=0, le=20, description="Pages fetched (0-20). Default 6.")
    max_evidence: int | None = Field(
        None,
        ge=1,
        le=30,
        description="Most evidence spans shown to the composer (1-30); the token budget packs them. Default 20.",
    )
    token_budget: int | None = Field(
        None, ge=256, le=32000, description="Token budget of the evidence block (256-32000). Default 3000."
    )
    min_sources: int | None = Field(
        None, ge=1, le=10, description="Independent registrable domains required (1-10). Default 2."
    )
    require_primary: bool = Field(False, description="Abstain unless a primary source is among the evidence.")
    verification: Literal["drop", "flag", "off"] = Field(
        "drop", description="Unsupported sentences: drop them, flag them in grounding.claims, or skip checking."
    )
    on_conflict: Literal["surface", "prefer", "abstain"] = Field(
        "surface", description="When sources disagree: state both, prefer the authoritative/recent one, or abstain."
    )
    cache: Literal["use", "bypass", "refresh"] = Field("use", description="Cache policy for this request.")
    deadline_ms: int | None = Field(
        None, ge=500, le=120_000, description="Whole-request deadline (500-120000 ms). Default GA_DEADLINE_MS."
    )
    max_cost_usd: float | None = Field(None, ge=0, description="Stop before spending more than this (USD).")
    max_searches: int | None = Field(None, ge=0, le=40, description="Stop before more search calls than this.")

    @field_validator("include_domains", "exclude_domains", "primary_domains")
    @classmethod
    def _domains(cls, v: list[str]) -> list[str]:
        return domain_list(v)


class ChatCompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str | None = None
    messages: list[ChatMessage] = Field(..., min_length=1)
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    stop: str | list[str] | None = None
    seed: int | None = None
    user: str | None = None
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    metadata: dict[str, str] | None = None
    n: int | None = None
    tools: list[Any] | None = None
    functions: list[Any] | None = None
    tool_choice: Any = None
    function_call: Any = None
    response_format: dict[str, Any] | None = None
    grounding: GroundingOptions = Field(default_factory=GroundingOptions)

    @model_validator(mode="after")
    def _reject_unsupported(self) -> ChatCompletionRequest:
        from app.errors import InvalidRequest

        if self.n is not None and self.n > 1:
            raise InvalidRequest("n > 1 is not supported: a grounded answer has one choice", param="n")
        for name in ("tools", "functions"):
            if getattr(self, name):
                raise InvalidRequest(f"'{name}' is not supported by the grounded-answer service", param=name)
        for name in ("tool_choice", "function_call"):
            if getattr(self, name) not in (None, "none"):
                raise InvalidRequest(f"'{name}' is not supported by the grounded-answer service", param=name)
        if self.response_format and self.response_format.get("type", "text") != "text":
            raise InvalidRequest("only response_format {'type': 'text'} is supported", param="response_format")
        for i, msg in enumerate(self.messages):
            if msg.role not in _ROLES:
                raise InvalidRequest(
                    f"messages[{i}].role {msg.role!r} is not supported; use one of {', '.join(_ROLES)}",
                    param=f"messages[{i}].role",
                )
            if isinstance(msg.content, list):
                for j, part in enumerate(msg.content):
                    if part.type not in _ALLOWED_PART_TYPES:
                        raise InvalidRequest(
                            f"content part type {part.type!r} is not supported; only text",
                            param=f"messages[{i}].content[{j}]",
                        )
                    if part.text is None:
                        raise InvalidRequest("a text content part needs 'text'", param=f"messages[{i}].content[{j}]")
        users = [m for m in self.messages if m.role == "user"]
        if not users or not users[-1].text().strip():
            raise InvalidRequest("messages must contain a non-empty user turn", param="messages")
        return self

    def ignored_extras(self) -> list[str]:
        extras = set(self.model_extra or {})
        return sorted(extras)


# --- response (documented in OpenAPI; built as plain dicts on the hot path) -------------------
#
# These models are never instantiated on the answer path: app/api/render.py, sse.py, context.py
# and routes.py build the bodies as dicts. They describe those dicts exactly, for the published
# schema: every field that is always emitted is required (no defaults), nullable only where the
# code can emit null, and no model allows a field it does not declare (additionalProperties:
# false). tests/api/test_openapi_contract.py validates real responses against /openapi.json.


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def _omitted(description: str) -> Any:
    """A field that is sometimes left out of the body (never sent as null): not required, no default."""
    return Field(None, description=description, json_schema_extra=_no_default)


class UrlCitation(_Wire):
    url: str
    title: str
    start_index: int = Field(..., description="Start of the cited sentence (with its markers) in content.")
    end_index: int = Field(..., description="End (exclusive) of the cited sentence in content.")


class Annotation(_Wire):
    type: Literal["url_citation"]
    url_citation: UrlCitation


class ResponseMessage(_Wire):
    role: Literal["assistant"]
    content: str = Field(..., description="The answer, or the abstention's plain-language message.")
    annotations: list[Annotation] = Field(..., description="One url_citation per [n] marker of a kept sentence.")
    refusal: str | None = Field(..., description="Always null: an abstention is an answer, not a refusal.")


class Choice(_Wire):
    index: int
    message: ResponseMessage
    finish_reason: Literal["stop", "length"]
    logprobs: None


class Usage(_Wire):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class SourceOut(_Wire):
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


class ClaimOut(_Wire):
    text: str
    source_ids: list[int] = Field(..., description="Citation numbers [n] the sentence carries.")
    span_ids: list[str] = Field(..., description="Evidence span ids (S1, S2, ...) the sentence cites.")
    quote: str = Field(..., description="The best supporting sentence of the evidence.")
    supported: bool
    support_score: float = Field(..., description="Lexical support score.")
    factual: bool
    judged: bool | None = Field(..., description="The LLM judge's verdict when it was asked, else null.")


class AbstentionOut(_Wire):
    reason: AbstentionReason
    message: str
    failed_checks: list[str]
    queries_run: list[str]
    links_found: list[str]


class RouteOut(_Wire):
    needs_search: bool
    reason: str = Field(..., description="e.g. mode_always, time_sensitive, default_grounded, small_talk.")
    by: Literal["heuristic", "llm", "request"]


class ConflictValue(_Wire):
    value: str
    span_ids: list[str]
    domains: list[str]
    urls: list[str]
    published_at: str | None
    primary: bool


class ConflictOut(_Wire):
    attribute: str
    values: list[ConflictValue]
    policy: Literal["surface", "prefer", "abstain"]


class SelectionOut(_Wire):
    url: str
    decision: Literal["dropped", "edited"]
    reason: str = Field(
        ...,
        description="near_duplicate_of:<url>, domain_quota:<domain>, stale:<age>, "
        "exclude_domains, blocked_domains, include_domains, "
        "instructions_removed:<n>, conflict_not_preferred:<span>.",
    )


class FetchOut(_Wire):
    url: str = Field(..., description="The URL asked for.")
    final_url: str = Field(..., description="The URL after redirects.")
    outcome: FetchReason
    status: int = Field(..., description="HTTP status, 0 when no response was received.")


class TokenCount(_Wire):
    prompt: int
    completion: int


class CostOut(_Wire):
    usd: float
    tokens: dict[str, TokenCount] = Field(..., description="Tokens by model.")
    prompt_tokens: int
    completion_tokens: int
    search_calls: int
    fetches: int
    by_stage_usd: dict[str, float]
    cached: bool = _omitted("Present (true) only on an answer served from the answer cache, which costs 0.")
    original_usd: float = _omitted(
        "Present only on an answer served from the answer cache: what the run that produced it cost."
    )


CacheLayer = Literal["answer", "search", "page"]
CacheOutcome = Literal["hit", "miss", "coalesced", "revalidated", "partial"]


class GroundingOut(_Wire):
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


class ChatCompletionResponse(_Wire):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[Choice] = Field(..., min_length=1, max_length=1)
    usage: Usage
    citations: list[str] = Field(..., description="citations[n-1] is the URL [n] points to.")
    grounding: GroundingOut


class ChunkDelta(_Wire):
    role: Literal["assistant"] = _omitted("On the first chunk only.")
    content: str = _omitted("A sentence-sized piece of the answer ('' on the first chunk).")
    annotations: list[Annotation] = _omitted(
        "On the last content chunk (the one with finish_reason), when the answer has citations."
    )


class ChunkChoice(_Wire):
    index: int
    delta: ChunkDelta
    finish_reason: Literal["stop", "length"] | None


class ChatCompletionChunk(_Wire):
    """One `data:` event of a `stream: true` answer (the stream ends with `data: [DONE]`)."""

    id: str
    object: Literal["chat.completion.chunk"]
    created: int
    model: str
    choices: list[ChunkChoice] = Field(..., max_length=1, description="Empty on the usage chunk.")
    citations: list[str] = _omitted("On the last content chunk (the one with finish_reason).")
    grounding: GroundingOut = _omitted("On the last content chunk (the one with finish_reason).")
    usage: Usage = _omitted("On the last chunk, when stream_options.include_usage.")


class ErrorDetail(_Wire):
    message: str
    type: str = Field(..., description="invalid_request_error, authentication_error, upstream_error or server_error.")
    param: str | None
    code: str | None


class ErrorResponse(_Wire):
    """Every error, in OpenAI's shape."""

    error: ErrorDetail


class ModelCard(_Wire):
    id: str
    object: Literal["model"]
    created: int
    owned_by: str


class ModelList(_Wire):
    object: Literal["list"]
    data: list[ModelCard]


class ContextRequest(BaseModel):
    """POST /v1/context: evidence blocks for agents that compose themselves."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(..., min_length=1, max_length=2000, description="The question to gather evidence for.")
    token_budget: int = Field(4000, ge=256, le=32000, description="Upper bound of total_tokens (256-32000).")
    depth: int = Field(6, ge=1, le=20, description="Pages to read (1-20).")
    include_domains: list[str] = Field(default_factory=list, max_length=50)
    exclude_domains: list[str] = Field(default_factory=list, max_length=50)
    freshness_days: int | None = Field(None, ge=1, le=3650)
    cache: Literal["use", "bypass", "refresh"] = "use"

    @field_validator("include_domains", "exclude_domains")
    @classmethod
    def _domains(cls, v: list[str]) -> list[str]:
        return domain_list(v)

    @field_validator("query")
    @classmethod
    def _query(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("query must not be blank")
        return v.strip()


class ContextBlock(_Wire):
    text: str
    url: str
    title: str
    published_at: str | None
    score: float
    tokens: int = Field(..., description="Tokens of text (tiktoken).")
    also_reported_by: list[str]


class ContextResponse(_Wire):
    blocks: list[ContextBlock] = Field(..., description="Best first.")
    total_tokens: int = Field(..., description="Sum of the blocks' tokens; never above token_budget.")
    request_id: str
    queries: list[str]
    cost: CostOut


# --- the Responses API (POST /v1/responses) ----------------------------------------------------
#
# The request maps onto the chat request (app/api/responses.py); the response object and the
# stream events follow the openai SDK's types (openai.types.responses), with `grounding` added.

_INPUT_PART_TYPES = ("input_text", "output_text", "text")
_INPUT_ROLES = ("system", "developer", "user", "assistant")


class InputPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class InputItem(BaseModel):
    """A message item of `input`: {"role", "content"} (EasyInputMessage) or {"type": "message", ...}."""

    model_config = ConfigDict(extra="allow")
    type: str = "message"
    role: str | None = None
    content: str | list[InputPart] | None = None

    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text or "" for p in self.content)


class ResponsesRequest(BaseModel):
    """POST /v1/responses: OpenAI's Responses body (text in, text out) with the `grounding` extension."""

    model_config = ConfigDict(extra="allow")

    model: str | None = None
    input: str | list[InputItem] = Field(..., description="The question, or message items (earlier turns first).")
    instructions: str | None = Field(None, description="A system message placed before the input.")
    previous_response_id: str | None = Field(
        None, description="Continue the conversation of a stored response (same API key, within its TTL)."
    )
    stream: bool = False
    metadata: dict[str, str] | None = Field(None, description="Echoed on the response (16 pairs at most).")
    max_output_tokens: int | None = Field(
        None, ge=1, description="The answer is cut at a sentence boundary within it (status incomplete)."
    )
    store: bool = Field(True, description="Keep the response for GET /v1/responses/{id} (GA_RESPONSES_TTL_S).")
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    user: str | None = None
    background: bool | None = None
    tools: list[Any] | None = None
    tool_choice: Any = None
    text: dict[str, Any] | None = None
    grounding: GroundingOptions = Field(default_factory=GroundingOptions)

    @model_validator(mode="after")
    def _reject_unsupported(self) -> ResponsesRequest:
        from app.errors import InvalidRequest

        if self.background:
            raise InvalidRequest("background responses are not supported", param="background")
        if self.tools:
            raise InvalidRequest("'tools' is not supported by the grounded-answer service", param="tools")
        if self.tool_choice not in (None, "none", "auto"):
            raise InvalidRequest("'tool_choice' is not supported by the grounded-answer service", param="tool_choice")
        fmt = (self.text or {}).get("format") or {}
        if isinstance(fmt, dict) and fmt.get("type", "text") != "text":
            raise InvalidRequest("only text.format {'type': 'text'} is supported", param="text.format")
        if self.metadata is not None and len(self.metadata) > 16:
            raise InvalidRequest("metadata holds at most 16 pairs", param="metadata")
        items = [InputItem(role="user", content=self.input)] if isinstance(self.input, str) else self.input
        for i, item in enumerate(items):
            if item.type != "message":
                raise InvalidRequest(
                    f"input item type {item.type!r} is not supported; only messages", param=f"input[{i}].type"
                )
            if item.role not in _INPUT_ROLES:
                raise InvalidRequest(
                    f"input[{i}].role {item.role!r} is not supported; use one of {', '.join(_INPUT_ROLES)}",
                    param=f"input[{i}].role",
                )
            for j, part in enumerate(item.content if isinstance(item.content, list) else []):
                if part.type not in _INPUT_PART_TYPES or part.text is None:
                    raise InvalidRequest(
                        f"content part type {part.type!r} is not supported; only input_text",
                        param=f"input[{i}].content[{j}]",
                    )
        if not any(item.role == "user" and item.text().strip() for item in items[-1:]):
            raise InvalidRequest("input must end with a non-empty user message", param="input")
        return self

    def items(self) -> list[InputItem]:
        return [InputItem(role="user", content=self.input)] if isinstance(self.input, str) else list(self.input)


class ResponseUrlCitation(_Wire):
    type: Literal["url_citation"]
    url: str
    title: str
    start_index: int = Field(..., description="Start of the cited sentence (with its markers) in text.")
    end_index: int = Field(..., description="End (exclusive) of the cited sentence in text.")


class OutputText(_Wire):
    type: Literal["output_text"]
    text: str = Field(..., description="The answer, or the abstention's plain-language message.")
    annotations: list[ResponseUrlCitation] = Field(..., description="One url_citation per [n] marker.")
    logprobs: list[Any] = Field(..., max_length=0, description="Always empty.")


class OutputMessage(_Wire):
    id: str
    type: Literal["message"]
    role: Literal["assistant"]
    status: Literal["in_progress", "completed", "incomplete"]
    content: list[OutputText]


class InputTokensDetails(_Wire):
    cached_tokens: int
    cache_write_tokens: int


class OutputTokensDetails(_Wire):
    reasoning_tokens: int


class ResponseUsage(_Wire):
    input_tokens: int = Field(..., description="The input as sent (instructions and messages).")
    input_tokens_details: InputTokensDetails
    output_tokens: int = Field(..., description="The answer's tokens (never above max_output_tokens).")
    output_tokens_details: OutputTokensDetails
    total_tokens: int


class IncompleteDetails(_Wire):
    reason: Literal["max_output_tokens"]


class ResponseErrorOut(_Wire):
    code: Literal["server_error"]
    message: str


class TextFormat(_Wire):
    type: Literal["text"]


class TextConfig(_Wire):
    format: TextFormat


class ResponseObject(_Wire):
    """A `response`. In stream events before the answer (response.created, response.in_progress,
    response.failed) output is empty and usage and grounding are null."""

    id: str = Field(..., description="resp_…; GET /v1/responses/{id} returns it while stored.")
    object: Literal["response"]
    created_at: int
    status: Literal["in_progress", "completed", "incomplete", "failed"]
    error: ResponseErrorOut | None
    incomplete_details: IncompleteDetails | None
    instructions: str | None
    max_output_tokens: int | None
    model: str
    output: list[OutputMessage] = Field(..., max_length=1)
    parallel_tool_calls: bool
    previous_response_id: str | None
    temperature: float | None
    top_p: float | None
    tool_choice: Literal["none"]
    tools: list[Any] = Field(..., max_length=0)
    text: TextConfig
    truncation: Literal["disabled"]
    store: bool
    metadata: dict[str, str]
    user: str | None
    usage: ResponseUsage | None
    grounding: GroundingOut | None = Field(..., description="As on a chat completion; null until answered.")


class _Event(_Wire):
    sequence_number: int


class ResponseLifecycleEvent(_Event):
    type: Literal[
        "response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed"
    ]
    response: ResponseObject


class OutputItemEvent(_Event):
    type: Literal["response.output_item.added", "response.output_item.done"]
    output_index: int
    item: OutputMessage


class ContentPartEvent(_Event):
    type: Literal["response.content_part.added", "response.content_part.done"]
    item_id: str
    output_index: int
    content_index: int
    part: OutputText


class TextDeltaEvent(_Event):
    type: Literal["response.output_text.delta"]
    item_id: str
    output_index: int
    content_index: int
    delta: str
    logprobs: list[Any] = Field(..., max_length=0)


class AnnotationAddedEvent(_Event):
    type: Literal["response.output_text.annotation.added"]
    item_id: str
    output_index: int
    content_index: int
    annotation_index: int
    annotation: ResponseUrlCitation


class TextDoneEvent(_Event):
    type: Literal["response.output_text.done"]
    item_id: str
    output_index: int
    content_index: int
    text: str
    logprobs: list[Any] = Field(..., max_length=0)


class ResponseStreamEvent(
    RootModel[
        ResponseLifecycleEvent
        | OutputItemEvent
        | ContentPartEvent
        | TextDeltaEvent
        | AnnotationAddedEvent
        | TextDoneEvent
    ]
):
    """One server-sent event of a `stream: true` response (`event: <type>` and `data: <json>`)."""
