"""Search provider "local": the embedded corpus (app/corpus), no network.

Hits come without their page; `get_document(url)` serves any URL the corpus holds, and the search
stage reads the pages of the hits the fetch stage will use that way (app/pipeline/search.py
_restore_pages), so the fetch stage needs no network either.

The factory builds the index synchronously when the provider is created (about 0.6 s for the
sample corpus in memory, a few ms when GA_CORPUS_INDEX_PATH holds a current index file), so the
first search pays nothing. SQLite work runs in a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from app.corpus.domains import is_primary
from app.corpus.index import CorpusIndex
from app.domain.types import SearchHit, SearchResult
from app.errors import ProviderLogicalError, ProviderTechnicalError
from app.providers.search.base import SearchQuery, register_search_provider

if TYPE_CHECKING:
    from app.settings import Settings

PROVIDER_NAME = "local"
MAX_COUNT = 50


class LocalCorpusSearch:
    name = PROVIDER_NAME
    remote = False  # in-process: no retries, no circuit breaker (app/pipeline/search.py)

    def __init__(self, index: CorpusIndex, *, primary_domains: list[str] | None = None):
        self._index: CorpusIndex | None = index
        # Service-wide primary domains (GA_PRIMARY_DOMAINS) add to each corpus's own list.
        self._primary_domains = [d.lower().strip(".") for d in primary_domains or []]

    @classmethod
    def open(
        cls, corpus_dir: Path, index_path: Path | None = None, primary_domains: list[str] | None = None
    ) -> LocalCorpusSearch:
        """Index corpus_dir (in memory, or in index_path reused while current). A deployment may
        ship only the index file: with corpus_dir absent, index_path is opened as is."""
        if not Path(corpus_dir).exists() and index_path is not None and Path(index_path).is_file():
            index = CorpusIndex.open(index_path)
        else:
            index = CorpusIndex.build(corpus_dir, index_path)
        return cls(index, primary_domains=primary_domains)

    @property
    def index(self) -> CorpusIndex:
        if self._index is None:
            raise ProviderLogicalError("local corpus provider is closed", provider=PROVIDER_NAME)
        return self._index

    async def search(self, query: SearchQuery, *, timeout: float) -> SearchResult:
        started = time.perf_counter()
        index = self.index
        count = max(0, min(query.count, MAX_COUNT))
        try:
            found = await asyncio.wait_for(
                asyncio.to_thread(
                    index.search,
                    query.text,
                    count=count,
                    include_domains=list(query.include_domains),
                    exclude_domains=list(query.exclude_domains),
                    # pages are read for the hits the fetch stage chooses (app/pipeline/search.py)
                    with_content=False,
                ),
                timeout=timeout,
            )
        except TimeoutError:
            raise ProviderTechnicalError(
                f"local corpus search exceeded {timeout:.2f}s", provider=PROVIDER_NAME
            ) from None
        except sqlite3.Error as exc:
            raise ProviderTechnicalError(f"local corpus: {exc}", provider=PROVIDER_NAME) from exc
        hits = [
            SearchHit(
                url=hit.url,
                title=hit.title,
                snippet=hit.snippet,
                rank=rank,
                provider=PROVIDER_NAME,
                raw_content=hit.raw_content,
                raw_content_type=hit.content_type,
                raw_content_digest=hit.digest or None,
                primary=hit.primary or is_primary(hit.url, self._primary_domains),
                queries=[query.text],
            )
            for rank, hit in enumerate(found)
        ]
        return SearchResult(
            provider=PROVIDER_NAME, query=query.text, hits=hits, elapsed_ms=(time.perf_counter() - started) * 1000
        )

    async def get_document(self, url: str) -> tuple[str, str] | None:
        """(content, content_type) of a URL the corpus holds, else None."""
        return await asyncio.to_thread(self.index.get_document, url)

    async def aclose(self) -> None:
        if self._index is not None:
            index, self._index = self._index, None
            await asyncio.to_thread(index.close)


def build_local_corpus(settings: Settings, http_client: httpx.AsyncClient) -> LocalCorpusSearch:
    """Factory for the registry; http_client is unused (the corpus needs no network)."""
    return LocalCorpusSearch.open(
        settings.corpus_dir, settings.corpus_index_path, primary_domains=settings.primary_domains
    )


register_search_provider(PROVIDER_NAME, build_local_corpus)
