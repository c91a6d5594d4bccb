"""Fixtures for the search provider tests: an httpx client and `make_provider` building a provider
through the registry exactly as the service does at start-up. The Brave, Tavily and Serper servers
are fixtures of tests/conftest.py, like `searxng`."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

# Importing the modules registers "brave", "tavily", "serper" (and "searxng") in this process, so the
# service started by `service_factory` in the same process can use them too.
import app.providers.search.brave  # noqa: F401
import app.providers.search.searxng  # noqa: F401
import app.providers.search.serper  # noqa: F401
import app.providers.search.tavily  # noqa: F401
from app.providers.search.base import SearchProvider, build_search_provider
from app.settings import Settings


@pytest.fixture
async def http_client():
    # Like the service's upstream client: no proxy from the environment.
    async with httpx.AsyncClient(trust_env=False) as client:
        yield client


@pytest.fixture
def make_provider(http_client):
    """make_provider(name, **settings_overrides) -> the registered provider, built from Settings."""

    def make(name: str, **overrides: Any) -> SearchProvider:
        return build_search_provider(name, Settings(**overrides), http_client)

    return make
