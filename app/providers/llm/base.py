"""Chat-model provider protocol and registry (OpenAI-compatible backends register as "openai")."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from app.language.text import well_formed

if TYPE_CHECKING:
    from app.settings import Settings


@dataclass(slots=True)
class Completion:
    text: str
    model: str
    prompt_tokens: int | None = None  # None when the upstream sent no usage
    completion_tokens: int | None = None
    finish_reason: str = "stop"
    requested: str = ""  # the model the call asked for (what the cost is booked at when it has a price)


class CompletionStream(Protocol):
    """A completion read as it is written: `async for delta in stream` gives text deltas; after the
    last one, `completion` holds the whole (text, model, usage when the upstream sent it,
    finish_reason). `aclose()` closes the upstream response at once (a reader that stops early
    must call it, so nothing more is generated for nobody). Reading raises ProviderTechnicalError
    when the upstream fails mid-stream."""

    @property
    def completion(self) -> Completion: ...

    def __aiter__(self) -> AsyncIterator[str]: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class ChatModel(Protocol):
    name: str

    async def complete(
        self,
        messages: list[dict],
        *,
        model: str,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        timeout: float | None = None,
        json_mode: bool = False,
        extra: dict | None = None,
    ) -> Completion:
        """Raise ProviderTechnicalError (retryable) or ProviderLogicalError (fail now)."""
        ...

    async def stream(
        self,
        messages: list[dict],
        *,
        model: str,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        timeout: float | None = None,
        extra: dict | None = None,
    ) -> CompletionStream:
        """The same call, streamed: returns once the upstream accepted the request (errors up to
        then as `complete` raises them); the deltas are read from the returned stream."""
        ...

    async def aclose(self) -> None: ...


ChatModelFactory = Callable[["Settings"], ChatModel]
_REGISTRY: dict[str, ChatModelFactory] = {}


def register_chat_model(name: str, factory: ChatModelFactory) -> None:
    _REGISTRY[name] = factory


def build_chat_model(name: str, settings: Settings) -> ChatModel:
    if name not in _REGISTRY:
        from app.errors import GroundingError

        raise GroundingError(f"unknown chat-model provider {name!r}; registered: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name](settings)


def parse_model_json(text: str) -> Any:
    """JSON a model wrote (a plan, a verdict), its strings valid Unicode: "\\ud800" inside it would
    otherwise reach the search query, the cache and the response (ValueError when not JSON)."""
    return _well_formed_values(json.loads(text))


def _well_formed_values(value: Any) -> Any:
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, list):
        return [_well_formed_values(v) for v in value]
    if isinstance(value, dict):
        return {well_formed(str(k)): _well_formed_values(v) for k, v in value.items()}
    return value
