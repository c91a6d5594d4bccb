"""robots.txt: RFC 9309 status mapping, our agent token, per-origin cache, limits on the robots fetch."""

from __future__ import annotations

import asyncio

import pytest

from app.domain.types import FetchReason
from app.fetch.robots import ALLOW_ALL, RobotsCache, agent_token
from tests.fetch.conftest import FakeResolver, respond


async def page(request, writer):
    await respond(writer, 200, b"<html><body>page</body></html>")


def robots_body(text: str, status: int = 200):
    async def handler(request, writer):
        await respond(writer, status, text.encode(), content_type="text/plain")

    return handler


async def test_robots_disallow_is_obeyed(server, make_fetcher):
    server.routes["/robots.txt"] = robots_body("User-agent: *\nDisallow: /private\n")
    server.fallback = page
    fetcher = make_fetcher(ports=[server.port], respect_robots=True)
    blocked = await fetcher.fetch(server.url("/private/doc"))
    assert blocked.reason is FetchReason.robots
    assert server.hits("/private/doc") == 0
    assert (await fetcher.fetch(server.url("/public"))).reason is FetchReason.ok


async def test_group_for_our_agent_token_applies(server, make_fetcher):
    server.routes["/robots.txt"] = robots_body(
        "User-agent: GroundedAnswerBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n"
    )
    server.fallback = page
    fetcher = make_fetcher(ports=[server.port], respect_robots=True)
    assert (await fetcher.fetch(server.url("/a"))).reason is FetchReason.robots
    other = make_fetcher(ports=[server.port], respect_robots=True, user_agent="SomeOtherBot/2")
    assert (await other.fetch(server.url("/a"))).reason is FetchReason.ok


async def test_robots_404_allows_everything(server, make_fetcher):
    server.fallback = page
    server.routes["/robots.txt"] = robots_body("gone", status=404)
    result = await make_fetcher(ports=[server.port], respect_robots=True).fetch(server.url("/a"))
    assert result.reason is FetchReason.ok
    assert server.hits("/robots.txt") == 1


@pytest.mark.parametrize("status", [500, 503, 429])
async def test_robots_server_error_disallows_everything(server, make_fetcher, status):
    server.fallback = page
    server.routes["/robots.txt"] = robots_body("oops", status=status)
    result = await make_fetcher(ports=[server.port], respect_robots=True).fetch(server.url("/a"))
    assert result.reason is FetchReason.robots
    assert server.hits("/a") == 0


async def test_robots_network_error_disallows(server, make_fetcher):
    async def reset(request, writer):
        writer.transport.abort()

    server.fallback = page
    server.routes["/robots.txt"] = reset
    result = await make_fetcher(ports=[server.port], respect_robots=True).fetch(server.url("/a"))
    assert result.reason is FetchReason.robots and server.hits("/a") == 0


async def test_robots_is_cached_per_origin(server, make_fetcher):
    server.routes["/robots.txt"] = robots_body("User-agent: *\nDisallow: /no\n")
    server.fallback = page
    fetcher = make_fetcher(ports=[server.port], respect_robots=True)
    results = await asyncio.gather(*(fetcher.fetch(server.url(f"/p{i}")) for i in range(5)))
    results.append(await fetcher.fetch(server.url("/no")))
    assert [r.reason for r in results] == [FetchReason.ok] * 5 + [FetchReason.robots]
    assert server.hits("/robots.txt") == 1  # concurrent first fetches share one load


async def test_robots_cache_expires_after_ttl(server, make_fetcher):
    server.routes["/robots.txt"] = robots_body("User-agent: *\nAllow: /\n")
    server.fallback = page
    fetcher = make_fetcher(ports=[server.port], respect_robots=True, robots_ttl_s=0.2)
    await fetcher.fetch(server.url("/a"))
    await asyncio.sleep(0.3)
    await fetcher.fetch(server.url("/b"))
    assert server.hits("/robots.txt") == 2


async def test_robots_redirect_to_internal_address_is_refused(server, make_fetcher):
    """The robots fetch follows the same address rule: a redirect to loopback is not followed."""

    async def redirect(request, writer):
        await respond(writer, 301, b"", headers={"Location": f"http://127.0.0.1:{server.port}/real"})

    server.routes["/robots.txt"] = redirect
    server.fallback = page
    resolver = FakeResolver({"site.test": [["127.0.0.1"]]})
    fetcher = make_fetcher(ports=[server.port], respect_robots=True, allow_private=["site.test"], resolver=resolver)
    result = await fetcher.fetch(server.url("/a", host="site.test"))
    assert result.reason is FetchReason.robots  # unreachable robots = disallow
    assert server.hits("/real") == 0 and server.hits("/a") == 0


async def test_huge_robots_is_truncated_not_fatal(server, make_fetcher):
    body = "User-agent: *\nDisallow: /secret\n" + "# padding\n" * 200_000  # ~2 MB
    server.routes["/robots.txt"] = robots_body(body)
    server.fallback = page
    fetcher = make_fetcher(ports=[server.port], respect_robots=True)
    assert (await fetcher.fetch(server.url("/secret"))).reason is FetchReason.robots
    assert (await fetcher.fetch(server.url("/open"))).reason is FetchReason.ok


async def test_robots_off(server, make_fetcher):
    server.routes["/robots.txt"] = robots_body("User-agent: *\nDisallow: /\n")
    server.fallback = page
    result = await make_fetcher(ports=[server.port], respect_robots=False).fetch(server.url("/a"))
    assert result.reason is FetchReason.ok and server.hits("/robots.txt") == 0


async def test_unreachable_robots_cached_for_shorter_time():
    now = [0.0]
    cache = RobotsCache(ttl_s=86400, error_ttl_s=600, clock=lambda: now[0])
    loads = []

    async def failing(origin):
        loads.append(origin)
        from app.fetch.robots import DISALLOW_ALL

        return DISALLOW_ALL

    async def fine(origin):
        loads.append(origin)
        return ALLOW_ALL

    await cache.rules_for("http://a:80", failing)
    now[0] = 599
    await cache.rules_for("http://a:80", failing)
    assert len(loads) == 1
    now[0] = 601
    await cache.rules_for("http://a:80", fine)
    assert len(loads) == 2
    now[0] = 601 + 86399
    await cache.rules_for("http://a:80", fine)
    assert len(loads) == 2
    now[0] = 601 + 86401
    await cache.rules_for("http://a:80", fine)
    assert len(loads) == 3


def test_agent_token():
    assert agent_token("GroundedAnswerBot/0.1") == "GroundedAnswerBot"
    assert agent_token("GroundedAnswerBot/0.1 (+https://x)") == "GroundedAnswerBot"
