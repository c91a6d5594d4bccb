"""Forward-proxy mode (Smokescreen-style) and immunity to proxy environment variables."""

from __future__ import annotations

import pytest

from app.domain.types import FetchReason
from tests.fetch.conftest import NoResolver, respond


async def proxy_answer(request, writer):
    """A stand-in forward proxy: records absolute-form targets and answers for the origin."""
    if request.path == "/robots.txt":
        await respond(writer, 404, b"", content_type="text/plain")
        return
    await respond(writer, 200, f"<html>via proxy: {request.target}</html>".encode())


@pytest.fixture
async def proxy(make_server):
    return await make_server(fallback=proxy_answer)


async def test_page_fetches_go_through_the_proxy(proxy, make_fetcher):
    fetcher = make_fetcher(
        proxy=proxy.url("").rstrip("/"), allow_private=[], resolver=NoResolver(), respect_robots=True
    )
    result = await fetcher.fetch("http://example.test/page?q=1")
    assert result.reason is FetchReason.ok, result.detail
    assert result.body == b"<html>via proxy: http://example.test/page?q=1</html>"
    targets = [r.target for r in proxy.requests]
    # robots.txt and the page, both absolute-form: the proxy resolved and dialled the name.
    assert targets == ["http://example.test/robots.txt", "http://example.test/page?q=1"]
    assert proxy.requests[1].headers["host"] == "example.test"
    assert NoResolver.calls == 0


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://[::1]/",
        "http://0x7f000001/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.1.1/",
        "http://2130706433/",
    ],
)
async def test_literal_internal_addresses_are_refused_before_the_proxy(proxy, make_fetcher, url):
    fetcher = make_fetcher(proxy=proxy.url("").rstrip("/"), allow_private=[], resolver=NoResolver())
    result = await fetcher.fetch(url)
    assert result.reason is FetchReason.blocked_address
    assert proxy.requests == []


async def test_proxy_mode_still_checks_scheme_and_port(proxy, make_fetcher):
    fetcher = make_fetcher(proxy=proxy.url("").rstrip("/"), allow_private=[], resolver=NoResolver())
    assert (await fetcher.fetch("gopher://example.test/")).reason is FetchReason.blocked_scheme
    assert (await fetcher.fetch("http://example.test:25/")).reason is FetchReason.blocked_port
    assert proxy.requests == []


async def test_redirect_to_literal_loopback_via_proxy_is_refused(make_server, make_fetcher):
    async def redirecting_proxy(request, writer):
        await respond(writer, 302, b"", headers={"Location": "http://127.0.0.1/admin"})

    proxy = await make_server(fallback=redirecting_proxy)
    fetcher = make_fetcher(proxy=proxy.url("").rstrip("/"), allow_private=[], resolver=NoResolver())
    result = await fetcher.fetch("http://example.test/")
    assert result.reason is FetchReason.blocked_address and result.url == "http://127.0.0.1/admin"
    assert [r.target for r in proxy.requests] == ["http://example.test/"]


@pytest.mark.parametrize("name", ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"])
async def test_proxy_environment_variables_are_ignored(server, proxy, make_fetcher, monkeypatch, name):
    monkeypatch.setenv(name, proxy.url("").rstrip("/"))
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    server.routes["/"] = lambda r, w: respond(w, 200, b"<html>direct</html>")
    result = await make_fetcher(ports=[server.port]).fetch(server.url("/"))
    assert result.reason is FetchReason.ok and result.body == b"<html>direct</html>"
    assert proxy.requests == [] and server.hits("/") == 1


async def test_environment_cannot_redirect_proxy_mode_either(proxy, make_server, make_fetcher, monkeypatch):
    other = await make_server(fallback=proxy_answer)
    monkeypatch.setenv("HTTP_PROXY", other.url("").rstrip("/"))
    fetcher = make_fetcher(proxy=proxy.url("").rstrip("/"), allow_private=[], resolver=NoResolver())
    assert (await fetcher.fetch("http://example.test/")).reason is FetchReason.ok
    assert len(proxy.requests) == 1 and other.requests == []


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost/admin",
        "http://LOCALHOST./admin",
        "http://api.localhost/",
        "http://printer.local/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://router.lan/",
        "http://nas.home.arpa/",
        "http://intranet/",  # single-label: resolved by the proxy's search domain
        "http://runsc/",  # in /etc/hosts on this machine (and a single label)
        "http://vm/",
    ],
)
async def test_internal_names_are_refused_before_the_proxy(proxy, make_fetcher, url):
    fetcher = make_fetcher(proxy=proxy.url("").rstrip("/"), allow_private=[], resolver=NoResolver())
    result = await fetcher.fetch(url)
    assert result.reason is FetchReason.blocked_address, result.detail
    assert proxy.requests == []


async def test_hosts_file_names_are_refused_in_proxy_mode(proxy, make_fetcher, tmp_path):
    from app.fetch.address import _hosts_file_names, local_name_reason

    hosts = tmp_path / "hosts"
    hosts.write_text("10.0.0.5 billing.corp.example.com billing # internal\n::1 ip6-localhost\n")
    names = _hosts_file_names(str(hosts))
    assert local_name_reason("billing.corp.example.com", names) and local_name_reason("ip6-localhost", names)
    assert local_name_reason("example.com", names) is None


@pytest.mark.parametrize("url", ["http://user:secret@example.test/", "http://user@example.test/"])
@pytest.mark.parametrize("mode", ["proxy", "direct"])
async def test_urls_with_credentials_are_refused_not_sent_as_basic_auth(proxy, make_fetcher, url, mode):
    kw = {"proxy": proxy.url("").rstrip("/")} if mode == "proxy" else {}
    fetcher = make_fetcher(allow_private=[], resolver=NoResolver(), **kw)
    result = await fetcher.fetch(url)
    assert result.reason is FetchReason.blocked_scheme and "credentials" in result.detail
    assert proxy.requests == []
