"""The Redis cache's connection pool: more concurrent cache calls than connections wait for a free one
(redis-py's default pool failed them at once, and each failure skipped the whole cache for 2 s: 13
times in the 2026-12-08 soak); a call that still finds none is a miss, and Redis is not marked down."""

from __future__ import annotations

import asyncio

from app.providers.cache.redis import RedisCache


async def test_more_concurrent_calls_than_connections_wait_for_one(redis_url):
    cache = RedisCache(redis_url, timeout_s=2.0, max_connections=4)
    try:

        async def round_trip(i: int) -> bytes | None:
            await cache.set(f"pool:{i}", str(i).encode(), 60)
            return await cache.get(f"pool:{i}")

        values = await asyncio.gather(*(round_trip(i) for i in range(300)))
        assert values == [str(i).encode() for i in range(300)]
        assert cache._available()
    finally:
        await cache.aclose()


async def test_no_free_connection_is_a_miss_and_redis_stays_up(redis_url):
    cache = RedisCache(redis_url, timeout_s=0.2, max_connections=1)
    try:
        await cache.set("pool:x", b"1", 60)
        pool = cache._redis.connection_pool
        held = await pool.get_connection()  # the only connection, busy elsewhere
        try:
            assert await cache.get("pool:x") is None
        finally:
            await pool.release(held)
        assert cache._available()  # not skipped for the back-off: Redis itself answered all along
        assert await cache.get("pool:x") == b"1"
    finally:
        await cache.aclose()
