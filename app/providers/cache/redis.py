"""Redis cache (redis.asyncio). Short timeouts and no retries: a down or hung Redis costs a request
at most a few hundred milliseconds, then the cache is skipped until a back-off passes."""

from __future__ import annotations

import logging
import time
from typing import cast

import redis.asyncio as aioredis
from redis.backoff import NoBackoff
from redis.retry import Retry

from app import metrics
from app.providers.cache.base import register_cache
from app.settings import Settings

log = logging.getLogger(__name__)


class RedisCache:
    name = "redis"

    def __init__(self, url: str, timeout_s: float = 0.25, prefix: str = "ga:", backoff_s: float = 2.0):
        # redis-py's defaults retry several times per call; one failed try is enough for a cache.
        self._redis = aioredis.Redis.from_url(
            url,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            retry=Retry(NoBackoff(), 0),
            retry_on_timeout=False,
            health_check_interval=0,
        )
        self._prefix = prefix
        self._backoff_s = backoff_s
        self._down_until = 0.0

    def _available(self) -> bool:
        return time.monotonic() >= self._down_until

    def _failed(self, op: str, exc: Exception) -> None:
        # Skip Redis for a short while instead of paying a timeout on every call (no retry storm).
        if self._available():
            log.warning("redis %s failed: %s; cache bypassed for %.1fs", op, type(exc).__name__, self._backoff_s)
        self._down_until = time.monotonic() + self._backoff_s
        metrics.CACHE_ERRORS.labels(layer="redis").inc()
        metrics.REDIS_UP.set(0)

    async def get(self, key: str) -> bytes | None:
        if not self._available():
            return None
        try:
            value = await self._redis.get(self._prefix + key)
        except Exception as exc:  # any failure is a miss
            self._failed("get", exc)
            return None
        metrics.REDIS_UP.set(1)
        return cast("bytes | None", value)  # a bytes client: decode_responses is off

    async def get_many(self, keys: list[str]) -> list[bytes | None]:
        if not keys or not self._available():
            return [None] * len(keys)
        try:
            values = await self._redis.mget([self._prefix + k for k in keys])
        except Exception as exc:
            self._failed("mget", exc)
            return [None] * len(keys)
        metrics.REDIS_UP.set(1)
        return list(cast("list[bytes | None]", values))  # a bytes client: decode_responses is off

    async def set(self, key: str, value: bytes, ttl_s: int) -> None:
        if not self._available():
            return
        try:
            await self._redis.set(self._prefix + key, value, ex=max(1, int(ttl_s)))
        except Exception as exc:
            self._failed("set", exc)

    async def add(self, key: str, value: bytes, ttl_s: float) -> bool:
        if not self._available():
            return True
        try:
            return bool(await self._redis.set(self._prefix + key, value, px=max(1, int(ttl_s * 1000)), nx=True))
        except Exception as exc:
            self._failed("add", exc)
            return True

    async def delete(self, key: str) -> None:
        if not self._available():
            return
        try:
            await self._redis.delete(self._prefix + key)
        except Exception as exc:
            self._failed("delete", exc)

    async def ping(self) -> bool:
        try:
            ok = bool(await self._redis.ping())
        except Exception as exc:
            self._failed("ping", exc)
            return False
        self._down_until = 0.0
        metrics.REDIS_UP.set(1)
        return ok

    async def aclose(self) -> None:
        try:
            await self._redis.aclose()
        except Exception:
            pass


def _factory(settings: Settings) -> RedisCache:
    assert settings.redis_url
    return RedisCache(settings.redis_url, timeout_s=settings.redis_timeout_s)


register_cache("redis", _factory)
