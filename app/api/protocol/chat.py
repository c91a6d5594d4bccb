"""The OpenAI chat-completions protocol: the request (POST /v1/chat/completions), the completion and
the stream chunks (`stream: true`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.api.protocol.common import GroundingOptions, Wire, omitted
from app.api.protocol.grounding import GroundingOut

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


# --- the completion and its stream chunks (response models: see common.py) -------------------


class UrlCitation(Wire):
    url: str
    title: str
    start_index: int = Field(..., description="Start of the cited sentence (with its markers) in content.")
    end_index: int = Field(..., description="End (exclusive) of the cited sentence in content.")


class Annotation(Wire):
    type: Literal["url_citation"]
    url_citation: UrlCitation


class ResponseMessage(Wire):
    role: Literal["assistant"]
    content: str = Field(..., description="The answer, or the abstention's plain-language message.")
    annotations: list[Annotation] = Field(..., description="One url_citation per [n] marker of a kept sentence.")
    refusal: str | None = Field(..., description="Always null: an abstention is an answer, not a refusal.")


class Choice(Wire):
    index: int
    message: ResponseMessage
    finish_reason: Literal["stop", "length"]
    logprobs: None


class Usage(Wire):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletionResponse(Wire):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[Choice] = Field(..., min_length=1, max_length=1)
    usage: Usage
    citations: list[str] = Field(..., description="citations[n-1] is the URL [n] points to.")
    grounding: GroundingOut


class ChunkDelta(Wire):
    role: Literal["assistant"] = omitted("On the first chunk only.")
    content: str = omitted("A sentence-sized piece of the answer ('' on the first chunk).")
    annotations: list[Annotation] = omitted(
        "On the last content chunk (the one with finish_reason), when the answer has citations."
    )


class ChunkChoice(Wire):
    index: int
    delta: ChunkDelta
    finish_reason: Literal["stop", "length", "content_filter"] | None = Field(
        ...,
        description="On the last content chunk. content_filter: a verified stream whose finished answer failed "
        "a check after its first sentences were sent (grounding says which: status abstained).",
    )


class ChatCompletionChunk(Wire):
    """One `data:` event of a `stream: true` answer (the stream ends with `data: [DONE]`)."""

    id: str
    object: Literal["chat.completion.chunk"]
    created: int
    model: str
    choices: list[ChunkChoice] = Field(..., max_length=1, description="Empty on the usage chunk.")
    citations: list[str] = omitted("On the last content chunk (the one with finish_reason).")
    grounding: GroundingOut = omitted("On the last content chunk (the one with finish_reason).")
    usage: Usage = omitted("On the last chunk, when stream_options.include_usage.")
