"""The SearXNG-shaped server answers SearXNG's JSON shape and follows its script."""

from __future__ import annotations

import asyncio
import time

import httpx

from simulators import ScriptedSearch, searx_result

RESULT_KEYS = {
    "url",
    "title",
    "content",
    "engine",
    "engines",
    "score",
    "category",
    "publishedDate",
    "parsed_url",
    "positions",
    "template",
}


async def test_json_shape_and_recording(searxng):
    searxng.set_results(
        "python 3.13 release",
        [
            searx_result(
                "https://docs.python.org/3.13/whatsnew/3.13.html",
                "What's New In Python 3.13",
                "Python 3.13 was released on October 7, 2024.",
                published="2024-10-07T00:00:00",
                engines=["duckduckgo", "bing"],
            ),
            {"url": "https://example.org/news", "title": "News"},
            "https://example.net/bare",
        ],
        unresponsive_engines=[("google", "timeout")],
        suggestions=["python 3.13 changes"],
    )
    async with httpx.AsyncClient() as client:
        resp = await client.get(
            searxng.url + "/search",
            params={
                "q": "python 3.13 release",
                "format": "json",
                "time_range": "year",
                "language": "en",
                "pageno": "1",
                "categories": "general",
            },
        )
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("application/json")
    data = resp.json()
    assert set(data) == {
        "query",
        "number_of_results",
        "results",
        "answers",
        "corrections",
        "infoboxes",
        "suggestions",
        "unresponsive_engines",
    }
    assert data["query"] == "python 3.13 release"
    assert data["unresponsive_engines"] == [["google", "timeout"]]
    assert data["suggestions"] == ["python 3.13 changes"]
    first, second, third = data["results"]
    assert RESULT_KEYS <= set(first)
    assert first["engines"] == ["duckduckgo", "bing"] and first["positions"] == [1, 1]
    assert first["parsed_url"][:3] == ["https", "docs.python.org", "/3.13/whatsnew/3.13.html"]
    assert first["publishedDate"] == "2024-10-07T00:00:00"
    assert second["publishedDate"] is None and second["positions"] == [2]
    assert third["url"] == "https://example.net/bare" and RESULT_KEYS <= set(third)
    req = searxng.requests.last()
    assert req.method == "GET" and req.query == "python 3.13 release"
    assert req.params["time_range"] == "year" and req.params["language"] == "en"
    assert req.params["categories"] == "general"


async def test_post_form_default_function_and_paging(searxng):
    seen = []

    def fallback(query, params):
        seen.append((query, params.get("pageno")))
        return ScriptedSearch(results=[{"url": f"https://example.org/{query}"}], answers=["42"])

    searxng.set_default(fallback)
    searxng.set_results("exact", ["https://a.example/1"])
    async with httpx.AsyncClient() as client:
        other = (
            await client.post(searxng.url + "/search", data={"q": "other", "format": "json", "pageno": "2"})
        ).json()
        exact_p2 = (
            await client.get(searxng.url + "/search", params={"q": "exact", "format": "json", "pageno": 2})
        ).json()
    assert other["results"][0]["url"] == "https://example.org/other" and other["answers"] == ["42"]
    assert seen == [("other", "2")]
    assert exact_p2["results"] == []  # scripted lists are page 1 only
    assert searxng.requests.all()[0].method == "POST"
    assert searxng.queries() == ["other", "exact"]
    assert len(searxng.requests.wait_for(2, timeout_s=0.1)) == 2
    assert searxng.requests.wait_for(1, timeout_s=0.05, where=lambda r: r.query == "none") == []


async def test_unscripted_query_is_empty_not_an_error(searxng):
    async with httpx.AsyncClient() as client:
        data = (await client.get(searxng.url + "/search", params={"q": "nothing", "format": "json"})).json()
    assert data["results"] == [] and data["number_of_results"] == 0


async def test_failures_json_disabled_and_missing_query(searxng):
    searxng.set_results("q", ["https://a.example/"])
    url = searxng.url + "/search"
    async with httpx.AsyncClient() as client:
        searxng.fail(429, times=2, retry_after="3")
        first = await client.get(url, params={"q": "q", "format": "json"})
        second = await client.get(url, params={"q": "q", "format": "json"})
        third = await client.get(url, params={"q": "q", "format": "json"})
        assert (first.status_code, second.status_code, third.status_code) == (429, 429, 200)
        assert first.headers["retry-after"] == "3"

        searxng.fail(500, times=None)
        assert (await client.get(url, params={"q": "q", "format": "json"})).status_code == 500
        assert (await client.get(url, params={"q": "q", "format": "json"})).status_code == 500
        searxng.reset()

        searxng.json_enabled = False
        assert (await client.get(url, params={"q": "q", "format": "json"})).status_code == 403
        assert (await client.get(url, params={"q": "q", "format": "csv"})).status_code == 403
        searxng.json_enabled = True
        assert (await client.get(url, params={"q": "", "format": "json"})).status_code == 400


async def test_delay_and_latency_knobs(searxng):
    searxng.set_results("slow", ["https://a.example/"], delay_s=0.3)
    async with httpx.AsyncClient() as client:
        with_timeout = client.get(searxng.url + "/search", params={"q": "slow", "format": "json"}, timeout=0.1)
        try:
            await with_timeout
            raise AssertionError("the slow query answered within the client's timeout")
        except httpx.ReadTimeout:
            pass
        searxng.latency_s = 0.05
        start = time.perf_counter()
        await asyncio.gather(
            *[client.get(searxng.url + "/search", params={"q": f"x{i}", "format": "json"}) for i in range(4)]
        )
        elapsed = time.perf_counter() - start
    assert 0.05 <= elapsed < 0.3  # concurrent requests wait concurrently
