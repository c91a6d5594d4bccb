"""Bounds: total deadline, decoded-byte cap (gzip bomb), Content-Length, content-type allowlist."""

from __future__ import annotations

import asyncio
import functools
import gzip
import time
import tracemalloc

import pytest

from app.domain.types import FetchReason
from tests.fetch.conftest import head_bytes, respond


@functools.lru_cache(maxsize=1)
def gzip_bomb() -> bytes:
    """50 MB of zeros, gzipped to ~49 KB."""
    return gzip.compress(b"\0" * 50_000_000, compresslevel=9)


async def trickle(request, writer):
    """Headers at once, then one byte a second for 30 s."""
    writer.write(head_bytes(200, {"Content-Type": "text/html", "Content-Length": "30"}))
    await writer.drain()
    for _ in range(30):
        writer.write(b"x")
        await writer.drain()
        await asyncio.sleep(1)


async def test_trickling_server_is_cut_by_the_total_deadline(server, make_fetcher):
    server.routes["/slow"] = trickle
    fetcher = make_fetcher(ports=[server.port], timeout_s=20)  # per-read timeout never fires
    started = time.monotonic()
    result = await fetcher.fetch(server.url("/slow"), deadline_s=1.0)
    elapsed = time.monotonic() - started
    assert result.reason is FetchReason.timeout
    assert elapsed < 10  # the trickle alone would take 30 s
    assert result.elapsed_ms < 10_000


async def test_timeout_s_bounds_when_no_deadline_is_given(server, make_fetcher):
    server.routes["/slow"] = trickle
    started = time.monotonic()
    result = await make_fetcher(ports=[server.port], timeout_s=1.0).fetch(server.url("/slow"))
    assert result.reason is FetchReason.timeout and time.monotonic() - started < 10


async def test_silent_server_times_out(server, make_fetcher):
    async def silent(request, writer):
        await asyncio.sleep(30)

    server.routes["/silent"] = silent
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/silent"), deadline_s=0.5)
    assert result.reason is FetchReason.timeout


async def test_gzip_bomb_stops_at_the_cap_with_bounded_memory(server, make_fetcher):
    bomb = gzip_bomb()

    async def serve_bomb(request, writer):
        await respond(writer, 200, bomb, headers={"Content-Encoding": "gzip"})

    server.routes["/bomb"] = serve_bomb
    fetcher = make_fetcher(ports=[server.port], max_bytes=1_000_000)
    tracemalloc.start()
    try:
        result = await fetcher.fetch(server.url("/bomb"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.reason is FetchReason.too_large
    assert result.body == b""
    # Inflating one 48 KB network chunk at once would allocate ~50 MB; pieces keep it near the cap.
    assert peak < 16_000_000, peak


async def test_gzip_page_under_the_cap_is_decoded(server, make_fetcher):
    html = b"<html><body>" + b"<p>words</p>" * 1000 + b"</body></html>"

    async def gz(request, writer):
        await respond(writer, 200, gzip.compress(html), headers={"Content-Encoding": "gzip"})

    server.routes["/gz"] = gz
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/gz"))
    assert result.reason is FetchReason.ok and result.body == html
    assert server.requests[0].headers["accept-encoding"] == "gzip, deflate"


async def test_plain_body_over_the_cap_is_too_large(server, make_fetcher):
    async def big(request, writer):  # no Content-Length: read until close
        writer.write(head_bytes(200, {"Content-Type": "text/plain", "Connection": "close"}))
        for _ in range(40):
            writer.write(b"a" * 65536)
            await writer.drain()

    server.routes["/big"] = big
    result = await make_fetcher(ports=[server.port], max_bytes=1_000_000).fetch(server.url("/big"))
    assert result.reason is FetchReason.too_large


async def test_oversized_content_length_is_refused_before_reading(server, make_fetcher):
    async def liar(request, writer):
        # Declares 50 MB, sends 10 bytes, then hangs: reading the body would end in a timeout.
        writer.write(head_bytes(200, {"Content-Type": "text/html", "Content-Length": "50000000"}))
        writer.write(b"<html>....")
        await writer.drain()
        await asyncio.sleep(30)

    server.routes["/liar"] = liar
    fetcher = make_fetcher(ports=[server.port], max_bytes=1_000_000)
    result = await fetcher.fetch(server.url("/liar"), deadline_s=3)
    assert result.reason is FetchReason.too_large and "content-length" in result.detail
    assert result.elapsed_ms < 2500


@pytest.mark.parametrize(
    "content_type", ["image/png", "application/octet-stream", "video/mp4", "application/zip", "text/javascript"]
)
async def test_unsupported_content_type(server, make_fetcher, content_type):
    async def binary(request, writer):
        await respond(writer, 200, b"\x89PNG\r\n\x1a\n....", content_type=content_type)

    server.routes["/x"] = binary
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/x"))
    assert result.reason is FetchReason.unsupported_type and result.body == b""


@pytest.mark.parametrize(
    "content_type", ["text/html; charset=utf-8", "application/xhtml+xml", "text/plain", "application/pdf", "TEXT/HTML"]
)
async def test_allowed_content_types(server, make_fetcher, content_type):
    async def doc(request, writer):
        await respond(writer, 200, b"<html>ok</html>", content_type=content_type)

    server.routes["/x"] = doc
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/x"))
    assert result.reason is FetchReason.ok
    assert result.content_type == content_type.split(";")[0].lower()
    assert result.headers["content-type"] == content_type


@pytest.mark.parametrize(
    "body,reason,sniffed",
    [
        (b"\n  <!DOCTYPE html><html><body>x</body></html>", FetchReason.ok, "text/html"),
        (b"%PDF-1.7\n...", FetchReason.ok, "application/pdf"),
        (b"plain words only", FetchReason.ok, "text/plain"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", FetchReason.unsupported_type, "application/octet-stream"),
    ],
)
async def test_missing_content_type_is_sniffed(server, make_fetcher, body, reason, sniffed):
    async def untyped(request, writer):
        await respond(writer, 200, body, content_type=None)

    server.routes["/x"] = untyped
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/x"))
    assert result.reason is reason and result.content_type == sniffed
