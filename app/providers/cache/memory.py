"""In-process TTL cache with an LRU bound in bytes: the default when no Redis is configured.

Bounded by bytes, not entries: entries differ by four orders of magnitude (a lock is a few bytes,
a page is megabytes), so a count bound either wastes memory or lets it grow without limit.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from app.providers.cache.base import register_cache

ENTRY_OVERHEAD_BYTES = 120  # the tuple, float, dict slot and key object around each value (measured ~110)
# One entry may take at most this share of the budget: a single huge page must not flush the cache.
MAX_ENTRY_SHARE = 8


class MemoryCache:
    name = "memory"

    def __init__(self, max_bytes: int = 256 * 1024 * 1024):
        self._items: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        self._max_bytes = max_bytes
        self._bytes = 0

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    @staticmethod
    def _cost(key: str, value: bytes) -> int:
        return len(key) + len(value) + ENTRY_OVERHEAD_BYTES

    def _pop(self, key: str) -> None:
        item = self._items.pop(key, None)
        if item is not None:
            self._bytes -= self._cost(key, item[1])

    def _put(self, key: str, value: bytes, ttl_s: float) -> None:
        self._pop(key)
        cost = self._cost(key, value)
        if cost * MAX_ENTRY_SHARE > self._max_bytes:
            return  # too big to cache at all: the caller recomputes, the cache keeps what it has
        self._items[key] = (time.monotonic() + ttl_s, value)
        self._bytes += cost
        while self._bytes > self._max_bytes and self._items:
            old_key, (_, old_value) = self._items.popitem(last=False)
            self._bytes -= self._cost(old_key, old_value)

    async def get(self, key: str) -> bytes | None:
        item = self._items.get(key)
        if item is None:
            return None
        expires, value = item
        if expires < time.monotonic():
            self._pop(key)
            return None
        self._items.move_to_end(key)
        return value

    async def get_many(self, keys: list[str]) -> list[bytes | None]:
        return [await self.get(k) for k in keys]

    async def set(self, key: str, value: bytes, ttl_s: int) -> None:
        self._put(key, value, ttl_s)

    async def add(self, key: str, value: bytes, ttl_s: float) -> bool:
        if await self.get(key) is not None:
            return False
        self._put(key, value, ttl_s)
        return True

    async def delete(self, key: str) -> None:
        self._pop(key)

    async def incr(self, key: str, amount: float, ttl_s: int) -> float | None:
        item = self._items.get(key)
        now = time.monotonic()
        if item is None or item[0] < now:
            expires, value = now + ttl_s, 0.0
        else:
            expires, value = item[0], float(item[1])
        value += amount
        self._put(key, repr(value).encode(), expires - now)
        return value

    async def ping(self) -> bool:
        return True

    async def aclose(self) -> None:
        self._items.clear()
        self._bytes = 0


register_cache("memory", lambda settings: MemoryCache(settings.memory_cache_max_bytes))
