"""Ordinary fetches: result fields, conditional GET, HTTP and network errors, per-host concurrency,
HTTPS to a pinned address with SNI and certificate checks on the hostname."""

from __future__ import annotations

import asyncio
import socket
import ssl
from datetime import UTC

import pytest
import trustme

from app.domain.types import FetchReason
from app.fetch.fetcher import PageFetcher
from app.settings import Settings
from tests.fetch.conftest import FakeResolver, respond

ETAG = '"v1"'
LAST_MODIFIED = "Wed, 01 Oct 2025 10:00:00 GMT"


async def versioned(request, writer):
    if request.headers.get("if-none-match") == ETAG or request.headers.get("if-modified-since") == LAST_MODIFIED:
        await respond(writer, 304, b"", content_type=None, headers={"ETag": ETAG})
        return
    await respond(
        writer, 200, b"<html>v1</html>", headers={"ETag": ETAG, "Last-Modified": LAST_MODIFIED, "Set-Cookie": "id=1"}
    )


async def test_ok_page_fields(server, make_fetcher):
    server.routes["/doc"] = versioned
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/doc"))
    assert result.reason is FetchReason.ok and result.ok
    assert result.status == 200 and result.body == b"<html>v1</html>"
    assert result.content_type == "text/html"
    assert result.headers["etag"] == ETAG and result.headers["last-modified"] == LAST_MODIFIED
    assert "set-cookie" not in result.headers
    assert all(k == k.lower() for k in result.headers)
    assert result.fetched_at is not None and result.fetched_at.tzinfo == UTC
    assert result.url == result.requested_url == server.url("/doc")
    ua = server.requests[0].headers["user-agent"]
    assert ua == "GroundedAnswerBot/0.1 (+https://example.org/bot)"
    assert "if-none-match" not in server.requests[0].headers


@pytest.mark.parametrize("kwargs", [{"etag": ETAG}, {"last_modified": LAST_MODIFIED}])
async def test_conditional_get_not_modified(server, make_fetcher, kwargs):
    server.routes["/doc"] = versioned
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/doc"), **kwargs)
    assert result.reason is FetchReason.not_modified and result.ok
    assert result.status == 304 and result.body == b""
    sent = server.requests[0].headers
    assert sent.get("if-none-match") == kwargs.get("etag") or sent.get("if-modified-since") == kwargs.get(
        "last_modified"
    )


async def test_stale_validator_gets_the_page(server, make_fetcher):
    server.routes["/doc"] = versioned
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/doc"), etag='"v0"')
    assert result.reason is FetchReason.ok and result.body == b"<html>v1</html>"


async def test_unconditional_304_is_an_error(server, make_fetcher):
    async def odd(request, writer):
        await respond(writer, 304, b"", content_type=None)

    server.routes["/x"] = odd
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/x"))
    assert result.reason is FetchReason.http_error and result.status == 304


@pytest.mark.parametrize("status", [404, 410, 403, 500, 503])
async def test_http_error_status(server, make_fetcher, status):
    async def failing(request, writer):
        await respond(writer, status, b"<html>no</html>")

    server.routes["/x"] = failing
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/x"))
    assert result.reason is FetchReason.http_error and result.status == status
    assert not result.ok


async def test_connection_refused_is_network_error(make_fetcher):
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = await make_fetcher(ports=[port]).fetch(f"http://127.0.0.1:{port}/")
    assert result.reason is FetchReason.network_error


async def test_connection_reset_is_network_error(server, make_fetcher):
    async def reset(request, writer):
        writer.transport.abort()

    server.routes["/x"] = reset
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/x"))
    assert result.reason is FetchReason.network_error


async def test_unresolvable_name_is_network_error(make_fetcher):
    result = await make_fetcher(resolver=FakeResolver({})).fetch("http://nowhere.test/")
    assert result.reason is FetchReason.network_error and "resolve" in result.detail


async def test_garbage_response_is_network_error(server, make_fetcher):
    async def garbage(request, writer):
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\n")
        await writer.drain()

    server.routes["/x"] = garbage
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/x"))
    assert result.reason is FetchReason.network_error


async def test_per_host_concurrency_limit(server, make_fetcher):
    async def slow(request, writer):
        await asyncio.sleep(0.3)
        await respond(writer, 200, b"<html>ok</html>")

    server.fallback = slow
    fetcher = make_fetcher(ports=[server.port], per_host_concurrency=2)
    results = await asyncio.gather(*(fetcher.fetch(server.url(f"/p{i}")) for i in range(6)))
    assert all(r.reason is FetchReason.ok for r in results)
    assert server.max_in_flight == 2


async def test_concurrency_limit_is_per_host(make_server, make_fetcher):
    async def slow(request, writer):
        await asyncio.sleep(0.3)
        await respond(writer, 200, b"<html>ok</html>")

    one, two = await make_server(fallback=slow), await make_server(fallback=slow)
    resolver = FakeResolver({"one.test": [["127.0.0.1"]], "two.test": [["127.0.0.1"]]})
    fetcher = make_fetcher(ports=[one.port, two.port], per_host_concurrency=1, resolver=resolver)
    urls = [one.url(f"/{i}", host="one.test") for i in range(2)] + [two.url(f"/{i}", host="two.test") for i in range(2)]
    results = await asyncio.gather(*(fetcher.fetch(u) for u in urls))
    assert all(r.ok for r in results)
    assert one.max_in_flight == 1 and two.max_in_flight == 1


@pytest.fixture(scope="module")
def tls_ca():
    return trustme.CA()


async def _tls_server(make_server, tls_ca, cert_host: str, seen_sni: list):
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls_ca.issue_cert(cert_host).configure_cert(server_ctx)
    server_ctx.sni_callback = lambda sock, name, ctx: seen_sni.append(name)

    async def hello(request, writer):
        await respond(writer, 200, b"<html>secure</html>")

    return await make_server(fallback=hello, ssl_context=server_ctx)


async def test_https_to_pinned_address_uses_hostname_for_sni_and_cert(make_server, make_fetcher, tls_ca):
    seen_sni: list[str] = []
    srv = await _tls_server(make_server, tls_ca, "secure.test", seen_sni)
    client_ctx = ssl.create_default_context()
    tls_ca.configure_trust(client_ctx)
    resolver = FakeResolver({"secure.test": [["127.0.0.1"]]})
    fetcher = make_fetcher(ports=[srv.port], resolver=resolver, verify=client_ctx)
    result = await fetcher.fetch(srv.url("/", host="secure.test"))
    assert result.reason is FetchReason.ok, result.detail
    assert result.body == b"<html>secure</html>"
    assert seen_sni == ["secure.test"]
    assert srv.requests[0].headers["host"] == f"secure.test:{srv.port}"
    assert resolver.calls == ["secure.test"]


async def test_https_certificate_for_another_name_is_refused(make_server, make_fetcher, tls_ca):
    srv = await _tls_server(make_server, tls_ca, "other.test", [])
    client_ctx = ssl.create_default_context()
    tls_ca.configure_trust(client_ctx)
    resolver = FakeResolver({"secure.test": [["127.0.0.1"]]})
    fetcher = make_fetcher(ports=[srv.port], resolver=resolver, verify=client_ctx)
    result = await fetcher.fetch(srv.url("/", host="secure.test"))
    assert result.reason is FetchReason.network_error
    assert "CERTIFICATE_VERIFY_FAILED" in result.detail or "certificate" in result.detail.lower()
    assert srv.requests == []


async def test_from_settings_reads_fetch_fields(server):
    settings = Settings(
        fetch_timeout_s=2.5,
        fetch_max_bytes=1234,
        fetch_allowed_ports=str(server.port),
        fetch_allow_private="127.0.0.0/8",
        respect_robots=False,
        user_agent="TestBot/9",
        contact_url="https://t.example/",
    )

    async def tiny(request, writer):
        await respond(writer, 200, b"<html>" + b"x" * 2000 + b"</html>")

    server.routes["/small"] = lambda r, w: respond(w, 200, b"<html>hi</html>")
    server.routes["/big"] = tiny
    fetcher = PageFetcher.from_settings(settings)
    try:
        assert (await fetcher.fetch(server.url("/small"))).reason is FetchReason.ok
        assert (await fetcher.fetch(server.url("/big"))).reason is FetchReason.too_large
        assert server.requests[0].headers["user-agent"] == "TestBot/9 (+https://t.example/)"
        assert (await fetcher.fetch("http://example.com:80/")).reason is FetchReason.blocked_port
    finally:
        await fetcher.aclose()
