"""Brave Search API, web endpoint: `GET /res/v1/web/search` with `X-Subscription-Token`.

Request: q, count (1-20), freshness (pd | pw | pm | py), result_filter=web (no news/video blocks
to pay for), text_decorations=false (no <strong> in snippets). Answer: `web.results[]` with title,
url, description, age ("3 days ago" / "January 5, 2025"), page_age (ISO); `web` is absent when
nothing matched. Brave answers an invalid or missing token with 422 SUBSCRIPTION_TOKEN_INVALID
(not 401), 429 RATE_LIMITED with X-RateLimit-* headers, and 422 VALIDATION for bad parameters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from app.domain.types import SearchResult
from app.errors import ProviderLogicalError
from app.providers.search.base import SearchQuery, register_search_provider
from app.providers.search.web_api import (
    call_json_api,
    freshness_bucket,
    require_key,
    result_hits,
    with_site_operators,
)

if TYPE_CHECKING:
    from app.settings import Settings

PROVIDER_NAME = "brave"
MAX_COUNT = 20  # the web endpoint's documented maximum
MAX_QUERY_CHARS = 400  # longer queries are refused with 422
_FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}


def _classify(status: int, detail: str) -> ProviderLogicalError | None:
    if status == 422 and "SUBSCRIPTION_TOKEN_INVALID" in detail:
        return ProviderLogicalError(
            "brave rejected the API key (422 SUBSCRIPTION_TOKEN_INVALID); check GA_BRAVE_API_KEY",
            provider=PROVIDER_NAME,
        )
    return None


class BraveSearch:
    name = PROVIDER_NAME

    def __init__(self, api_key: str, client: httpx.AsyncClient, *, url: str):
        self._key = api_key
        self._url = url
        self._client = client

    async def search(self, query: SearchQuery, *, timeout: float) -> SearchResult:
        text = with_site_operators(query.text, query.include_domains, query.exclude_domains, max_excludes=3)
        params: dict[str, str | int] = {
            "q": text[:MAX_QUERY_CHARS],
            "count": max(1, min(query.count, MAX_COUNT)),
            "result_filter": "web",
            "text_decorations": "false",
        }
        if bucket := freshness_bucket(query.freshness_days):
            params["freshness"] = _FRESHNESS[bucket]
        data = await call_json_api(
            self._client,
            self.name,
            "GET",
            self._url,
            timeout=timeout,
            params=params,
            classify=_classify,
            headers={"X-Subscription-Token": self._key, "Accept": "application/json"},
        )
        web = data.get("web")
        if not isinstance(web, dict):
            web = {}
        hits = [
            hit
            for _, hit in result_hits(
                web.get("results"),
                query.count,
                self.name,
                url="url",
                title="title",
                snippet="description",
                dates=("page_age", "age"),
            )
        ]
        return SearchResult(provider=self.name, query=query.text, hits=hits)

    async def aclose(self) -> None:
        pass  # the shared client belongs to the lifespan


def _factory(settings: Settings, client: httpx.AsyncClient) -> BraveSearch:
    key = require_key(PROVIDER_NAME, settings.brave_api_key, "GA_BRAVE_API_KEY")
    return BraveSearch(key, client, url=settings.brave_url)


register_search_provider(PROVIDER_NAME, _factory)
