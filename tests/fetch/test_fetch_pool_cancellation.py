"""Deadlines under pool contention must not leak connection slots (httpcore 1.0.9 loses a slot for
good when a request is cancelled while the pool is assigning it a connection: encode/httpcore#1093).
The benchmark found the service's fetcher jammed for good after a burst of timed-out fetches."""

from __future__ import annotations

import asyncio

from app.domain.types import FetchReason
from tests.fetch.conftest import respond


async def test_a_burst_of_timeouts_does_not_jam_the_pool(make_server, make_fetcher):
    async def slow(request, writer):
        await asyncio.sleep(1.5)
        await respond(writer, 200, b"<html><body><p>slow</p></body></html>", headers={"Content-Type": "text/html"})

    async def fast(request, writer):
        await respond(writer, 200, b"<html><body><p>fast</p></body></html>", headers={"Content-Type": "text/html"})

    servers = [await make_server(routes={"/slow": slow, "/fast": fast}) for _ in range(6)]
    fetcher = make_fetcher(ports=[s.port for s in servers], max_connections=4, per_host_concurrency=8, timeout_s=3.0)
    for _round in range(3):
        burst = await asyncio.gather(
            *(fetcher.fetch(servers[i % 6].url("/slow"), deadline_s=0.05 + 0.01 * (i % 5)) for i in range(40))
        )
        assert all(p.reason is FetchReason.timeout for p in burst)
    await asyncio.sleep(2.0)  # the abandoned requests finish or hit their own timeouts
    pages = await asyncio.gather(*(fetcher.fetch(s.url("/fast"), deadline_s=5) for s in servers))
    assert [p.reason for p in pages] == [FetchReason.ok] * 6
