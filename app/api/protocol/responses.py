"""The Responses API (POST /v1/responses): the request maps onto the chat request
(app/api/responses.py); the response object and the stream events follow the openai SDK's types
(openai.types.responses), with `grounding` added."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

from app.api.protocol.common import GroundingOptions, Wire
from app.api.protocol.grounding import GroundingOut

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


class ResponseUrlCitation(Wire):
    type: Literal["url_citation"]
    url: str
    title: str
    start_index: int = Field(..., description="Start of the cited sentence (with its markers) in text.")
    end_index: int = Field(..., description="End (exclusive) of the cited sentence in text.")


class OutputText(Wire):
    type: Literal["output_text"]
    text: str = Field(..., description="The answer, or the abstention's plain-language message.")
    annotations: list[ResponseUrlCitation] = Field(..., description="One url_citation per [n] marker.")
    logprobs: list[Any] = Field(..., max_length=0, description="Always empty.")


class OutputMessage(Wire):
    id: str
    type: Literal["message"]
    role: Literal["assistant"]
    status: Literal["in_progress", "completed", "incomplete"]
    content: list[OutputText]


class InputTokensDetails(Wire):
    cached_tokens: int
    cache_write_tokens: int


class OutputTokensDetails(Wire):
    reasoning_tokens: int


class ResponseUsage(Wire):
    input_tokens: int = Field(..., description="The input as sent (instructions and messages).")
    input_tokens_details: InputTokensDetails
    output_tokens: int = Field(..., description="The answer's tokens (never above max_output_tokens).")
    output_tokens_details: OutputTokensDetails
    total_tokens: int


class IncompleteDetails(Wire):
    reason: Literal["max_output_tokens", "content_filter"] = Field(
        ...,
        description="content_filter: a streamed answer failed a check after its first sentences were sent "
        "(grounding says which).",
    )


class ResponseErrorOut(Wire):
    code: Literal["server_error"]
    message: str


class TextFormat(Wire):
    type: Literal["text"]


class TextConfig(Wire):
    format: TextFormat


class ResponseObject(Wire):
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


class _Event(Wire):
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
