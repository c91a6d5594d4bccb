"""Brave Search API provider against a local server speaking Brave's protocol."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.errors import GroundingError, ProviderLogicalError
from app.providers.search.base import SearchQuery
from simulators.search_apis import api_hit


async def test_sends_the_documented_request(brave, make_provider):
    provider = make_provider("brave", **brave.settings_overrides())
    await provider.search(SearchQuery("foo 2.0 release", count=5, freshness_days=7), timeout=2)

    req = brave.requests.last()
    assert (req.method, req.path) == ("GET", "/res/v1/web/search")
    assert req.headers["x-subscription-token"] == brave.api_key
    assert req.headers["accept"] == "application/json"
    assert req.params["q"] == "foo 2.0 release"
    assert req.params["count"] == "5"
    assert req.params["freshness"] == "pw"
    assert req.params["result_filter"] == "web"


async def test_maps_results_to_hits(brave, make_provider):
    brave.set_results(
        "foo 2.0",
        [
            api_hit(
                "https://news.example/foo",
                "Foo <strong>2.0</strong> released",
                "Foo 2.0 &amp; more",
                published="2025-03-04T09:30:00",
            ),
            {"title": "Relative age only", "url": "https://blog.example/foo", "description": "d", "age": "3 days ago"},
            {"title": "Not a web page", "url": "javascript:alert(1)", "description": "x"},
            "https://third.example/x",
        ],
    )
    provider = make_provider("brave", **brave.settings_overrides())
    result = await provider.search(SearchQuery("foo 2.0"), timeout=2)

    assert result.provider == "brave" and result.query == "foo 2.0"
    assert [h.url for h in result.hits] == [
        "https://news.example/foo",
        "https://blog.example/foo",
        "https://third.example/x",
    ]
    assert [h.rank for h in result.hits] == [0, 1, 2]
    first = result.hits[0]
    assert (first.title, first.snippet, first.provider) == ("Foo 2.0 released", "Foo 2.0 & more", "brave")
    assert first.published_at == datetime(2025, 3, 4, 9, 30, tzinfo=UTC)
    age = datetime.now(UTC) - result.hits[1].published_at
    assert timedelta(days=2, hours=23) < age < timedelta(days=3, hours=1)
    assert result.hits[2].published_at is None and first.raw_content is None


async def test_count_caps_the_hits(brave, make_provider):
    brave.set_default([f"https://s{i}.example/" for i in range(30)])
    provider = make_provider("brave", **brave.settings_overrides())
    result = await provider.search(SearchQuery("many", count=50), timeout=2)
    assert brave.requests.last().params["count"] == "20"  # the API's maximum
    assert len(result.hits) == 20
    result = await provider.search(SearchQuery("many", count=3), timeout=2)
    assert len(result.hits) == 3


@pytest.mark.parametrize(
    "days, expected", [(1, "pd"), (3, "pw"), (7, "pw"), (30, "pm"), (365, "py"), (1000, None), (None, None)]
)
async def test_freshness_parameter(brave, make_provider, days, expected):
    provider = make_provider("brave", **brave.settings_overrides())
    await provider.search(SearchQuery("q", freshness_days=days), timeout=2)
    assert brave.requests.last().params.get("freshness") == expected


async def test_domain_filters_become_site_operators(brave, make_provider):
    provider = make_provider("brave", **brave.settings_overrides())
    await provider.search(
        SearchQuery("foo", include_domains=["python.org"], exclude_domains=["spam.example"]), timeout=2
    )
    assert brave.requests.last().params["q"] == "foo site:python.org -site:spam.example"
    await provider.search(SearchQuery("foo", include_domains=["a.example", "b.example"]), timeout=2)
    assert brave.requests.last().params["q"] == "foo"  # several includes: enforced in code only


async def test_no_results_is_empty_not_an_error(brave, make_provider):
    provider = make_provider("brave", **brave.settings_overrides())
    result = await provider.search(SearchQuery("nothing matches this"), timeout=2)
    assert result.hits == []


async def test_invalid_token_is_a_logical_error_naming_the_setting(brave, make_provider):
    provider = make_provider("brave", **{**brave.settings_overrides(), "brave_api_key": "BSA-wrong"})
    with pytest.raises(ProviderLogicalError) as err:
        await provider.search(SearchQuery("q"), timeout=2)
    assert "SUBSCRIPTION_TOKEN_INVALID" in err.value.message and "GA_BRAVE_API_KEY" in err.value.message
    assert "BSA-wrong" not in err.value.message


async def test_validation_error_is_logical(brave, make_provider):
    brave.fail(422)
    provider = make_provider("brave", **brave.settings_overrides())
    with pytest.raises(ProviderLogicalError, match="422.*VALIDATION"):
        await provider.search(SearchQuery("q"), timeout=2)


def test_missing_key_fails_at_start_up(make_provider):
    with pytest.raises(GroundingError, match="GA_BRAVE_API_KEY"):
        make_provider("brave", brave_api_key=None)
