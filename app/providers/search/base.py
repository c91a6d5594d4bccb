"""Search provider protocol and registry.

Built-in providers register exactly like external ones: a factory under a name, called with the
settings and the shared httpx client at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import httpx

from app.domain.types import SearchResult

if TYPE_CHECKING:
    from app.settings import Settings


@dataclass(slots=True)
class SearchQuery:
    text: str
    count: int = 10
    include_domains: list[str] = field(default_factory=list)
    exclude_domains: list[str] = field(default_factory=list)
    freshness_days: int | None = None
    # The user's question the queries were planned from: a provider that embeds (the local corpus's
    # dense leg) embeds it once a request instead of each query.
    question: str = ""


@runtime_checkable
class SearchProvider(Protocol):
    name: str

    async def search(self, query: SearchQuery, *, timeout: float) -> SearchResult:
        """Answer one query. Raise ProviderTechnicalError (retry / next provider) or
        ProviderLogicalError (fail now); return an empty hit list when nothing matched."""
        ...

    async def aclose(self) -> None: ...


SearchFactory = Callable[["Settings", httpx.AsyncClient], SearchProvider]
_REGISTRY: dict[str, SearchFactory] = {}


def register_search_provider(name: str, factory: SearchFactory) -> None:
    _REGISTRY[name] = factory


def search_provider_names() -> list[str]:
    return sorted(_REGISTRY)


def build_search_provider(name: str, settings: Settings, client: httpx.AsyncClient) -> SearchProvider:
    from app.errors import GroundingError

    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise GroundingError(
            f"unknown search provider {name!r}; registered: {', '.join(search_provider_names())}"
        ) from None
    return factory(settings, client)
