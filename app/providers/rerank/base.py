"""Reranker protocol and registry. An operator may configure a local cross-encoder
(`GA_RERANKER=cross-encoder`, `GA_RERANKER_PATH=/models/…`) or the MiniLM sentence model
(`GA_RERANKER=minilm`); nothing is ever downloaded at run time.

The default, "auto", is the MiniLM reranker restricted to passages whose vectors were computed
offline (the shipped corpus's, app/pipeline/evidence_vectors.py), which cost one embedding of the
question a request; it is off when the model or the stored vectors are not installed, and then BM25
alone ranks passages. "off" (or empty) turns reranking off."""

from __future__ import annotations

import logging
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


log = logging.getLogger(__name__)
AUTO = "auto"
OFF = "off"
RerankerFactory = Callable[["Settings"], Reranker]
_REGISTRY: dict[str, RerankerFactory] = {}


def register_reranker(name: str, factory: RerankerFactory) -> None:
    _REGISTRY[name] = factory


def build_reranker(settings: Settings) -> Reranker | None:
    return build_named_reranker(settings.reranker, settings)


def build_named_reranker(name: str | None, settings: Settings) -> Reranker | None:
    if not name or name == OFF:
        return None
    from app.errors import GroundingError

    if name == AUTO:
        return _stored_vectors_reranker(settings)
    if name not in _REGISTRY:
        raise GroundingError(f"unknown reranker {name!r}; registered: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name](settings)


def _stored_vectors_reranker(settings: Settings) -> Reranker | None:
    """MiniLM over the stored passage vectors only (`stored_only`), when it and they are installed."""
    from app.errors import GroundingError

    factory = _REGISTRY.get("minilm")
    if factory is None:
        return None
    try:
        reranker = factory(settings)
    except (ImportError, GroundingError) as exc:
        log.info("reranker auto: off (%s)", exc)
        return None
    if not getattr(reranker, "has_stored", False):
        log.info("reranker auto: off (no stored passage vectors)")
        return None
    reranker.stored_only = True  # type: ignore[attr-defined]
    log.info("reranker auto: MiniLM over the stored passage vectors")
    return reranker
