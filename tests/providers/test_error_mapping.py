"""The error split every search provider must honour (app/errors.py): technical failures (timeout,
refused connection, 429, 5xx) let the chain move on and may be retried; logical ones (bad key,
forbidden) fail at once. Same cases for all four providers, against their local servers."""

from __future__ import annotations

import time

import pytest

from app.errors import ProviderLogicalError, ProviderTechnicalError
from app.providers.search.base import SearchQuery
from simulators import free_port

PROVIDERS = ["searxng", "brave", "tavily", "serper"]


@pytest.fixture(params=PROVIDERS)
def server(request):
    return request.getfixturevalue(request.param)


def _provider(server, make_provider, **extra):
    name = server.settings_overrides()["search_providers"][0]
    return make_provider(name, **{**server.settings_overrides(), **extra})


@pytest.mark.parametrize("status", [429, 500, 502, 503])
async def test_rate_limit_and_server_errors_are_technical(server, make_provider, status):
    server.fail(status, retry_after="7" if status == 429 else None)
    with pytest.raises(ProviderTechnicalError) as err:
        await _provider(server, make_provider).search(SearchQuery("q"), timeout=2)
    assert str(status) in err.value.message and err.value.technical


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_refusals_are_logical(server, make_provider, status):
    server.fail(status)
    with pytest.raises(ProviderLogicalError) as err:
        await _provider(server, make_provider).search(SearchQuery("q"), timeout=2)
    assert not err.value.technical


async def test_timeout_is_technical(server, make_provider):
    server.latency_s = 1.0
    started = time.perf_counter()
    with pytest.raises(ProviderTechnicalError, match="timed out"):
        await _provider(server, make_provider).search(SearchQuery("q"), timeout=0.2)
    assert time.perf_counter() - started < 0.9  # the provider's timeout held, not the server's delay


async def test_connection_refused_is_technical(server, make_provider):
    name = server.settings_overrides()["search_providers"][0]
    dead = f"http://127.0.0.1:{free_port()}"
    url_field = "searxng_url" if name == "searxng" else f"{name}_url"
    provider = _provider(server, make_provider, **{url_field: dead + "/search"})
    with pytest.raises(ProviderTechnicalError, match="unreachable: ConnectError"):
        await provider.search(SearchQuery("q"), timeout=2)


async def test_rate_limit_answer_carries_the_apis_headers(brave, http_client):
    """Brave's 429 as the real API sends it: an ErrorResponse body and the X-RateLimit-* headers."""
    brave.fail(429)
    resp = await http_client.get(
        brave.url + "/res/v1/web/search", params={"q": "q"}, headers={"X-Subscription-Token": brave.api_key}
    )
    assert resp.status_code == 429
    assert resp.json()["error"]["code"] == "RATE_LIMITED"
    expected = {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-policy"}
    assert expected <= set(resp.headers)
