"""Tavily Search API provider against a local server speaking Tavily's protocol."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.errors import GroundingError, ProviderLogicalError
from app.providers.search.base import SearchQuery
from app.providers.search.tavily import TavilySearch
from simulators.search_apis import api_hit

LONG_TEXT = "Foo 2.0 shipped on 4 March 2025 with a new parser. " * 10


async def test_sends_the_documented_request(tavily, make_provider):
    provider = make_provider("tavily", **tavily.settings_overrides())
    await provider.search(
        SearchQuery(
            "foo 2.0 release", count=7, include_domains=["foo.org"], exclude_domains=["spam.example"], freshness_days=30
        ),
        timeout=2,
    )

    req = tavily.requests.last()
    assert (req.method, req.path) == ("POST", "/search")
    assert req.headers["authorization"] == f"Bearer {tavily.api_key}"
    assert req.headers["content-type"] == "application/json"
    assert "api_key" not in req.body  # the key travels in the header only (current API)
    assert req.body["query"] == "foo 2.0 release"  # domains go natively, not as site: operators
    assert req.body["max_results"] == 7
    assert req.body["include_domains"] == ["foo.org"] and req.body["exclude_domains"] == ["spam.example"]
    assert req.body["time_range"] == "month"
    assert req.body["include_raw_content"] is False and req.body["search_depth"] == "basic"


@pytest.mark.parametrize(
    "days, expected", [(1, "day"), (7, "week"), (31, "month"), (300, "year"), (5000, None), (None, None)]
)
async def test_freshness_parameter(tavily, make_provider, days, expected):
    provider = make_provider("tavily", **tavily.settings_overrides())
    await provider.search(SearchQuery("q", freshness_days=days), timeout=2)
    assert tavily.requests.last().body.get("time_range") == expected


async def test_maps_results_to_hits(tavily, make_provider):
    tavily.set_results(
        "foo 2.0",
        [
            api_hit(
                "https://news.example/foo", "Foo 2.0 released", "Foo 2.0 shipped.", published="2025-03-04T10:30:00"
            ),
            {
                "title": "ISO date",
                "url": "https://blog.example/foo",
                "content": "c",
                "score": 0.5,
                "published_date": "2025-02-01",
            },
            "https://third.example/x",
        ],
    )
    provider = make_provider("tavily", **tavily.settings_overrides())
    result = await provider.search(SearchQuery("foo 2.0"), timeout=2)

    assert [h.url for h in result.hits] == [
        "https://news.example/foo",
        "https://blog.example/foo",
        "https://third.example/x",
    ]
    assert [h.rank for h in result.hits] == [0, 1, 2]
    assert {h.provider for h in result.hits} == {"tavily"}
    assert (result.hits[0].title, result.hits[0].snippet) == ("Foo 2.0 released", "Foo 2.0 shipped.")
    # the server sends Tavily's RFC 1123 form: "Tue, 04 Mar 2025 10:30:00 GMT"
    assert result.hits[0].published_at == datetime(2025, 3, 4, 10, 30, tzinfo=UTC)
    assert result.hits[1].published_at == datetime(2025, 2, 1, tzinfo=UTC)
    assert result.hits[2].published_at is None
    assert all(h.raw_content is None for h in result.hits)  # not requested by default


async def test_raw_content_is_ignored_unless_requested(tavily, http_client):
    tavily.set_default(
        [
            api_hit("https://a.example/", "A", "a", raw_content=LONG_TEXT),
            api_hit("https://b.example/", "B", "b", raw_content="too short"),
        ]
    )
    url = tavily.url + "/search"
    off = await TavilySearch(tavily.api_key, http_client, url=url).search(SearchQuery("q"), timeout=2)
    assert [h.raw_content for h in off.hits] == [None, None]

    on = await TavilySearch(tavily.api_key, http_client, url=url, include_raw_content=True).search(
        SearchQuery("q"), timeout=2
    )
    assert tavily.requests.last().body["include_raw_content"] == "text"
    assert on.hits[0].raw_content == LONG_TEXT and on.hits[0].raw_content_type == "text/plain"
    assert on.hits[1].raw_content is None  # an extraction that short is a failure: fetch the page


async def test_no_results_is_empty_not_an_error(tavily, make_provider):
    provider = make_provider("tavily", **tavily.settings_overrides())
    assert (await provider.search(SearchQuery("nothing"), timeout=2)).hits == []


async def test_wrong_key_is_logical(tavily, make_provider):
    provider = make_provider("tavily", **{**tavily.settings_overrides(), "tavily_api_key": "tvly-wrong"})
    with pytest.raises(ProviderLogicalError, match="401.*missing or invalid API key"):
        await provider.search(SearchQuery("q"), timeout=2)


async def test_older_body_key_form_is_accepted_by_the_server(tavily, http_client):
    """The test server honours both auth forms, as the real API does."""
    resp = await http_client.post(tavily.url + "/search", json={"query": "q", "api_key": tavily.api_key})
    assert resp.status_code == 200 and resp.json()["results"] == []


@pytest.mark.parametrize("status", [432, 433])
async def test_usage_limits_are_logical(tavily, make_provider, status):
    tavily.fail(status)
    provider = make_provider("tavily", **tavily.settings_overrides())
    with pytest.raises(ProviderLogicalError, match=f"usage limit reached \\({status}\\)"):
        await provider.search(SearchQuery("q"), timeout=2)


def test_missing_key_fails_at_start_up(make_provider):
    with pytest.raises(GroundingError, match="GA_TAVILY_API_KEY"):
        make_provider("tavily", tavily_api_key="")
