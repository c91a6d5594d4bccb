"""Cache protocol: bytes in, bytes out, with a TTL. Failures never reach the request."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from app.settings import Settings


@runtime_checkable
class Cache(Protocol):
    name: str

    async def get(self, key: str) -> bytes | None:
        """Return the value, or None on a miss *or on any cache failure*."""
        ...

    async def get_many(self, keys: list[str]) -> list[bytes | None]:
        """Several values in one round trip; None for misses and on failure."""
        ...

    async def set(self, key: str, value: bytes, ttl_s: int) -> None:
        """Store; swallow failures (the cache is an optimisation, never a dependency)."""
        ...

    async def add(self, key: str, value: bytes, ttl_s: float) -> bool:
        """Store only if absent (a lock); True when stored. A failing cache answers True: without
        a cache there is nobody to coordinate with, so the caller simply does the work."""
        ...

    async def delete(self, key: str) -> None: ...

    async def incr(self, key: str, amount: float, ttl_s: int) -> float | None:
        """Add to a counter (created at 0, expiring ttl_s after its creation); the new value, or
        None on failure, so a caller that must count (quotas) can fall back to its own counter."""
        ...

    async def ping(self) -> bool: ...

    async def aclose(self) -> None: ...


CacheFactory = Callable[["Settings"], Cache]
_REGISTRY: dict[str, CacheFactory] = {}


def register_cache(name: str, factory: CacheFactory) -> None:
    _REGISTRY[name] = factory


def build_cache(settings: Settings) -> Cache:
    return _REGISTRY["redis" if settings.redis_url else "memory"](settings)
