"""Single flight: concurrent identical misses run the work once.

Within a process, followers await the leader's future. Across replicas, the leader holds a short
lock in the shared cache (SET NX with a TTL); a replica that finds the lock taken polls the cache
for the leader's result until the lock's TTL would have run out, then does the work itself — a
crashed leader costs a wait, never a failure.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from app import metrics

T = TypeVar("T")
LOCK_TTL_S = 10.0
POLL_S = 0.05


class SingleFlight:
    def __init__(self) -> None:
        self._inflight: dict[str, asyncio.Future] = {}

    async def cached(
        self,
        key: str,
        cache,
        *,
        layer: str,
        compute: Callable[[], Awaitable[T]],
        encode: Callable[[T], bytes | None],
        decode: Callable[[bytes], T | None],
        ttl_s: int,
        read: bool = True,
        wait_s: float | None = None,
    ) -> tuple[T, str]:
        """Return (value, cache outcome) where outcome is hit | miss | coalesced."""
        if read:
            raw = await cache.get(key)
            value = decode(raw) if raw else None
            metrics.CACHE_LOOKUPS.labels(layer=layer, result="hit" if value is not None else "miss").inc()
            if value is not None:
                return value, "hit"
        existing = self._inflight.get(key)
        if existing is not None:
            metrics.CACHE_LOOKUPS.labels(layer=layer, result="coalesced").inc()
            return await asyncio.shield(existing), "coalesced"
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        future.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)  # never "unretrieved"
        self._inflight[key] = future
        try:
            value, outcome = await self._lead(key, cache, layer, compute, encode, decode, ttl_s, wait_s)
            future.set_result(value)
            return value, outcome
        except BaseException as exc:
            if not future.done():
                future.set_exception(exc)
            raise
        finally:
            self._inflight.pop(key, None)

    async def _lead(self, key, cache, layer, compute, encode, decode, ttl_s, wait_s):
        lock_key = "lock:" + key
        token = secrets.token_bytes(8)
        if not await cache.add(lock_key, token, LOCK_TTL_S):
            # Another replica is computing it: wait for its result instead of repeating the work.
            deadline = time.monotonic() + min(LOCK_TTL_S, wait_s if wait_s is not None else LOCK_TTL_S)
            while time.monotonic() < deadline:
                await asyncio.sleep(POLL_S)
                raw = await cache.get(key)
                value = decode(raw) if raw else None
                if value is not None:
                    metrics.CACHE_LOOKUPS.labels(layer=layer, result="coalesced").inc()
                    return value, "coalesced"
        try:
            value = await compute()
            raw = encode(value)
            if raw is not None:
                await cache.set(key, raw, ttl_s)
            return value, "miss"
        finally:
            if await cache.get(lock_key) == token:
                await cache.delete(lock_key)
