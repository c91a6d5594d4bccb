"""The forward proxy forwards absolute-form requests and CONNECT tunnels, resolves *.test names,
records every URL and refuses denied hosts."""

from __future__ import annotations

import asyncio

import httpx


async def test_forwards_named_hosts_and_records(web, proxy):
    news = web.site("news-a.test")
    blog = web.site("blog-b.test")
    news.add_article("/story", "Story A", ["From news A."])
    blog.add_article("/story", "Story B", ["From blog B."])
    async with httpx.AsyncClient(proxy=proxy.url) as client:
        a = await client.get(news.named_url("/story"))
        b = await client.get(blog.named_url("/story?x=1"))
        posted = await client.post(news.named_url("/form"), content=b"k=v")
    assert a.status_code == 200 and "From news A." in a.text
    assert b.status_code == 200 and "From blog B." in b.text
    assert posted.status_code == 404  # forwarded; the site has no /form
    assert proxy.urls() == [news.named_url("/story"), blog.named_url("/story?x=1"), news.named_url("/form")]
    assert [r.status for r in proxy.requests.all()] == [200, 200, 404]
    assert all(r.resolved == "127.0.0.1" for r in proxy.requests.all())
    served = web.requests.all()
    assert [(r.site, r.path, r.query, r.method) for r in served] == [
        ("news-a.test", "/story", "", "GET"),
        ("blog-b.test", "/story", "x=1", "GET"),
        ("news-a.test", "/form", "", "POST"),
    ]
    assert "proxy-connection" not in served[0].headers


async def test_deny_and_unreachable(web, proxy):
    proxy.deny("*.evil.test")
    async with httpx.AsyncClient(proxy=proxy.url) as client:
        denied = await client.get(f"http://www.evil.test:{web.port}/")
        unreachable = await client.get("http://127.0.0.1:1/")
    assert denied.status_code == 403 and "rejected" in denied.text
    assert unreachable.status_code == 502
    records = proxy.requests.all()
    assert records[0].denied and records[0].host == "www.evil.test"
    assert not records[1].denied and records[1].status == 502
    assert web.requests.all() == []


async def test_connect_tunnel(web, proxy):
    site = web.site("tunnel.test")
    site.add_page("/t", "<p>through the tunnel</p>")
    reader, writer = await asyncio.open_connection(proxy.host, proxy.port)
    target = f"tunnel.test:{web.port}"
    writer.write(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
    writer.write(f"GET /t HTTP/1.1\r\nHost: {target}\r\nConnection: close\r\n\r\n".encode())
    reply = await asyncio.wait_for(reader.read(-1), 5)
    writer.close()
    assert reply.startswith(b"HTTP/1.1 200") and b"through the tunnel" in reply
    assert proxy.requests.last().method == "CONNECT" and proxy.requests.last().url == target
    proxy.deny("tunnel.test")
    reader, writer = await asyncio.open_connection(proxy.host, proxy.port)
    writer.write(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    refused = await asyncio.wait_for(reader.read(-1), 5)
    writer.close()
    assert refused.startswith(b"HTTP/1.1 403")
