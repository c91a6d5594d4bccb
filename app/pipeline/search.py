"""Search: every planned query through the provider fallback chain, concurrently; merge, dedupe by
normalised URL, enforce domain filters in code, rank candidates by the project's own score."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from functools import partial

import orjson

from app import metrics
from app.cache.singleflight import SingleFlight
from app.domain.types import SearchHit, SearchOutcome, SearchResult
from app.errors import ProviderLogicalError, ProviderTechnicalError
from app.language.text import terms, well_formed
from app.pipeline.context import RunContext
from app.providers import fallbacks
from app.providers.breaker import OPEN
from app.providers.cache.base import Cache
from app.providers.retry import CircuitOpen, RetryPolicy, call_with_retries
from app.providers.search.base import SearchProvider, SearchQuery
from app.urls import domain_matches, host_of, normalize_url

MS_PER_S = 1000
# Tie-breakers on top of reciprocal-rank fusion (at most 1/(RRF_K + 1) per list): small enough that
# they reorder results of similar rank, never overturn the engines' agreement.
TITLE_OVERLAP_WEIGHT = 0.05  # share of the question's terms found in title + snippet
PRIMARY_BONUS = 0.03  # an official source of the subject

log = logging.getLogger(__name__)
RRF_K = 10  # reciprocal-rank fusion constant: small k trusts the engines' top ranks more


async def search_all(
    queries: list[str],
    providers: list[SearchProvider],
    ctx: RunContext,
    *,
    question: str,
    freshness_days: int,
    cache: Cache | None = None,
    flights: SingleFlight | None = None,
) -> SearchOutcome:
    opts = ctx.options
    sq = [
        SearchQuery(
            text=q,
            count=opts.max_results,
            include_domains=opts.include_domains,
            exclude_domains=opts.exclude_domains,
            freshness_days=freshness_days,
            question=question,
        )
        for q in queries
    ]
    outcome = SearchOutcome(candidates=[], results=[])
    answers = await asyncio.gather(*(_search_chain(q, providers, ctx, outcome, cache, flights) for q in sq))
    outcome.results = [r for r in answers if r is not None]
    outcome.candidates = _merge(outcome.results, question, opts, outcome.filtered)[: ctx.settings.search_candidates]
    await _restore_pages(outcome.candidates[: opts.max_fetches], providers)
    return outcome


class _OverBudget(Exception):
    def __init__(self, which: str):
        super().__init__(which)
        self.which = which


def _budget_allows(ctx: RunContext, provider: str) -> str | None:
    """Why another upstream search call would break the request's budget, if it would."""
    opts = ctx.options
    if opts.max_searches is not None and ctx.cost.search_calls >= opts.max_searches:
        return "max_searches"
    price = ctx.settings.search_prices.get(provider, 0.0)
    if opts.max_cost_usd is not None and ctx.cost.usd + price > opts.max_cost_usd:
        return "max_cost_usd"
    if ctx.expired():
        return "deadline"
    return None


async def _search_chain(
    query: SearchQuery, providers: list[SearchProvider], ctx: RunContext, outcome: SearchOutcome, cache, flights
) -> SearchResult | None:
    """Try providers in order: the next one when one fails, is failing fast (open circuit) or finds
    nothing; each hop is reported in grounding.fallbacks.

    Retries (app/providers/retry.py): while a later provider can still be asked, a technical failure
    fails over at once — the fallback is the retry, and cheaper than waiting; the last usable provider
    of the chain gets up to `retry_max_attempts` attempts. Every attempt is booked and checked
    against the budget like a first call."""
    last: SearchResult | None = None
    policy = RetryPolicy.from_settings(ctx.settings)
    for i, provider in enumerate(providers):
        t0 = time.perf_counter()
        paid = False
        breaker = getattr(provider, "breaker", None)
        remote = getattr(provider, "remote", True) and breaker is not None
        attempts = 1 if _fallback_usable(providers[i + 1 :]) else policy.max_attempts

        async def one(timeout: float, provider=provider) -> SearchResult:
            nonlocal paid
            # Checked and booked with no await in between, so concurrent queries cannot overrun.
            over = _budget_allows(ctx, provider.name)
            if over:
                raise _OverBudget(over)
            paid = True
            ctx.cost.add_search(ctx.settings.search_prices.get(provider.name, 0.0))
            result = await provider.search(query, timeout=timeout)
            return _well_formed(result) if getattr(provider, "remote", True) else result

        async def call(provider=provider, breaker=breaker, remote=remote, attempts=attempts) -> SearchResult:
            if not remote:
                return await one(min(ctx.settings.search_timeout_s, ctx.remaining()))
            return await call_with_retries(
                one,
                policy=policy,
                deadline=ctx.deadline,
                attempt_timeout=ctx.settings.search_timeout_s,
                kind="search",
                provider=provider.name,
                breaker=breaker,
                max_attempts=attempts,
            )

        why = ""
        try:
            if cache is None or flights is None or ctx.options.cache == "bypass":
                result, how = await call(), "miss"
            else:
                result, how = await flights.cached(
                    _cache_key(provider.name, query, getattr(provider, "uses_question", False)),
                    cache,
                    layer="search",
                    compute=call,
                    encode=lambda r, provider=provider: _encode(r, provider) if r.hits else None,
                    decode=_decode,
                    ttl_s=ctx.settings.search_cache_ttl(query.freshness_days),
                    read=ctx.options.cache == "use",
                    wait_s=ctx.remaining(),
                )
            ctx.note_cache("search", how)
        except _OverBudget as exc:
            outcome.errors.append(f"{provider.name}: budget ({exc.which})")
            ctx.budget_hits.append(exc.which)
            break
        except CircuitOpen as exc:
            outcome.errors.append(f"{provider.name}: {exc.message}")
            metrics.UPSTREAM_CALLS.labels(kind="search", provider=provider.name, outcome="circuit_open").inc()
            why = exc.message
        except ProviderTechnicalError as exc:
            outcome.errors.append(f"{provider.name}: {exc.message}")
            metrics.UPSTREAM_CALLS.labels(kind="search", provider=provider.name, outcome="error").inc()
            why = exc.message
        except ProviderLogicalError as exc:
            outcome.errors.append(f"{provider.name}: {exc.message}")
            metrics.UPSTREAM_CALLS.labels(kind="search", provider=provider.name, outcome="refused").inc()
            why = exc.message
        except Exception as exc:  # a provider bug degrades the answer, never fails the request
            log.exception("search provider %s crashed", provider.name)
            outcome.errors.append(f"{provider.name}: {type(exc).__name__}")
            why = type(exc).__name__
        else:
            if paid:
                result.elapsed_ms = (time.perf_counter() - t0) * MS_PER_S
                metrics.UPSTREAM_CALLS.labels(kind="search", provider=provider.name, outcome="ok").inc()
            last = result
            if result.hits:
                return result
            why = "no results"
        if i + 1 < len(providers) and not ctx.expired():
            fallbacks.record(ctx.request_id, "search", provider.name, providers[i + 1].name, why)
    return last


def _fallback_usable(rest: list[SearchProvider]) -> bool:
    """Is there a later provider in the chain whose circuit is not open?"""
    for provider in rest:
        breaker = getattr(provider, "breaker", None)
        if breaker is None or breaker.state != OPEN:
            return True
    return False


def _merge(results: list[SearchResult], question: str, opts, filtered: dict[str, int]) -> list[SearchHit]:
    merged: dict[str, SearchHit] = {}
    score: dict[str, float] = {}
    for result in results:
        for hit in result.hits:
            host = host_of(hit.url)
            if not host:
                filtered["invalid_url"] = filtered.get("invalid_url", 0) + 1
                continue
            if opts.include_domains and not domain_matches(host, opts.include_domains):
                filtered["include_domains"] = filtered.get("include_domains", 0) + 1
                continue
            if opts.exclude_domains and domain_matches(host, opts.exclude_domains):
                filtered["exclude_domains"] = filtered.get("exclude_domains", 0) + 1
                continue
            key = normalize_url(hit.url)
            score[key] = score.get(key, 0.0) + 1.0 / (RRF_K + hit.rank + 1)
            if key in merged:
                kept = merged[key]
                if result.query not in kept.queries:
                    kept.queries.append(result.query)
                if hit.rank < kept.rank:
                    merged[key] = replace(hit, queries=kept.queries)
                filtered["duplicate_url"] = filtered.get("duplicate_url", 0) + 1
            else:
                merged[key] = replace(hit, queries=[result.query])
    q_terms = set(terms(question))
    for key, hit in merged.items():
        if opts.primary_domains and domain_matches(host_of(hit.url), opts.primary_domains):
            hit.primary = True
        overlap = len(q_terms & set(terms(f"{hit.title} {hit.snippet}"))) / max(1, len(q_terms))
        score[key] += TITLE_OVERLAP_WEIGHT * overlap + (PRIMARY_BONUS if hit.primary else 0.0)
    ranked = sorted(merged, key=lambda k: -score[k])
    return [merged[k] for k in ranked]


def _cache_key(provider: str, q: SearchQuery, uses_question: bool = False) -> str:
    norm = " ".join(q.text.lower().split())
    key = [provider, norm, q.count, sorted(q.include_domains), sorted(q.exclude_domains), q.freshness_days]
    if uses_question:  # its hits depend on the question too (the local corpus's dense leg)
        key.append(" ".join(q.question.lower().split()))
    return "search:" + orjson.dumps(key).decode()


def _holds_pages(provider: SearchProvider) -> bool:
    return callable(getattr(provider, "get_document", None))


def _well_formed(result: SearchResult) -> SearchResult:
    """An engine's strings as valid Unicode: one unpaired surrogate in a title must not cost the
    provider's whole answer (the search cache's orjson refuses it) or the request (the response's)."""
    for hit in result.hits:
        hit.url, hit.title, hit.snippet = well_formed(hit.url), well_formed(hit.title), well_formed(hit.snippet)
        if hit.raw_content is not None:
            hit.raw_content = well_formed(hit.raw_content)
    result.unresponsive_engines = [well_formed(e) for e in result.unresponsive_engines]
    return result


def _encode(result: SearchResult, provider: SearchProvider) -> bytes:
    # A provider that holds its pages (the local corpus) hands them back on demand, so its cache
    # entries keep the hit list only: with the page texts they ran to megabytes each.
    keep_pages = not _holds_pages(provider)
    return orjson.dumps(
        {
            "provider": result.provider,
            "query": result.query,
            "unresponsive_engines": result.unresponsive_engines,
            "hits": [
                {
                    "url": h.url,
                    "title": h.title,
                    "snippet": h.snippet,
                    "rank": h.rank,
                    "provider": h.provider,
                    "published_at": h.published_at.isoformat() if h.published_at else None,
                    "raw_content": h.raw_content if keep_pages else None,
                    "raw_content_type": h.raw_content_type,
                    "raw_content_digest": h.raw_content_digest,
                    "primary": h.primary,
                }
                for h in result.hits
            ],
        }
    )


async def _restore_pages(hits: list[SearchHit], providers: list[SearchProvider]) -> None:
    """Give the hits the fetch stage will read their pages where a provider holds them (the local
    corpus). Such a provider answers searches without its pages (reading a 4 MB page for every hit of
    every query was a fifth of a docs-corpus answer's CPU), and its cache entries keep hit lists only.
    A hit whose content digest is known gets a reader, called by the fetch stage only when the
    extraction memo lacks the page; the others' pages are read here. A hit another provider won the
    merge with is fetched as that provider found it (live), not served from the corpus."""
    for provider in (p for p in providers if _holds_pages(p)):
        missing = [h for h in hits if h.raw_content is None and h.provider == provider.name]
        for hit in (h for h in missing if h.raw_content_digest):
            hit.read_page = partial(provider.get_document, hit.url)  # type: ignore[attr-defined]
        unnamed = [h for h in missing if not h.raw_content_digest]
        if not unnamed:
            continue
        docs = await asyncio.gather(*(provider.get_document(h.url) for h in unnamed))  # type: ignore[attr-defined]
        for hit, doc in zip(unnamed, docs):
            if doc is not None:
                hit.raw_content, hit.raw_content_type = doc


def _decode(raw: bytes) -> SearchResult:
    from datetime import datetime

    data = orjson.loads(raw)
    hits = [
        SearchHit(**{**h, "published_at": datetime.fromisoformat(h["published_at"]) if h["published_at"] else None})
        for h in data["hits"]
    ]
    return SearchResult(
        provider=data["provider"], query=data["query"], hits=hits, unresponsive_engines=data["unresponsive_engines"]
    )
