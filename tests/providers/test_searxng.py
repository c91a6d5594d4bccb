"""SearXNG provider against the local SearXNG-shaped server."""

from __future__ import annotations

from datetime import datetime

import pytest

from app.errors import GroundingError, ProviderLogicalError
from app.providers.search.base import SearchQuery
from simulators import searx_result


async def test_sends_the_documented_request(searxng, make_provider):
    provider = make_provider("searxng", **searxng.settings_overrides())
    await provider.search(SearchQuery("foo 2.0", include_domains=["foo.org"], freshness_days=7), timeout=2)

    req = searxng.requests.last()
    assert req.method == "GET"
    assert req.params["q"] == "foo 2.0 site:foo.org"
    assert req.params["format"] == "json" and req.params["pageno"] == "1"
    assert req.params["time_range"] == "week"


async def test_maps_results_and_records_unresponsive_engines(searxng, make_provider):
    searxng.set_results(
        "foo 2.0",
        [
            searx_result("https://news.example/foo", "Foo 2.0", "Foo 2.0 shipped", published="2025-03-04T00:00:00"),
            searx_result("https://blog.example/foo", "Foo blog", "more"),
        ],
        unresponsive_engines=[("google", "timeout"), ("brave", "Suspended: too many requests")],
    )
    provider = make_provider("searxng", **searxng.settings_overrides())
    result = await provider.search(SearchQuery("foo 2.0", count=5), timeout=2)

    assert [(h.url, h.rank, h.provider) for h in result.hits] == [
        ("https://news.example/foo", 0, "searxng"),
        ("https://blog.example/foo", 1, "searxng"),
    ]
    assert result.hits[0].published_at == datetime(2025, 3, 4)
    assert result.hits[0].snippet == "Foo 2.0 shipped"
    assert result.unresponsive_engines == ["google", "brave"]


async def test_count_caps_the_hits(searxng, make_provider):
    searxng.set_default([f"https://s{i}.example/" for i in range(12)])
    provider = make_provider("searxng", **searxng.settings_overrides())
    assert len((await provider.search(SearchQuery("q", count=3), timeout=2)).hits) == 3


async def test_no_results_is_empty_not_an_error(searxng, make_provider):
    provider = make_provider("searxng", **searxng.settings_overrides())
    result = await provider.search(SearchQuery("nothing"), timeout=2)
    assert result.hits == [] and result.unresponsive_engines == []


async def test_json_format_not_enabled_is_logical(searxng, make_provider):
    searxng.json_enabled = False
    provider = make_provider("searxng", **searxng.settings_overrides())
    with pytest.raises(ProviderLogicalError, match="format=json"):
        await provider.search(SearchQuery("q"), timeout=2)


def test_missing_url_fails_at_start_up(make_provider):
    with pytest.raises(GroundingError, match="GA_SEARXNG_URL"):
        make_provider("searxng", searxng_url=None)
