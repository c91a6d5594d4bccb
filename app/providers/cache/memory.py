"""In-process TTL cache with an LRU bound in bytes: the default when no Redis is configured.

Bounded by bytes, not entries: entries differ by four orders of magnitude (a lock is a few bytes,
a page is megabytes), so a count bound either wastes memory or lets it grow without limit.
"""

from __future__ import annotations

import sys
import time

from app.cache.lru import ByteLRU
from app.providers.cache.base import register_cache

# The (expiry, value) tuple and its float around each value; the key and the LRU slot are counted
# by ByteLRU, the value's bytes object is measured.
VALUE_OVERHEAD_BYTES = 80
# One entry may take at most this share of the budget: a single huge page must not flush the cache.
MAX_ENTRY_SHARE = 8


class MemoryCache:
    name = "memory"

    def __init__(self, max_bytes: int = 256 * 1024 * 1024, store: str = "cache"):
        self._items: ByteLRU[str, tuple[float, bytes]] = ByteLRU(max_bytes, store, max_entry_share=MAX_ENTRY_SHARE)

    @property
    def size_bytes(self) -> int:
        return self._items.size_bytes

    def __len__(self) -> int:
        return len(self._items)

    def _put(self, key: str, value: bytes, ttl_s: float) -> None:
        # An entry too big to cache is not kept (put says False): the caller recomputes.
        self._items.put(key, (time.monotonic() + ttl_s, value), VALUE_OVERHEAD_BYTES + sys.getsizeof(value))

    async def get(self, key: str) -> bytes | None:
        item = self._items.peek(key)
        if item is None:
            return None
        expires, value = item
        if expires < time.monotonic():
            self._items.pop(key)
            return None
        self._items.get(key)  # most recently used
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
        self._items.pop(key)

    async def incr(self, key: str, amount: float, ttl_s: int) -> float | None:
        item = self._items.peek(key)
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


register_cache("memory", lambda settings: MemoryCache(settings.memory_cache_max_bytes))
