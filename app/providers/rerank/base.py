"""Reranker protocol and registry. Off by default: BM25 on the question ranks passages. An operator
may configure a local cross-encoder (`GA_RERANKER=cross-encoder`, `GA_RERANKER_PATH=/models/…`);
nothing is ever downloaded at run time."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from app.settings import Settings


@runtime_checkable
class Reranker(Protocol):
    name: str

    def score(self, question: str, passages: list[str]) -> list[float]:
        """Relevance of each passage to the question, higher is better (any scale)."""
        ...


RerankerFactory = Callable[["Settings"], Reranker]
_REGISTRY: dict[str, RerankerFactory] = {}


def register_reranker(name: str, factory: RerankerFactory) -> None:
    _REGISTRY[name] = factory


def build_reranker(settings: Settings) -> Reranker | None:
    return build_named_reranker(settings.reranker, settings)


def build_named_reranker(name: str | None, settings: Settings) -> Reranker | None:
    if not name:
        return None
    from app.errors import GroundingError

    if name not in _REGISTRY:
        raise GroundingError(f"unknown reranker {name!r}; registered: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name](settings)
