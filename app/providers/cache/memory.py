"""In-process TTL cache with an LRU bound: the default when no Redis is configured."""

from __future__ import annotations

import time
from collections import OrderedDict

from app.providers.cache.base import register_cache


class MemoryCache:
    name = "memory"

    def __init__(self, max_items: int = 10_000):
        self._items: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        self._max = max_items

    async def get(self, key: str) -> bytes | None:
        item = self._items.get(key)
        if item is None:
            return None
        expires, value = item
        if expires < time.monotonic():
            self._items.pop(key, None)
            return None
        self._items.move_to_end(key)
        return value

    async def get_many(self, keys: list[str]) -> list[bytes | None]:
        return [await self.get(k) for k in keys]

    async def set(self, key: str, value: bytes, ttl_s: int) -> None:
        self._items[key] = (time.monotonic() + ttl_s, value)
        self._items.move_to_end(key)
        while len(self._items) > self._max:
            self._items.popitem(last=False)

    async def add(self, key: str, value: bytes, ttl_s: float) -> bool:
        if await self.get(key) is not None:
            return False
        self._items[key] = (time.monotonic() + ttl_s, value)
        return True

    async def delete(self, key: str) -> None:
        self._items.pop(key, None)

    async def ping(self) -> bool:
        return True

    async def aclose(self) -> None:
        self._items.clear()


register_cache("memory", lambda settings: MemoryCache())
