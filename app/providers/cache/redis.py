"""Redis cache (redis.asyncio). Short timeouts and no retries: a down or hung Redis costs a request
at most a few hundred milliseconds, then the cache is skipped until a back-off passes.

GA_REDIS_URL picks the topology by its scheme:

- ``redis://[[user]:password@]host[:port][/db]`` (``rediss://`` for TLS): one server.
- ``redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/service_name[/db]``
  (``rediss+sentinel://`` for TLS): ask the Sentinels (default port 26379) for the master of
  ``service_name`` and follow it across failovers. The password is the master's; a Sentinel that needs
  one of its own takes ``?sentinel_password=...``.
- ``redis+cluster://[[user]:password@]host[:port][,host[:port]...][/0]`` (``rediss+cluster://`` for
  TLS): Redis Cluster; the hosts are seed nodes, the slot map is discovered from them. Only DB 0.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import parse_qs, unquote, urlsplit

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import MaxConnectionsError

from app import metrics
from app.providers.cache.base import register_cache
from app.settings import Settings

log = logging.getLogger(__name__)

SENTINEL_SCHEMES = {"redis+sentinel": False, "rediss+sentinel": True}  # scheme -> TLS
CLUSTER_SCHEMES = {"redis+cluster": False, "rediss+cluster": True}
DEFAULT_SENTINEL_PORT = 26379
DEFAULT_REDIS_PORT = 6379


@dataclass(frozen=True)
class RedisTopology:
    """What a GA_REDIS_URL asks for, parsed (no connection made)."""

    kind: str  # "single" | "sentinel" | "cluster"
    hosts: list[tuple[str, int]] = field(default_factory=list)  # sentinels or cluster seed nodes
    service_name: str | None = None  # sentinel only
    db: int = 0
    username: str | None = None
    password: str | None = None
    ssl: bool = False
    sentinel_password: str | None = None


def _parse_hosts(netloc_hosts: str, default_port: int) -> list[tuple[str, int]]:
    hosts: list[tuple[str, int]] = []
    for item in netloc_hosts.split(","):
        item = item.strip()
        if not item:
            continue
        if item.startswith("["):  # [IPv6]:port
            end = item.index("]")
            host, rest = item[1:end], item[end + 1 :]
            port = int(rest[1:]) if rest.startswith(":") and rest[1:] else default_port
        elif item.count(":") == 1:
            host, _, port_s = item.partition(":")
            port = int(port_s) if port_s else default_port
        else:
            host, port = item, default_port
        if not host or not 0 < port < 65536:
            raise ValueError(f"bad host in Redis URL: {item!r}")
        hosts.append((unquote(host), port))
    if not hosts:
        raise ValueError("Redis URL names no host")
    return hosts


def parse_redis_url(url: str) -> RedisTopology:
    """Parse GA_REDIS_URL into a topology; ValueError on a malformed Sentinel or Cluster URL.
    Plain redis:// and rediss:// (and unix://) URLs are left to redis-py (kind "single")."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in SENTINEL_SCHEMES and scheme not in CLUSTER_SCHEMES:
        return RedisTopology(kind="single")
    userinfo, _, hostlist = parts.netloc.rpartition("@")
    username = password = None
    if userinfo:
        user, sep, pw = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(pw) if sep else None
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    segments = [unquote(s) for s in parts.path.split("/") if s]
    if scheme in SENTINEL_SCHEMES:
        if not segments or len(segments) > 2:
            raise ValueError("a Sentinel URL needs /service_name[/db] after the hosts")
        db = int(segments[1]) if len(segments) == 2 else int(query.get("db", 0))
        return RedisTopology(
            kind="sentinel",
            hosts=_parse_hosts(hostlist, DEFAULT_SENTINEL_PORT),
            service_name=segments[0],
            db=db,
            username=username,
            password=password,
            ssl=SENTINEL_SCHEMES[scheme],
            sentinel_password=query.get("sentinel_password") or None,
        )
    if len(segments) > 1 or (segments and segments[0] != "0"):
        raise ValueError("Redis Cluster has only DB 0")
    return RedisTopology(
        kind="cluster",
        hosts=_parse_hosts(hostlist, DEFAULT_REDIS_PORT),
        username=username,
        password=password,
        ssl=CLUSTER_SCHEMES[scheme],
    )


def make_client(url: str, timeout_s: float = 0.25, max_connections: int = 256) -> Any:
    """A redis.asyncio client (Redis or RedisCluster) for GA_REDIS_URL, without retries: one failed
    try is enough for a cache (redis-py's defaults retry several times per call). At most
    `max_connections` per worker (per node of a cluster)."""
    common: dict[str, Any] = {
        "socket_timeout": timeout_s,
        "socket_connect_timeout": timeout_s,
        "retry": Retry(NoBackoff(), 0),
        "health_check_interval": 0,
        "max_connections": max_connections,
    }
    topo = parse_redis_url(url)
    if topo.kind == "sentinel":
        assert topo.service_name
        sentinel_kwargs: dict[str, Any] = {
            "socket_timeout": timeout_s,
            "socket_connect_timeout": timeout_s,
            "retry": Retry(NoBackoff(), 0),  # asking a Sentinel is retried on the next cache call, not here
        }
        if topo.sentinel_password:
            sentinel_kwargs["password"] = topo.sentinel_password
        if topo.ssl:
            sentinel_kwargs["ssl"] = True
        sentinel = Sentinel(
            topo.hosts,
            sentinel_kwargs=sentinel_kwargs,
            db=topo.db,
            username=topo.username,
            password=topo.password,
            ssl=topo.ssl,
            **common,
        )
        return sentinel.master_for(topo.service_name, retry_on_timeout=False)
    if topo.kind == "cluster":
        return RedisCluster(
            startup_nodes=[ClusterNode(host, port) for host, port in topo.hosts],
            username=topo.username,
            password=topo.password,
            ssl=topo.ssl,
            **common,
        )
    # A call that finds every connection busy waits (up to the timeout) for one to come back,
    # instead of failing at once as redis-py's default pool does.
    pool = aioredis.BlockingConnectionPool.from_url(url, timeout=timeout_s, retry_on_timeout=False, **common)
    return aioredis.Redis.from_pool(pool)


class RedisCache:
    name = "redis"

    def __init__(
        self,
        url: str,
        timeout_s: float = 0.25,
        prefix: str = "ga:",
        backoff_s: float = 2.0,
        max_connections: int = 256,
    ):
        self._redis = make_client(url, timeout_s, max_connections)
        self._cluster = isinstance(self._redis, RedisCluster)
        self._prefix = prefix
        self._backoff_s = backoff_s
        self._down_until = 0.0

    def _available(self) -> bool:
        return time.monotonic() >= self._down_until

    def _failed(self, op: str, exc: Exception) -> None:
        metrics.CACHE_ERRORS.labels(layer="redis").inc()
        if _pool_exhausted(exc):
            # Every connection of this worker busy: this call is a miss, Redis itself is fine.
            return
        # Skip Redis for a short while instead of paying a timeout on every call (no retry storm).
        if self._available():
            log.warning("redis %s failed: %s; cache bypassed for %.1fs", op, type(exc).__name__, self._backoff_s)
        self._down_until = time.monotonic() + self._backoff_s
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
            full = [self._prefix + k for k in keys]
            # A cluster spreads keys over slots: MGET would fail with CROSSSLOT, so group by slot.
            values = await (self._redis.mget_nonatomic(full) if self._cluster else self._redis.mget(full))
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

    async def incr(self, key: str, amount: float, ttl_s: int) -> float | None:
        if not self._available():
            return None
        try:
            # One round trip; the TTL is set only when the counter is created (EXPIRE NX, Redis 7).
            pipe = self._redis.pipeline(transaction=not self._cluster)
            pipe.incrbyfloat(self._prefix + key, amount)
            pipe.expire(self._prefix + key, max(1, int(ttl_s)), nx=True)
            value, _ = await pipe.execute()
        except Exception as exc:
            self._failed("incr", exc)
            return None
        metrics.REDIS_UP.set(1)
        return float(value)

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
        # A Sentinel-managed client also holds connections to the Sentinels themselves.
        manager = getattr(getattr(self._redis, "connection_pool", None), "sentinel_manager", None)
        for client in [self._redis, *getattr(manager, "sentinels", [])]:
            try:
                await client.aclose()
            except Exception:
                pass


def _pool_exhausted(exc: Exception) -> bool:
    """No free connection in this worker's pool (a full pool, or the wait for one timed out): a local
    limit, not Redis failing."""
    if isinstance(exc, MaxConnectionsError):
        return True
    return type(exc) is RedisConnectionError and str(exc) == "No connection available."


def _factory(settings: Settings) -> RedisCache:
    assert settings.redis_url
    return RedisCache(
        settings.redis_url, timeout_s=settings.redis_timeout_s, max_connections=settings.redis_max_connections
    )


register_cache("redis", _factory)
