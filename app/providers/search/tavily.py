"""Tavily Search API: `POST /search` with `Authorization: Bearer tvly-...` (the current documented
form; the key in the JSON body, `api_key`, is the older one and is not sent).

Request: query, max_results (0-20), search_depth=basic, topic=general, include_domains /
exclude_domains natively, time_range (day | week | month | year) for freshness, include_answer
and include_images off. Answer: `results[]` with title, url, content, score, raw_content and
published_date (the latter mostly for topic=news). Errors: 401 bad key, 400 bad parameters,
429 rate limit, 432 plan limit, 433 pay-as-you-go limit, 5xx.

raw_content is NOT requested by default: it is Tavily's own extraction, so the pipeline would lose
what its fetcher does for every page (hidden-text removal against injected instructions, page
dates from JSON-LD/meta, the robots decision) and pay more per call. With
`include_raw_content=True` the text is kept as `text/plain` and the fetch stage skips the network.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx

from app.domain.types import SearchHit, SearchResult
from app.errors import ProviderLogicalError
from app.providers.search.base import SearchQuery, register_search_provider
from app.providers.search.web_api import (
    call_json_api,
    freshness_bucket,
    require_key,
    result_hits,
)

if TYPE_CHECKING:
    from app.settings import Settings

PROVIDER_NAME = "tavily"
MAX_COUNT = 20
MAX_QUERY_CHARS = 400
MIN_RAW_CONTENT_CHARS = 200  # shorter "pages" are extraction failures; let the fetcher try


def _classify(status: int, detail: str) -> ProviderLogicalError | None:
    if status in (432, 433):  # the account's plan / pay-as-you-go cap: retrying will not help
        return ProviderLogicalError(f"tavily usage limit reached ({status}): {detail}", provider=PROVIDER_NAME)
    return None


class TavilySearch:
    name = PROVIDER_NAME

    def __init__(
        self,
        api_key: str,
        client: httpx.AsyncClient,
        *,
        url: str,
        search_depth: str = "basic",
        include_raw_content: bool = False,
    ):
        self._key = api_key
        self._url = url
        self._client = client
        self._depth = search_depth
        self._raw = include_raw_content

    async def search(self, query: SearchQuery, *, timeout: float) -> SearchResult:
        body: dict[str, Any] = {
            "query": query.text[:MAX_QUERY_CHARS],
            "max_results": max(1, min(query.count, MAX_COUNT)),
            "search_depth": self._depth,
            "topic": "general",
            "include_answer": False,
            "include_images": False,
            # "text" asks for plain text rather than markdown; False asks for none.
            "include_raw_content": "text" if self._raw else False,
        }
        if query.include_domains:
            body["include_domains"] = list(query.include_domains)
        if query.exclude_domains:
            body["exclude_domains"] = list(query.exclude_domains)
        if bucket := freshness_bucket(query.freshness_days):
            body["time_range"] = bucket
        data = await call_json_api(
            self._client,
            self.name,
            "POST",
            self._url,
            timeout=timeout,
            json=body,
            classify=_classify,
            headers={"Authorization": f"Bearer {self._key}", "Accept": "application/json"},
        )
        hits: list[SearchHit] = []
        for item, hit in result_hits(
            data.get("results"),
            query.count,
            self.name,
            url="url",
            title="title",
            snippet="content",
            dates=("published_date",),
        ):
            raw = item.get("raw_content")
            if self._raw and isinstance(raw, str) and len(raw.strip()) >= MIN_RAW_CONTENT_CHARS:
                hit.raw_content, hit.raw_content_type = raw, "text/plain"
            hits.append(hit)
        return SearchResult(provider=self.name, query=query.text, hits=hits)

    async def aclose(self) -> None:
        pass  # the shared client belongs to the lifespan


def _factory(settings: Settings, client: httpx.AsyncClient) -> TavilySearch:
    key = require_key(PROVIDER_NAME, settings.tavily_api_key, "GA_TAVILY_API_KEY")
    return TavilySearch(key, client, url=settings.tavily_url)


register_search_provider(PROVIDER_NAME, _factory)
