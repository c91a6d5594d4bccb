"""SSRF rule end to end: literal forms, redirects to internal targets, rebinding, schemes, ports."""

from __future__ import annotations

import asyncio

import httpcore
import pytest

from app.domain.types import FetchReason
from app.fetch.address import AddressPolicy
from app.fetch.transport import PinnedNetworkBackend, UnpinnedDial, pinned
from tests.fetch.conftest import FakeResolver, respond


async def page(request, writer):
    await respond(writer, 200, b"<html><body>hello</body></html>")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://127.1/",
        "http://0/",
        "http://017700000001/",
        "http://0177.0.0.1/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://100.100.100.200/",
        "http://10.0.0.1/",
        "http://192.168.1.1/",
        "http://[64:ff9b::7f00:1]/",
        "http://[2002:7f00:1::]/",
        "http://0x08080808/",  # public (8.8.8.8) but non-canonical: refused, no parser disagreements
        "http://999.1.1.1/",
    ],
)
async def test_internal_and_odd_literals_are_refused(make_fetcher, url):
    resolver = FakeResolver({})
    fetcher = make_fetcher(allow_private=[], resolver=resolver)
    result = await fetcher.fetch(url)
    assert result.reason is FetchReason.blocked_address, result.detail
    assert resolver.calls == []  # literals never reach DNS


async def test_name_resolving_to_loopback_is_refused(server, make_fetcher):
    server.routes["/"] = page
    resolver = FakeResolver({"evil.test": [["127.0.0.1"]]})
    fetcher = make_fetcher(ports=[server.port], allow_private=[], resolver=resolver)
    result = await fetcher.fetch(server.url("/", host="evil.test"))
    assert result.reason is FetchReason.blocked_address
    assert "loopback" in result.detail
    assert server.requests == []


async def test_any_private_answer_refuses_the_name(make_fetcher):
    resolver = FakeResolver({"mixed.test": [["93.184.215.14", "10.0.0.7"]]})
    fetcher = make_fetcher(allow_private=[], resolver=resolver)
    result = await fetcher.fetch("http://mixed.test/")
    assert result.reason is FetchReason.blocked_address and "10.0.0.7" in result.detail


@pytest.mark.parametrize(
    "target",
    [
        "http://127.0.0.1:{port}/secret",
        "http://169.254.169.254/latest/",
        "http://[::1]:{port}/secret",
        "http://2130706433:{port}/secret",
    ],
)
async def test_redirect_to_internal_address_is_refused_at_the_hop(server, make_fetcher, target):
    location = target.format(port=server.port)

    async def redirect(request, writer):
        await respond(writer, 302, b"", headers={"Location": location})

    server.routes["/start"] = redirect
    server.routes["/secret"] = page
    # The site is exempt by *name* only; the redirect target's address is not.
    resolver = FakeResolver({"site.test": [["127.0.0.1"]]})
    fetcher = make_fetcher(ports=[server.port], allow_private=["site.test"], resolver=resolver)
    result = await fetcher.fetch(server.url("/start", host="site.test"))
    assert result.reason is FetchReason.blocked_address, result.detail
    assert result.url == location and result.requested_url.endswith("/start")
    assert server.hits("/secret") == 0


async def test_redirect_to_name_resolving_to_metadata_is_refused(server, make_fetcher):
    async def redirect(request, writer):
        await respond(writer, 301, b"", headers={"Location": "http://metadata.test/computeMetadata/v1/"})

    server.routes["/start"] = redirect
    resolver = FakeResolver({"metadata.test": [["169.254.169.254"]]})
    # Even an operator CIDR covering link-local does not open the metadata endpoint.
    fetcher = make_fetcher(ports=[server.port], allow_private=["127.0.0.0/8", "169.254.0.0/16"], resolver=resolver)
    result = await fetcher.fetch(server.url("/start"))
    assert result.reason is FetchReason.blocked_address
    assert "cloud-metadata" in result.detail


async def test_dns_rebinding_dials_the_checked_address(server, make_fetcher):
    """The resolver answers 127.0.0.1 (exempt) first and 127.0.0.2 (not exempt) afterwards.

    The fetch must resolve once and connect to the address it checked: `rebind.test` does not exist
    in real DNS, so reaching the server at all proves the dial used the pinned address, and the
    resolver count proves no second lookup happened (robots.txt included)."""
    server.routes["/"] = page
    resolver = FakeResolver({"rebind.test": [["127.0.0.1"], ["127.0.0.2"]]})
    fetcher = make_fetcher(ports=[server.port], allow_private=["127.0.0.1/32"], resolver=resolver, respect_robots=True)
    first = await fetcher.fetch(server.url("/", host="rebind.test"))
    assert first.reason is FetchReason.ok, first.detail
    assert resolver.calls == ["rebind.test"]
    assert server.requests[-1].headers["host"] == f"rebind.test:{server.port}"
    assert server.hits("/robots.txt") == 1 and server.hits("/") == 1

    second = await fetcher.fetch(server.url("/", host="rebind.test"))
    assert second.reason is FetchReason.blocked_address and "127.0.0.2" in second.detail
    assert resolver.calls == ["rebind.test", "rebind.test"]
    assert server.hits("/") == 1


async def test_backend_dials_only_pinned_addresses(server):
    server.routes["/"] = page
    backend = PinnedNetworkBackend(AddressPolicy(["127.0.0.0/8"]))
    with pytest.raises(UnpinnedDial):
        await backend.connect_tcp("unpinned.test", server.port, timeout=2)
    with pinned("pinned.test", ["127.0.0.1"]):
        stream = await backend.connect_tcp("pinned.test", server.port, timeout=2)
    await stream.write(b"GET / HTTP/1.1\r\nHost: pinned.test\r\n\r\n")
    assert (await stream.read(4096)).startswith(b"HTTP/1.1 200")
    await stream.aclose()
    # A pinned address outside the policy is refused at dial time too.
    with pinned("pinned.test", ["10.0.0.1"]), pytest.raises(UnpinnedDial):
        await backend.connect_tcp("pinned.test", 80, timeout=2)


async def test_backend_tries_next_checked_address(server):
    server.routes["/"] = page
    backend = PinnedNetworkBackend(AddressPolicy(["127.0.0.0/8"]))
    # 127.0.0.9 has nothing listening on this port: refused, then the next pinned address works.
    with pinned("two.test", ["127.0.0.9", "127.0.0.1"]):
        stream = await backend.connect_tcp("two.test", server.port, timeout=2)
    await stream.aclose()
    with pinned("two.test", ["127.0.0.9"]), pytest.raises(httpcore.ConnectError):
        await backend.connect_tcp("two.test", server.port, timeout=2)


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "gopher://example.com/",
        "javascript:alert(1)",
        "data:text/html,hi",
        "ws://example.com/",
    ],
)
async def test_only_http_and_https(make_fetcher, url):
    result = await make_fetcher().fetch(url)
    assert result.reason is FetchReason.blocked_scheme


async def test_redirect_to_file_scheme_is_refused(server, make_fetcher):
    async def redirect(request, writer):
        await respond(writer, 302, b"", headers={"Location": "file:///etc/passwd"})

    server.routes["/start"] = redirect
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/start"))
    assert result.reason is FetchReason.blocked_scheme and result.url.startswith("file:")


async def test_port_outside_allowlist_is_refused(server, make_fetcher):
    server.routes["/"] = page
    fetcher = make_fetcher()  # allowed ports 80, 443 only
    result = await fetcher.fetch(server.url("/"))
    assert result.reason is FetchReason.blocked_port
    assert server.requests == []
    for url in ("http://example.com:22/", "http://example.com:6379/", "https://example.com:8443/"):
        assert (await fetcher.fetch(url)).reason is FetchReason.blocked_port


async def test_redirect_to_disallowed_port_is_refused(server, make_fetcher):
    async def redirect(request, writer):
        await respond(writer, 302, b"", headers={"Location": "http://127.0.0.1:6379/"})

    server.routes["/start"] = redirect
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/start"))
    assert result.reason is FetchReason.blocked_port


async def test_too_many_redirects(server, make_fetcher):
    async def chain(request, writer):
        n = int(request.path.rsplit("/", 1)[1])
        if n < 10:
            await respond(writer, 302, b"", headers={"Location": f"/r/{n + 1}"})
        else:
            await page(request, writer)

    server.fallback = chain
    fetcher = make_fetcher(ports=[server.port])
    five = await fetcher.fetch(server.url("/r/5"))  # 5 redirects then the page: allowed
    assert five.reason is FetchReason.ok and five.url.endswith("/r/10")
    six = await fetcher.fetch(server.url("/r/4"))  # 6 redirects: refused after the 6th
    assert six.reason is FetchReason.too_many_redirects
    assert server.hits("/r/10") == 1


async def test_concurrent_fetches_do_not_share_pins(server, make_fetcher):
    """Pins live in a context variable: concurrent fetches of different names stay separate."""
    server.routes["/"] = page
    resolver = FakeResolver({"a.test": [["127.0.0.1"]], "b.test": [["127.0.0.2"]]})
    fetcher = make_fetcher(ports=[server.port], allow_private=["127.0.0.1/32"], resolver=resolver)
    a, b = await asyncio.gather(
        fetcher.fetch(server.url("/", host="a.test")), fetcher.fetch(server.url("/", host="b.test"))
    )
    assert a.reason is FetchReason.ok
    assert b.reason is FetchReason.blocked_address
