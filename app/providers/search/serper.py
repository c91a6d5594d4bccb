"""Serper (Google results): `POST /search` with `X-API-KEY`.

Request: q (with `site:` for a single include domain and `-site:` for excluded ones, both Google
operators), num (1-100), tbs=qdr:d|w|m|y for freshness. Answer: `organic[]` with title, link,
snippet, position and sometimes date ("3 days ago", "Jan 5, 2025"); also knowledgeGraph,
answerBox, peopleAlsoAsk, relatedSearches (not used: they are not pages). Errors: 403
{"message": "Unauthorized.", "statusCode": 403} for a bad key, 400 for bad parameters or no
credits left, 429, 5xx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx

from app.domain.types import SearchResult
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

PROVIDER_NAME = "serper"
MAX_COUNT = 100
_TBS = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}


class SerperSearch:
    name = PROVIDER_NAME

    def __init__(self, api_key: str, client: httpx.AsyncClient, *, url: str):
        self._key = api_key
        self._url = url
        self._client = client

    async def search(self, query: SearchQuery, *, timeout: float) -> SearchResult:
        body: dict[str, Any] = {
            "q": with_site_operators(query.text, query.include_domains, query.exclude_domains, max_excludes=5),
            "num": max(1, min(query.count, MAX_COUNT)),
        }
        if bucket := freshness_bucket(query.freshness_days):
            body["tbs"] = _TBS[bucket]
        data = await call_json_api(
            self._client,
            self.name,
            "POST",
            self._url,
            timeout=timeout,
            json=body,
            headers={"X-API-KEY": self._key, "Accept": "application/json"},
        )
        hits = [
            hit
            for _, hit in result_hits(
                data.get("organic"),
                query.count,
                self.name,
                url="link",
                title="title",
                snippet="snippet",
                dates=("date",),
            )
        ]
        return SearchResult(provider=self.name, query=query.text, hits=hits)

    async def aclose(self) -> None:
        pass  # the shared client belongs to the lifespan


def _factory(settings: Settings, client: httpx.AsyncClient) -> SerperSearch:
    key = require_key(PROVIDER_NAME, settings.serper_api_key, "GA_SERPER_API_KEY")
    return SerperSearch(key, client, url=settings.serper_url)


register_search_provider(PROVIDER_NAME, _factory)
