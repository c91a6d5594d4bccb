"""A remote search provider paired with its circuit breaker (app/providers/breaker.py).

ServiceState wraps every provider that goes over the network (not "local", whose `remote` is
False); app/pipeline/search.py finds the breaker here and runs the shared retry loop around
`search`. Anything else is delegated, so plugin-specific methods stay reachable.
"""

from __future__ import annotations

from typing import Any

from app.domain.types import SearchResult
from app.providers.breaker import CircuitBreaker
from app.providers.search.base import SearchProvider, SearchQuery


class GuardedSearch:
    remote = True

    def __init__(self, inner: SearchProvider, breaker: CircuitBreaker):
        self.inner = inner
        self.name = inner.name
        self.breaker = breaker

    async def search(self, query: SearchQuery, *, timeout: float) -> SearchResult:
        return await self.inner.search(query, timeout=timeout)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, item: str) -> Any:
        if item == "inner":  # not set yet (copy, unpickling): no recursion
            raise AttributeError(item)
        return getattr(self.inner, item)
