"""Serper (Google results) provider against a local server speaking Serper's protocol."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.errors import GroundingError, ProviderLogicalError
from app.providers.search.base import SearchQuery
from simulators.search_apis import api_hit


async def test_sends_the_documented_request(serper, make_provider):
    provider = make_provider("serper", **serper.settings_overrides())
    await provider.search(
        SearchQuery(
            "foo 2.0 release", count=8, freshness_days=1, include_domains=["foo.org"], exclude_domains=["spam.example"]
        ),
        timeout=2,
    )

    req = serper.requests.last()
    assert (req.method, req.path) == ("POST", "/search")
    assert req.headers["x-api-key"] == serper.api_key
    assert req.headers["content-type"] == "application/json"
    assert req.body == {"q": "foo 2.0 release site:foo.org -site:spam.example", "num": 8, "tbs": "qdr:d"}


@pytest.mark.parametrize(
    "days, expected", [(1, "qdr:d"), (6, "qdr:w"), (20, "qdr:m"), (366, "qdr:y"), (400, None), (None, None)]
)
async def test_freshness_parameter(serper, make_provider, days, expected):
    provider = make_provider("serper", **serper.settings_overrides())
    await provider.search(SearchQuery("q", freshness_days=days), timeout=2)
    assert serper.requests.last().body.get("tbs") == expected


async def test_maps_results_to_hits(serper, make_provider):
    serper.set_results(
        "foo 2.0",
        [
            api_hit("https://news.example/foo", "Foo 2.0 released", "Foo 2.0 shipped ...", published="2025-01-05"),
            {
                "title": "Recent",
                "link": "https://blog.example/foo",
                "snippet": "s",
                "date": "3 days ago",
                "position": 2,
            },
            {
                "title": "Odd date",
                "link": "https://third.example/x",
                "snippet": "s",
                "date": "last spring",
                "position": 3,
            },
            {"title": "No link", "snippet": "s", "position": 4},
        ],
    )
    provider = make_provider("serper", **serper.settings_overrides())
    result = await provider.search(SearchQuery("foo 2.0"), timeout=2)

    assert [h.url for h in result.hits] == [
        "https://news.example/foo",
        "https://blog.example/foo",
        "https://third.example/x",
    ]
    assert [h.rank for h in result.hits] == [0, 1, 2]
    assert {h.provider for h in result.hits} == {"serper"}
    # the server sends Serper's "Jan 5, 2025" form
    assert result.hits[0].published_at == datetime(2025, 1, 5, tzinfo=UTC)
    age = datetime.now(UTC) - result.hits[1].published_at
    assert timedelta(days=2, hours=23) < age < timedelta(days=3, hours=1)
    assert result.hits[2].published_at is None


async def test_count_caps_the_hits(serper, make_provider):
    serper.set_default([f"https://s{i}.example/" for i in range(15)])
    provider = make_provider("serper", **serper.settings_overrides())
    assert len((await provider.search(SearchQuery("q", count=4), timeout=2)).hits) == 4
    assert serper.requests.last().body["num"] == 4


async def test_no_results_is_empty_not_an_error(serper, make_provider):
    provider = make_provider("serper", **serper.settings_overrides())
    assert (await provider.search(SearchQuery("nothing"), timeout=2)).hits == []


async def test_wrong_key_is_logical(serper, make_provider):
    provider = make_provider("serper", **{**serper.settings_overrides(), "serper_api_key": "wrong"})
    with pytest.raises(ProviderLogicalError, match="rejected the API key \\(403\\): Unauthorized"):
        await provider.search(SearchQuery("q"), timeout=2)


async def test_no_credits_is_logical(serper, make_provider):
    serper.fail(400)
    provider = make_provider("serper", **serper.settings_overrides())
    with pytest.raises(ProviderLogicalError, match="400: Not enough credits"):
        await provider.search(SearchQuery("q"), timeout=2)


def test_missing_key_fails_at_start_up(make_provider):
    with pytest.raises(GroundingError, match="GA_SERPER_API_KEY"):
        make_provider("serper", serper_api_key=None)
