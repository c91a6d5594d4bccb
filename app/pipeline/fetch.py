"""Fetch: the top candidates by the project's ranking, concurrently, within the request deadline.
Pages a provider already holds (local corpus, raw_content) cost no network."""
from __future__ import annotations

import asyncio
from datetime import datetime, timezone

from app import metrics
from app.pipeline.context import RunContext
from app.pipeline.types import FetchedPage, FetchReason, SearchHit


async def fetch_pages(candidates: list[SearchHit], fetcher, ctx: RunContext) -> list[FetchedPage]:
    chosen = candidates[: ctx.options.max_fetches]

    async def one(hit: SearchHit) -> FetchedPage:
        if hit.raw_content is not None:
            return FetchedPage(url=hit.url, requested_url=hit.url, reason=FetchReason.from_provider, status=200,
                               content_type=hit.raw_content_type, body=hit.raw_content.encode("utf-8"),
                               fetched_at=datetime.now(timezone.utc))
        ctx.cost.fetches += 1
        ctx.cost.usd += ctx.settings.fetch_price
        try:
            return await fetcher.fetch(hit.url, deadline_s=ctx.remaining())
        except Exception as exc:  # the fetcher never should raise; if it does, the page is lost, not the request
            return FetchedPage(url=hit.url, requested_url=hit.url, reason=FetchReason.network_error,
                               detail=type(exc).__name__)

    pages = await asyncio.gather(*(one(h) for h in chosen))
    for page in pages:
        metrics.FETCHES.labels(reason=page.reason.value).inc()
    return list(pages)
