"""SearXNG JSON API (`/search?format=json`).

A SearXNG instance answers 403 when the JSON format is not enabled in its settings.yml
(`search.formats: [html, json]`) and 429 when its limiter trips; both are told apart here.
"""

from __future__ import annotations

from datetime import datetime

import httpx

from app.domain.types import SearchHit, SearchResult
from app.errors import ProviderLogicalError, ProviderTechnicalError
from app.providers.retry import RetryLater, retry_after_from_headers
from app.providers.search.base import SearchQuery, register_search_provider
from app.settings import Settings


def _time_range(days: int | None) -> str | None:
    if days is None:
        return None
    if days <= 1:
        return "day"
    if days <= 7:
        return "week"
    if days <= 31:
        return "month"
    if days <= 366:
        return "year"
    return None


def _parse_date(value) -> datetime | None:
    if not value or not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


class SearxngSearch:
    name = "searxng"

    def __init__(self, base_url: str, client: httpx.AsyncClient):
        self._url = base_url.rstrip("/") + "/search"
        self._client = client

    async def search(self, query: SearchQuery, *, timeout: float) -> SearchResult:
        text = query.text
        # SearXNG passes site: through to engines that understand it; the code filter still applies.
        if len(query.include_domains) == 1 and "site:" not in text:
            text = f"{text} site:{query.include_domains[0]}"
        params = {"q": text, "format": "json", "pageno": "1", "safesearch": "0"}
        if tr := _time_range(query.freshness_days):
            params["time_range"] = tr
        try:
            resp = await self._client.get(self._url, params=params, timeout=timeout)
        except httpx.TimeoutException as exc:
            raise ProviderTechnicalError("searxng timed out", provider=self.name) from exc
        except httpx.HTTPError as exc:
            raise ProviderTechnicalError(f"searxng unreachable: {type(exc).__name__}", provider=self.name) from exc
        except (AttributeError, OSError, RuntimeError) as exc:
            # A connection reset right after connect surfaces from inside the connection pool as a bare
            # AttributeError/OSError (httpcore + anyio; seen under the soak's fault proxy): still the
            # network's fault, so retried, counted and fed to the circuit breaker like any other.
            raise ProviderTechnicalError(
                f"searxng connection failed: {type(exc).__name__}", provider=self.name
            ) from exc
        if resp.status_code == 403:
            raise ProviderLogicalError(
                "searxng refused format=json (enable it in settings.yml search.formats)", provider=self.name
            )
        if resp.status_code == 429 or resp.status_code >= 500:
            wait = retry_after_from_headers(resp.headers)
            what = "rate limit (429)" if resp.status_code == 429 else f"answered {resp.status_code}"
            raise RetryLater(f"searxng {what}", provider=self.name, retry_after=wait)
        if resp.status_code != 200:
            raise ProviderLogicalError(f"searxng answered {resp.status_code}", provider=self.name)
        try:
            data = resp.json()
        except ValueError as exc:
            raise ProviderTechnicalError("searxng sent invalid JSON", provider=self.name) from exc
        if not isinstance(data, dict):
            raise ProviderTechnicalError("searxng sent JSON that is not an object", provider=self.name)
        hits = []
        for i, item in enumerate((data.get("results") or [])[: query.count]):
            url = item.get("url") if isinstance(item, dict) else None
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                continue
            hits.append(
                SearchHit(
                    url=url,
                    title=str(item.get("title") or ""),
                    snippet=str(item.get("content") or ""),
                    rank=i,
                    provider=self.name,
                    published_at=_parse_date(item.get("publishedDate")),
                )
            )
        unresponsive = [
            str(e[0]) if isinstance(e, (list, tuple)) and e else str(e) for e in data.get("unresponsive_engines") or []
        ]
        return SearchResult(provider=self.name, query=query.text, hits=hits, unresponsive_engines=unresponsive)

    async def aclose(self) -> None:
        pass  # the shared client belongs to the lifespan


def _factory(settings: Settings, client: httpx.AsyncClient) -> SearxngSearch:
    if not settings.searxng_url:
        from app.errors import GroundingError

        raise GroundingError("GA_SEARCH_PROVIDERS includes searxng but GA_SEARXNG_URL is not set")
    return SearxngSearch(settings.searxng_url, client)


register_search_provider("searxng", _factory)
