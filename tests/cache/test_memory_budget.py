"""Issue-12 defect 1: the in-process cache is bounded by bytes, and search entries of the local
corpus hold the hit list, not every page's text."""

from __future__ import annotations

import httpx
import pytest

from app.providers.cache.memory import MemoryCache


async def test_bytes_bound_evicts_least_recently_used():
    cache = MemoryCache(max_bytes=10_000)
    for i in range(50):
        await cache.set(f"k{i}", b"x" * 900, 60)
    assert cache.size_bytes <= 10_000
    assert await cache.get("k49") is not None and await cache.get("k0") is None
    await cache.get("k42")  # touched: survives the next evictions
    for i in range(50, 54):
        await cache.set(f"k{i}", b"x" * 900, 60)
    assert await cache.get("k42") is not None and await cache.get("k43") is None


async def test_an_entry_too_big_for_the_budget_is_not_cached_and_flushes_nothing():
    cache = MemoryCache(max_bytes=10_000)
    await cache.set("small", b"s", 60)
    await cache.set("huge", b"x" * 5_000, 60)
    assert await cache.get("huge") is None and await cache.get("small") == b"s"


async def test_replacing_and_deleting_keep_the_count_exact():
    cache = MemoryCache(max_bytes=1_000_000)
    await cache.set("a", b"x" * 100, 60)
    await cache.set("a", b"x" * 10, 60)
    alone = MemoryCache(max_bytes=1_000_000)
    await alone.set("a", b"x" * 10, 60)
    assert cache.size_bytes == alone.size_bytes
    await cache.delete("a")
    assert cache.size_bytes == 0 and len(cache) == 0


QUESTIONS = [
    "What is tomllib?",
    "How do I use asyncio.TaskGroup?",
    "What does functools.cache do?",
    "How do I parse a JSON string into a dict?",
    "How do I run a subprocess and capture its output?",
    "What is a dataclass?",
    "How do I read a CSV file?",
    "What does pathlib.Path.glob return?",
    "How do I use a context manager?",
    "What is the walrus operator?",
]


@pytest.mark.parametrize("budget", [3_000_000])
def test_distinct_questions_on_the_embedded_corpus_stay_within_the_byte_budget(service_factory, budget):
    svc = service_factory(memory_cache_max_bytes=budget)
    for q in QUESTIONS:
        r = httpx.post(
            svc.url + "/v1/chat/completions",
            json={"model": "x", "messages": [{"role": "user", "content": q}]},
            timeout=60,
        )
        assert r.status_code == 200
    cache = svc.app.state.service.cache
    assert cache.size_bytes <= budget
    search_entries = [v for k, (_, v) in cache._items.items() if k.startswith("search:")]
    assert search_entries, "search results were cached"
    # The hit list only: a few KB, not the corpus pages (which ran to megabytes per entry).
    assert max(len(v) for v in search_entries) < 64_000
