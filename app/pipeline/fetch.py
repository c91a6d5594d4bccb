"""Fetch: the top candidates by the project's ranking, concurrently, within the request deadline,
each page extracted as soon as it arrives (pipelined, off the event loop).

Pages a provider already holds (local corpus, raw_content) cost no network. Fetched pages go
through the page cache: fresh entries are served, stale ones revalidated (304 = no download, no
re-extraction), and concurrent identical misses are fetched once (single flight).
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from app import metrics
from app.cache.extraction_memo import ExtractionMemo
from app.cache.page_cache import REVALIDATE_WINDOW_S, PageEntry, decode_entry, page_key, store_entry
from app.cache.singleflight import SingleFlight
from app.cpu_processes import ProcessLost
from app.domain.types import Document, FetchedPage, FetchReason, PageDates, SearchHit, TextBlock, content_digest
from app.extract.text_clean import content_hash
from app.fetch.base import Fetcher
from app.language.text import well_formed
from app.pipeline.conflicts import asked_attribute, values_in
from app.pipeline.context import MS_PER_S, TIMING_DIGITS, RunContext
from app.pipeline.extract import extract_in_child, extract_page, hit_for_child
from app.pipeline.select import prescan_instructions
from app.providers.cache.base import Cache
from app.urls import registrable_domain

MIN_ANSWERING_SNIPPET_CHARS = 40  # a shorter snippet is a fragment: too little to stand in for the page
# A snippet stands in for its page only for a price, date or version: a count or a measure in a
# 300-character snippet is too often another quantity of the same page.
SNIPPET_KINDS = frozenset({"price", "date", "version"})
HTTP_OK = 200  # the status reported for a page not fetched now (provider-held content, a cache hit)


@dataclass(slots=True)
class Retrieval:
    pages: list[FetchedPage]
    documents: list[Document]


async def fetch_documents(
    candidates: list[SearchHit],
    ctx: RunContext,
    *,
    fetcher: Fetcher,
    cache: Cache | None = None,
    flights: SingleFlight | None = None,
    question: str = "",
    memo: ExtractionMemo | None = None,
) -> Retrieval:
    chosen = candidates[: ctx.options.max_fetches]
    results = await asyncio.gather(
        *(
            _from_snippet(hit, rank)
            if snippet_answers(hit, question)
            else _load(hit, rank, ctx, fetcher, cache, flights, memo)
            for rank, hit in enumerate(chosen)
        )
    )
    pages, docs = [], []
    for page, doc in results:
        pages.append(page)
        metrics.FETCHES.labels(reason=page.reason.value).inc()
        if doc is not None:
            docs.append(doc)
    return Retrieval(pages, docs)


_MULTI_HOP = re.compile(r"\b(and|compare[ds]?|versus|vs\.?|difference|between|both|which of)\b", re.I)


def snippet_answers(hit: SearchHit, question: str) -> bool:
    """A primary source's snippet that already holds the asked value (a price, date or version) of a
    single-hop question answers it: the page need not be fetched. Such evidence says `via: snippet`.
    Only when the engine dated the result: the page's own dates are what the fetch would have read,
    and undated evidence cannot answer a time-sensitive question."""
    kind = asked_attribute(question) if question else None
    return bool(
        kind is not None
        and kind in SNIPPET_KINDS
        and hit.primary
        and not hit.held
        and hit.published_at is not None
        and len(hit.snippet) >= MIN_ANSWERING_SNIPPET_CHARS
        and values_in(kind, hit.snippet)
        and not _MULTI_HOP.search(question)
    )


async def _from_snippet(hit: SearchHit, rank: int) -> tuple[FetchedPage, Document | None]:
    page = FetchedPage(url=hit.url, requested_url=hit.url, reason=FetchReason.skipped, detail="answered_by_snippet")
    doc = Document(
        url=hit.url,
        title=hit.title or hit.url,
        domain=registrable_domain(hit.url),
        blocks=[TextBlock("paragraph", hit.snippet)],
        dates=PageDates(
            published=hit.published_at.date() if hit.published_at else None,
            source="search-engine" if hit.published_at else "unknown",
        ),
        fetched_at=None,
        content_hash=content_hash(hit.snippet),
        rank=rank,
        primary=True,
        via="snippet",
    )
    return page, doc


async def _extract_held(
    page: FetchedPage, hit: SearchHit, rank: int, ctx: RunContext, memo: ExtractionMemo | None
) -> Document | None:
    """A provider-held page, through the extraction memo (the same bytes extract the same way)."""
    if memo is None:
        if not await _read_held(hit, page):
            return None
        page.body = _held_body(hit)
        return await _extract(page, hit, rank, ctx)
    digest = hit.raw_content_digest or content_digest(hit.raw_content or "")
    key = memo.key(page.url, page.content_type, digest, hit, ctx.settings.extract_fallback)
    found, doc = memo.get(key)
    if found:
        metrics.EXTRACTION_MEMO.labels(outcome="hit").inc()
        if doc is None:
            page.reason = FetchReason.empty_extraction
            return None
        return replace(doc, rank=rank, primary=hit.primary, fetched_at=page.fetched_at)
    metrics.EXTRACTION_MEMO.labels(outcome="miss").inc()
    if not await _read_held(hit, page):
        return None
    page.body = _held_body(hit)
    doc = await _extract(page, hit, rank, ctx)
    memo.put(key, doc)
    return doc


async def _read_held(hit: SearchHit, page: FetchedPage) -> bool:
    """The held page's text into the hit, read from its provider when it was not handed over; False
    (the page marked lost) when the provider no longer has it."""
    if hit.raw_content is None and hit.read_page is not None:
        try:
            found = await hit.read_page()
        except Exception:  # a provider read that fails loses the page, not the request
            found = None
        if found is not None:
            hit.raw_content, hit.raw_content_type = found
            page.content_type = hit.raw_content_type
    if hit.raw_content is None:
        page.reason, page.detail = FetchReason.network_error, "provider_page_missing"
        return False
    return True


def held_page(url: str, content_type: str) -> FetchedPage:
    """A page a provider holds (the local corpus): not fetched, reported as from the provider."""
    return FetchedPage(
        url=url,
        requested_url=url,
        reason=FetchReason.from_provider,
        status=HTTP_OK,
        content_type=content_type,
        fetched_at=datetime.now(UTC),
    )


def _held_body(hit: SearchHit) -> bytes:
    return held_body(hit.raw_content or "")


def held_body(text: str) -> bytes:
    # JSON may carry an unpaired surrogate ("\ud800"), which strict UTF-8 cannot encode (the memo's
    # content_digest names the text as given, with surrogatepass). Cleaned only when the encoding
    # fails: a held page can run to megabytes, and the encoding is needed anyway.
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return well_formed(text).encode("utf-8")


def _extract_and_prescan(page: FetchedPage, hit: SearchHit, rank: int, ctx: RunContext) -> Document | None:
    processes = ctx.cpu.processes if ctx.cpu is not None else None
    fallback = ctx.settings.extract_fallback
    if processes is None:
        doc = extract_page(page, hit, rank, fallback)
    else:  # in a child process (GA_EXTRACT_PROCESSES): this thread waits without the GIL
        try:
            doc, page.reason = processes.call(extract_in_child, page, hit_for_child(hit), rank, fallback)
        except ProcessLost:  # the page killed two children: lost, as a page that breaks the parser
            doc, page.reason, page.detail = None, FetchReason.empty_extraction, "extraction_process_died"
    # The instruction scan of the page's passages, done early only while other pages of this answer are
    # still on the network and the CPU queue has nothing else to do: time the answer spends waiting
    # anyway. Under load the scan is left to selection, which scans only the passages it keeps (a
    # prescan then costs other answers CPU for passages no answer uses), as is the last page's.
    if doc is not None and ctx.settings.injection_prescan and ctx.fetches_in_flight > 0:
        others_busy = ctx.cpu.others_busy if ctx.cpu is not None else lambda: False
        prescan_instructions(doc, stop=lambda: others_busy() or ctx.fetches_in_flight == 0)
    return doc


async def _extract(page: FetchedPage, hit: SearchHit, rank: int, ctx: RunContext) -> Document | None:
    t0 = time.perf_counter()
    doc = await ctx.run_cpu(_extract_and_prescan, page, hit, rank, ctx)
    ctx.timings_ms["extract"] = round(
        ctx.timings_ms.get("extract", 0.0) + (time.perf_counter() - t0) * MS_PER_S, TIMING_DIGITS
    )
    return doc


async def _load(
    hit: SearchHit,
    rank: int,
    ctx: RunContext,
    fetcher: Fetcher,
    cache: Cache | None,
    flights: SingleFlight | None,
    memo: ExtractionMemo | None = None,
) -> tuple[FetchedPage, Document | None]:
    if hit.held:
        # read and encoded only when the page is extracted (not on an extraction-memo hit)
        page = held_page(hit.url, hit.raw_content_type)
        return page, await _extract_held(page, hit, rank, ctx, memo)
    policy = ctx.options.cache
    if cache is None or policy == "bypass":
        return await _fetch_and_extract(hit, rank, ctx, fetcher)
    key = page_key(hit.url)
    entry = decode_entry(raw) if policy == "use" and (raw := await cache.get(key)) else None
    if entry is not None and entry.fresh:
        ctx.note_cache("page", "hit")
        metrics.CACHE_LOOKUPS.labels(layer="page", result="hit").inc()
        return _cached_page(hit, entry, FetchReason.cached), _for_request(entry.doc, hit, rank)
    if entry is not None:
        page = await _fetch(hit, ctx, fetcher, etag=entry.etag, last_modified=entry.last_modified)
        if page.reason is FetchReason.not_modified:
            ctx.note_cache("page", "revalidated")
            metrics.CACHE_LOOKUPS.labels(layer="page", result="revalidated").inc()
            entry.fresh_until = time.time() + ctx.settings.page_ttl(ctx.options.freshness_days)
            await store_entry(cache, hit.url, entry)
            return page, _for_request(entry.doc, hit, rank)
        doc = await _extract(page, hit, rank, ctx) if page.ok else None
        await _store(cache, hit.url, page, doc, ctx)
        ctx.note_cache("page", "miss")
        return page, doc

    async def compute() -> tuple[FetchedPage, Document | None, None]:
        page, doc = await _fetch_and_extract(hit, rank, ctx, fetcher)
        await _store(cache, hit.url, page, doc, ctx)  # the entry and its version key, stored here
        return page, doc, None

    assert flights is not None, "callers with a cache pass the service's single flight"
    (page, doc, _), how = await flights.cached(
        key,
        cache,
        layer="page",
        compute=compute,
        encode=lambda v: None,
        ttl_s=REVALIDATE_WINDOW_S,
        decode=lambda raw: _from_entry(decode_entry(raw), hit),
        read=False,
        wait_s=ctx.remaining(),
    )
    ctx.note_cache("page", how)
    return page, (_for_request(doc, hit, rank) if doc is not None else None)


async def _fetch(hit: SearchHit, ctx: RunContext, fetcher: Fetcher, **validators) -> FetchedPage:
    ctx.cost.fetches += 1
    ctx.cost.usd += ctx.settings.fetch_price
    ctx.fetches_in_flight += 1  # while any page is on the network, this answer's extractions can wait
    try:
        return await fetcher.fetch(hit.url, deadline_s=ctx.remaining(), **validators)
    except Exception as exc:  # the fetcher should never raise; if it does, the page is lost, not the request
        return FetchedPage(
            url=hit.url, requested_url=hit.url, reason=FetchReason.network_error, detail=type(exc).__name__
        )
    finally:
        ctx.fetches_in_flight -= 1


async def _fetch_and_extract(
    hit: SearchHit, rank: int, ctx: RunContext, fetcher: Fetcher
) -> tuple[FetchedPage, Document | None]:
    page = await _fetch(hit, ctx, fetcher)
    return page, (await _extract(page, hit, rank, ctx) if page.ok else None)


async def _store(cache: Cache | None, url: str, page: FetchedPage, doc: Document | None, ctx: RunContext) -> None:
    if doc is None or page.reason is not FetchReason.ok:
        return  # failures are not cached: the next request tries again
    fresh_until = time.time() + ctx.settings.page_ttl(ctx.options.freshness_days)
    await store_entry(
        cache, url, PageEntry(doc, page.headers.get("etag"), page.headers.get("last-modified"), fresh_until)
    )


def _from_entry(entry: PageEntry | None, hit: SearchHit):
    if entry is None:
        return None
    return _cached_page(hit, entry, FetchReason.cached), entry.doc, None


def _cached_page(hit: SearchHit, entry: PageEntry, reason: FetchReason) -> FetchedPage:
    return FetchedPage(
        url=entry.doc.url, requested_url=hit.url, reason=reason, status=HTTP_OK, fetched_at=entry.doc.fetched_at
    )


def _for_request(doc: Document, hit: SearchHit, rank: int) -> Document:
    """A cached document carries this request's rank and primary flag, not the one it was cached with."""
    return replace(doc, rank=rank, primary=hit.primary)
