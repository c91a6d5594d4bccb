"""A connection that breaks inside the HTTP pool in an unusual way (the soak saw httpcore + anyio
raise a bare AttributeError on a reset right after connect) is a technical upstream error —
retried, counted, fed to the breaker — not a provider crash."""

from __future__ import annotations

import httpx
import pytest

from app.errors import ProviderTechnicalError
from app.providers.search.base import SearchQuery
from app.providers.search.searxng import SearxngSearch
from app.providers.search.web_api import call_json_api


def _broken(exc: Exception) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


FAULTS = [
    AttributeError("'NoneType' object has no attribute 'getpeername'"),
    ConnectionResetError(104, "reset"),
    RuntimeError("pool closed"),
]


@pytest.mark.parametrize("exc", FAULTS, ids=lambda e: type(e).__name__)
async def test_searxng_maps_pool_faults_to_technical_errors(exc):
    async with _broken(exc) as client:
        with pytest.raises(ProviderTechnicalError, match="connection failed"):
            await SearxngSearch("http://searx.test", client).search(SearchQuery("x"), timeout=1)


@pytest.mark.parametrize("exc", FAULTS, ids=lambda e: type(e).__name__)
async def test_json_apis_map_pool_faults_to_technical_errors(exc):
    async with _broken(exc) as client:
        with pytest.raises(ProviderTechnicalError, match="connection failed"):
            await call_json_api(client, "brave", "GET", "http://brave.test/x", timeout=1, headers={})
