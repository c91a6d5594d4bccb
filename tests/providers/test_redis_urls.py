"""GA_REDIS_URL topologies: a single server, Redis Sentinel and Redis Cluster.

URL parsing is checked on its own. Then the real cache (app.providers.cache.redis.RedisCache) is run
against real servers started here from the machine's `redis-server`: a throwaway master watched by a
throwaway `redis-server --sentinel`, and a 3-node cluster (`--cluster-enabled yes`, slots assigned and
nodes introduced with CLUSTER ADDSLOTSRANGE / CLUSTER MEET, no redis-cli needed). Without
`redis-server` these tests skip with the reason; on CI (CI set) they fail instead, like the other Redis
tests.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from app.providers.cache.redis import RedisCache, RedisTopology, parse_redis_url

# --- parsing ---------------------------------------------------------------------------------------


def test_plain_urls_are_left_to_redis_py():
    for url in ("redis://localhost:6379/0", "rediss://:pw@cache.example:6380/2", "unix:///run/redis.sock"):
        assert parse_redis_url(url) == RedisTopology(kind="single")


def test_sentinel_url_with_password_several_sentinels_and_db():
    topo = parse_redis_url("redis+sentinel://:s%40cret@sent-0:26379,sent-1,[::1]:26380/mymaster/3")
    assert topo.kind == "sentinel"
    assert topo.hosts == [("sent-0", 26379), ("sent-1", 26379), ("::1", 26380)]
    assert topo.service_name == "mymaster"
    assert topo.db == 3
    assert topo.password == "s@cret" and topo.username is None
    assert topo.ssl is False


def test_sentinel_url_defaults_user_tls_and_sentinel_password():
    topo = parse_redis_url("rediss+sentinel://ga:pw@sentinel/ga-master?sentinel_password=spw")
    assert (topo.kind, topo.hosts, topo.service_name, topo.db) == ("sentinel", [("sentinel", 26379)], "ga-master", 0)
    assert (topo.username, topo.password, topo.sentinel_password, topo.ssl) == ("ga", "pw", "spw", True)


@pytest.mark.parametrize(
    "url",
    [
        "redis+sentinel://sentinel:26379",  # no service name
        "redis+sentinel://sentinel:26379/",  # empty service name
        "redis+sentinel://sentinel:26379/mymaster/0/extra",
        "redis+sentinel://:pw@/mymaster",  # no host
        "redis+sentinel://sentinel:99999/mymaster",  # port out of range
        "redis+cluster://node-0:6379/1",  # a cluster has only DB 0
    ],
)
def test_malformed_sentinel_and_cluster_urls_are_refused(url):
    with pytest.raises(ValueError):
        parse_redis_url(url)


def test_cluster_url_seed_nodes_and_password():
    topo = parse_redis_url("redis+cluster://:pw@node-0:7000,node-1:7001,node-2/0")
    assert topo.kind == "cluster"
    assert topo.hosts == [("node-0", 7000), ("node-1", 7001), ("node-2", 6379)]
    assert topo.password == "pw" and topo.db == 0 and topo.ssl is False
    assert parse_redis_url("rediss+cluster://node-0").ssl is True


# --- real servers ---------------------------------------------------------------------------------


def _redis_server() -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        reason = "redis-server is not installed (apt-get install redis-server): Sentinel/Cluster not run"
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return binary


def _free_port_pair() -> int:
    """A port p with p and p + 10000 (the cluster bus) both free a moment ago."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 >= 65536:
            continue
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port + 10000))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair")


def _wait(predicate, timeout_s: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except (redis.RedisError, OSError):
            pass
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class _Servers:
    """Throwaway redis-server processes, each in its own temp dir; all stopped at the end."""

    def __init__(self, binary: str, tmp: Path) -> None:
        self.binary, self.tmp, self.procs = binary, tmp, []

    def start(self, port: int, *extra: str, conf: str | None = None, password: str | None = None) -> int:
        workdir = self.tmp / f"node-{port}"
        workdir.mkdir()
        args = [self.binary]
        if conf is not None:  # Sentinel needs a writable config file of its own
            (workdir / "node.conf").write_text(conf)
            args.append(str(workdir / "node.conf"))
        args += ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(workdir)]
        proc = subprocess.Popen([*args, *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(proc)
        client = redis.Redis(port=port, password=password, socket_timeout=0.5)
        _wait(lambda: client.ping(), what=f"redis-server on {port}")
        client.close()
        return port

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def servers(tmp_path) -> Iterator[_Servers]:
    group = _Servers(_redis_server(), tmp_path)
    try:
        yield group
    finally:
        group.stop()


def _cluster_state(client: redis.Redis) -> str:
    info = client.execute_command("CLUSTER INFO")  # parsed into a dict by redis-py, raw text by older ones
    if isinstance(info, dict):
        return str(info.get("cluster_state"))
    text = info.decode() if isinstance(info, bytes) else str(info)
    return next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("cluster_state:")), "")


async def _exercise(cache: RedisCache) -> None:
    """What the service does with its cache: set/get, get_many across keys, add as a lock, delete."""
    assert await cache.ping()
    await cache.set("search:a", b"alpha", 60)
    await cache.set("page:b", b"beta", 60)
    assert await cache.get("search:a") == b"alpha"
    assert await cache.get_many(["search:a", "missing", "page:b"]) == [b"alpha", None, b"beta"]
    assert await cache.add("lock:x", b"1", 5) is True
    assert await cache.add("lock:x", b"1", 5) is False  # held
    await cache.delete("lock:x")
    assert await cache.add("lock:x", b"1", 5) is True
    assert await cache.get("missing") is None
    if hasattr(cache, "incr"):  # the quota counters (app/api/quota.py)
        assert await cache.incr("quota:n", 1, 60) == 1.0
        assert await cache.incr("quota:n", 0.5, 60) == 1.5


async def test_sentinel_url_follows_the_master(servers, tmp_path):
    master_port = servers.start(_free_port_pair(), "--requirepass", "m-pass", password="m-pass")
    sentinel_port = servers.start(
        _free_port_pair(),
        "--sentinel",
        conf=(
            f"sentinel monitor ga-master 127.0.0.1 {master_port} 1\n"
            "sentinel auth-pass ga-master m-pass\n"
            "sentinel down-after-milliseconds ga-master 5000\n"
        ),
    )
    sentinel = redis.Redis(port=sentinel_port, socket_timeout=0.5)
    _wait(lambda: sentinel.sentinel_get_master_addr_by_name("ga-master"), what="sentinel to know the master")
    sentinel.close()

    cache = RedisCache(f"redis+sentinel://:m-pass@127.0.0.1:{sentinel_port}/ga-master/4", timeout_s=1.0)
    try:
        await _exercise(cache)
    finally:
        await cache.aclose()
    # The values went to the master Sentinel named, in the DB of the URL.
    direct = redis.Redis(port=master_port, password="m-pass", db=4)
    assert direct.get("ga:search:a") == b"alpha"
    direct.close()

    # A wrong master password is a cache failure (a miss), never an exception to the caller.
    bad = RedisCache(f"redis+sentinel://:wrong@127.0.0.1:{sentinel_port}/ga-master/4", timeout_s=0.5)
    try:
        assert await bad.get("search:a") is None
        assert await bad.ping() is False
    finally:
        await bad.aclose()


async def test_sentinel_url_follows_a_failover(servers):
    """A replica is promoted (SENTINEL FAILOVER): the cache finds the new master through the Sentinel,
    after at most one failed call (a miss), without a restart."""
    master = servers.start(_free_port_pair(), "--requirepass", "pw", "--masterauth", "pw", password="pw")
    replica = servers.start(
        _free_port_pair(),
        "--requirepass",
        "pw",
        "--masterauth",
        "pw",
        "--replicaof",
        "127.0.0.1",
        str(master),
        password="pw",
    )
    sentinel_port = servers.start(
        _free_port_pair(),
        "--sentinel",
        conf=(
            f"sentinel monitor ga-master 127.0.0.1 {master} 1\n"
            "sentinel auth-pass ga-master pw\n"
            "sentinel down-after-milliseconds ga-master 5000\n"
            "sentinel failover-timeout ga-master 10000\n"
        ),
    )
    sentinel = redis.Redis(port=sentinel_port, socket_timeout=1, decode_responses=True)
    try:
        # The Sentinel learns about the replica from the master's INFO (every 10 s at first).
        _wait(lambda: len(sentinel.sentinel_slaves("ga-master")) == 1, 30, "sentinel to see the replica")
        cache = RedisCache(f"redis+sentinel://:pw@127.0.0.1:{sentinel_port}/ga-master", timeout_s=1.0, backoff_s=0.0)
        try:
            await cache.set("before", b"1", 60)
            assert await cache.get("before") == b"1"
            copy = redis.Redis(port=replica, password="pw", socket_timeout=1)
            _wait(lambda: copy.get("ga:before") == b"1", 30, "the write to reach the replica")
            copy.close()
            # NOGOODSLAVE until the Sentinel has seen the replica in sync: ask again until it starts.
            _wait(lambda: sentinel.execute_command("SENTINEL FAILOVER", "ga-master"), 30, "the failover to start")
            _wait(
                lambda: sentinel.sentinel_get_master_addr_by_name("ga-master")[1] == replica, 30, "the replica promoted"
            )
            old = redis.Redis(port=master, password="pw", socket_timeout=1)
            _wait(lambda: old.info("replication")["role"] == "slave", 30, "the old master to become a replica")
            old.close()
            # The old master now refuses writes; the client drops that connection and asks again.
            for _ in range(50):
                await cache.set("after", b"2", 60)
                if await cache.get("after") == b"2":
                    break
                await asyncio.sleep(0.1)
            assert await cache.get("after") == b"2"
            assert await cache.get("before") == b"1"  # replicated before the failover, so kept
        finally:
            await cache.aclose()
        promoted = redis.Redis(port=replica, password="pw")
        assert promoted.get("ga:after") == b"2"
        promoted.close()
    finally:
        sentinel.close()


async def test_sentinel_without_any_sentinel_is_a_miss_not_an_error():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cache = RedisCache(f"redis+sentinel://127.0.0.1:{port}/ga-master", timeout_s=0.2)
    try:
        assert await cache.get("k") is None
        assert await cache.add("lock", b"1", 1) is True  # no one to coordinate with: do the work
        assert await cache.ping() is False
    finally:
        await cache.aclose()


async def test_cluster_url_spreads_keys_over_slots(servers):
    ports = [
        servers.start(_free_port_pair(), "--cluster-enabled", "yes", "--cluster-node-timeout", "2000") for _ in range(3)
    ]
    clients = [redis.Redis(port=p, socket_timeout=2) for p in ports]
    try:
        # Assign the 16384 slots in three ranges, then introduce the nodes to each other.
        bounds = [0, 5461, 10923, 16384]
        for client, lo, hi in zip(clients, bounds, bounds[1:]):
            client.execute_command("CLUSTER ADDSLOTSRANGE", lo, hi - 1)
        for port in ports[1:]:
            clients[0].execute_command("CLUSTER MEET", "127.0.0.1", port)
        for client in clients:
            _wait(lambda c=client: _cluster_state(c) == "ok", 20, "cluster_state:ok")
    finally:
        for client in clients:
            client.close()

    seeds = ",".join(f"127.0.0.1:{p}" for p in ports[:2])
    cache = RedisCache(f"redis+cluster://{seeds}", timeout_s=1.0)
    try:
        await _exercise(cache)
        keys = [f"k{i}" for i in range(40)]  # hash slots on all three nodes: MGET alone would fail
        for key in keys:
            await cache.set(key, key.encode(), 60)
        assert await cache.get_many(keys) == [k.encode() for k in keys]
    finally:
        await cache.aclose()
    holders = set()
    for port in ports:
        node = redis.Redis(port=port)
        if node.dbsize():
            holders.add(port)
        node.close()
    assert holders == set(ports), "keys should land on every node of the cluster"
