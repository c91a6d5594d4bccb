"""The test web serves scripted sites by address and by Host name, with every scripted quirk."""

from __future__ import annotations

import gzip
import time
from datetime import date

import httpx
import pytest

from simulators import CANARY, add_near_duplicates_across


async def test_sites_are_distinct_hosts_on_one_port(web):
    a, b = web.site("news-a.test"), web.site("blog-b.test")
    assert a.ip != b.ip and a.port == b.port == web.port
    assert web.site("News-A.test") is a
    a.add_page("/x", "<p>site A</p>")
    b.add_page("/x", "<p>site B</p>")
    web.add_page("/x", "<p>default site</p>")
    async with httpx.AsyncClient() as client:
        texts = [(await client.get(u)).text for u in (a.url_for("/x"), b.url_for("/x"), web.url + "/x")]
        by_name = await client.get(web.url + "/x", headers={"host": f"blog-b.test:{web.port}"})
    assert texts == ["<p>site A</p>", "<p>site B</p>", "<p>default site</p>"]
    assert by_name.text == "<p>site B</p>"  # virtual hosting by Host header
    hosts = [(r.site, r.host) for r in web.requests.all()]
    assert hosts[0] == ("news-a.test", f"{a.ip}:{web.port}")
    assert hosts[3] == ("blog-b.test", f"blog-b.test:{web.port}")
    assert web.settings_overrides()["fetch_allowed_ports"] == [str(web.port)]


async def test_article_dates_and_conditional_get(web):
    site = web.site("news-a.test")
    url = site.add_article(
        "/a",
        "Release 2.0",
        ["Version 2.0 shipped.", "More text."],
        published=date(2025, 3, 4),
        modified="2025-03-05",
        author="Ada",
        conditional=True,
        last_modified="Wed, 05 Mar 2025 10:00:00 GMT",
        cache_control="max-age=60",
    )
    async with httpx.AsyncClient() as client:
        first = await client.get(url)
        etag = first.headers["etag"]
        cached = await client.get(url, headers={"if-none-match": etag})
        changed = await client.get(url, headers={"if-none-match": '"other"'})
        ims = "Thu, 06 Mar 2025 00:00:00 GMT"
        by_date = await client.get(url, headers={"if-modified-since": ims})
        both = await client.get(url, headers={"if-modified-since": ims, "if-none-match": '"x"'})
    html = first.text
    assert '"datePublished": "2025-03-04"' in html and '"dateModified": "2025-03-05"' in html
    assert '<meta property="article:published_time" content="2025-03-04">' in html
    assert "<h1>Release 2.0</h1>" in html and "<p>Version 2.0 shipped.</p>" in html
    assert first.headers["cache-control"] == "max-age=60"
    assert cached.status_code == 304 and cached.content == b"" and cached.headers["etag"] == etag
    assert changed.status_code == 200
    assert by_date.status_code == 304
    assert both.status_code == 200  # If-None-Match takes precedence over the date (RFC 9110)
    assert site.not_modified_count("/a") == 2 and site.not_modified_count() == 2


async def test_redirect_chains(web):
    site = web.site()
    final = site.add_page("/final", "<p>arrived</p>")
    site.add_redirect_chain("/rel", "/final", hops=3)
    site.add_redirect_chain("/abs", "/final", hops=2, status=301, absolute=True)
    async with httpx.AsyncClient(follow_redirects=True) as client:
        rel = await client.get(site.url_for("/rel"))
        abs_ = await client.get(site.url_for("/abs"))
        first_hop = await client.get(site.url_for("/rel"), follow_redirects=False)
    assert str(rel.url) == final and rel.text == "<p>arrived</p>" and len(rel.history) == 3
    assert [r.status_code for r in abs_.history] == [301, 301]
    assert first_hop.status_code == 302 and first_hop.headers["location"] == "/rel/hop1"
    assert abs_.history[0].headers["location"] == site.url_for("/abs/hop1")


async def test_slow_and_trickle_pages(web):
    web.add_slow("/slow", 0.4)
    web.add_trickle("/trickle", b"0123456789", interval_ms=30)
    async with httpx.AsyncClient() as client:
        with pytest.raises(httpx.ReadTimeout):
            await client.get(web.url + "/slow", timeout=0.1)
        start = time.perf_counter()
        trickled = await client.get(web.url + "/trickle")
        elapsed = time.perf_counter() - start
    assert trickled.content == b"0123456789"
    assert 0.25 < elapsed < 2.0  # ten bytes, 30 ms apart


async def test_hostile_bodies(web):
    web.add_gzip_bomb("/bomb", decompressed_bytes=5_000_000)
    web.add_length_lie("/lie", claimed=10**10)
    web.add_huge("/huge", total_bytes=2_000_000)
    web.add_binary("/img.png")
    async with httpx.AsyncClient() as client:
        async with client.stream("GET", web.url + "/bomb") as bomb:
            wire = int(bomb.headers["content-length"])
            inflated = b"".join([c async for c in bomb.aiter_bytes()])
        assert bomb.headers["content-encoding"] == "gzip" and wire < 20_000
        assert len(inflated) == 5_000_000 and len(gzip.compress(inflated)) > 0
        async with client.stream("GET", web.url + "/lie") as lie:
            assert lie.headers["content-length"] == str(10**10)
            with pytest.raises(httpx.RemoteProtocolError):
                await lie.aread()
        huge = await client.get(web.url + "/huge")
        assert "content-length" not in huge.headers and len(huge.content) >= 2_000_000
        png = await client.get(web.url + "/img.png")
    assert png.headers["content-type"] == "image/png" and png.content.startswith(b"\x89PNG")


async def test_robots_hostile_and_near_duplicates(web):
    a, b, c = web.site("a.test"), web.site("b.test"), web.site("c.test")
    b.set_robots("User-agent: *\nDisallow: /private\n")
    c.set_robots(None)
    a.add_hostile("/h", "Normal title", ["A normal paragraph."])
    urls = add_near_duplicates_across([a, b, c], "/dup", "Same story", ["Core sentence one.", "Core sentence two."])
    async with httpx.AsyncClient() as client:
        robots = [await client.get(s.url_for("/robots.txt")) for s in (a, b, c)]
        hostile = (await client.get(a.url_for("/h"))).text
        copies = [(await client.get(u)).text for u in urls]
        missing = await client.get(a.url_for("/nope"))
    assert robots[0].text == "User-agent: *\nDisallow:\n"
    assert "Disallow: /private" in robots[1].text and robots[2].status_code == 404
    assert hostile.count(CANARY) >= 5 and "display:none" in hostile
    assert "A normal paragraph." in hostile
    assert len({u.split("/")[2] for u in urls}) == 3
    assert all("Core sentence two." in t for t in copies) and copies[0] != copies[1]
    assert missing.status_code == 404


async def test_reset_forgets_sites_pages_and_requests(web):
    site = web.site("gone.test")
    site.add_page("/p", "x")
    async with httpx.AsyncClient() as client:
        await client.get(site.url_for("/p"))
    web.reset()
    assert web.requests.all() == []
    fresh = web.site("gone.test")
    async with httpx.AsyncClient() as client:
        assert (await client.get(fresh.url_for("/p"))).status_code == 404
