"""Chat-model provider protocol and registry (OpenAI-compatible backends register as "openai")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from app.settings import Settings


@dataclass(slots=True)
class Completion:
    text: str
    model: str
    prompt_tokens: int | None = None  # None when the upstream sent no usage
    completion_tokens: int | None = None
    finish_reason: str = "stop"


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
