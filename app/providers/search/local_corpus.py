"""Search provider "local": the embedded corpus (app/corpus), no network.

Hits come without their page; `get_document(url)` serves any URL the corpus holds, and the search
stage reads the pages of the hits the fetch stage will use that way (app/pipeline/search.py
_restore_pages), so the fetch stage needs no network either.

The factory builds the index synchronously when the provider is created (about 0.6 s for the
sample corpus in memory, a few ms when GA_CORPUS_INDEX_PATH holds a current index file), so the
first search pays nothing. SQLite work runs in a worker thread, never on the event loop.

With the sentence model installed and the corpus's stored passage vectors present (GA_CORPUS_DENSE,
app/corpus/dense.py), each query is also embedded and matched against every passage vector, and the
two rankings of pages are fused by reciprocal rank: a page that shares few words with the query is
still found.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from app.corpus.dense import DENSE_POOL, DenseIndex, fuse
from app.corpus.domains import is_primary
from app.corpus.index import CorpusHit, CorpusIndex
from app.corpus.vectors import INDEX_VECTORS_NAME, vectors_dir
from app.domain.types import SearchHit, SearchResult
from app.errors import GroundingError, ProviderLogicalError, ProviderTechnicalError
from app.providers.search.base import SearchQuery, register_search_provider

if TYPE_CHECKING:
    from app.settings import Settings

PROVIDER_NAME = "local"
MAX_COUNT = 50
log = logging.getLogger(__name__)


class LocalCorpusSearch:
    name = PROVIDER_NAME
    remote = False  # in-process: no retries, no circuit breaker (app/pipeline/search.py)

    def __init__(
        self,
        index: CorpusIndex,
        *,
        primary_domains: list[str] | None = None,
        dense: DenseIndex | None = None,
        encoder: Any = None,
    ):
        self._index: CorpusIndex | None = index
        # Service-wide primary domains (GA_PRIMARY_DOMAINS) add to each corpus's own list.
        self._primary_domains = [d.lower().strip(".") for d in primary_domains or []]
        self._dense = dense if encoder is not None else None
        self._encoder = encoder

    @property
    def uses_question(self) -> bool:
        """Hits depend on SearchQuery.question (the search cache keys them by it)."""
        return self._dense is not None

    @classmethod
    def open(
        cls, corpus_dir: Path, index_path: Path | None = None, primary_domains: list[str] | None = None
    ) -> LocalCorpusSearch:
        """Index corpus_dir (in memory, or in index_path reused while current). A deployment may
        ship only the index file: with corpus_dir absent, index_path is opened as is."""
        return cls(_open_index(corpus_dir, index_path), primary_domains=primary_domains)

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
            found = await asyncio.wait_for(asyncio.to_thread(self._search, index, query, count), timeout=timeout)
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

    def _search(self, index: CorpusIndex, query: SearchQuery, count: int) -> list[CorpusHit]:
        include, exclude = list(query.include_domains), list(query.exclude_domains)
        # Pages are read for the hits the fetch stage chooses (app/pipeline/search.py): no content here.
        lexical = index.search(
            query.text,
            count=max(count, DENSE_POOL) if self._dense else count,
            include_domains=include,
            exclude_domains=exclude,
            with_content=False,
        )
        if self._dense is None or count <= 0 or not query.text.strip():
            return lexical[:count]
        # The question, when the search stage passes it: one embedding a request for all its queries
        # (and the reranker's, app/pipeline/select.py, is the same text: a memo hit).
        vector = self._encoder.embed([query.question or query.text])[0]
        dense = index.hits_for(self._dense.search(vector, DENSE_POOL, include, exclude), with_content=False)
        by_url = {hit.url: hit for hit in dense}
        by_url.update((hit.url, hit) for hit in lexical)  # a lexical hit's snippet shows the matched words
        return [by_url[url] for url in fuse([h.url for h in lexical], [h.url for h in dense])][:count]

    async def get_document(self, url: str) -> tuple[str, str] | None:
        """(content, content_type) of a URL the corpus holds, else None."""
        return await asyncio.to_thread(self.index.get_document, url)

    async def aclose(self) -> None:
        if self._index is not None:
            index, self._index = self._index, None
            await asyncio.to_thread(index.close)


def _open_index(corpus_dir: Path, index_path: Path | None) -> CorpusIndex:
    if not Path(corpus_dir).exists() and index_path is not None and Path(index_path).is_file():
        return CorpusIndex.open(index_path)
    return CorpusIndex.build(corpus_dir, index_path)


def dense_leg(settings: Settings, index: CorpusIndex) -> tuple[DenseIndex | None, Any]:
    """The stored passage vectors and the encoder for queries, per GA_CORPUS_DENSE: "auto" uses them
    when both are installed, "on" requires them, "off" never."""
    mode = settings.corpus_dense
    if mode == "off":
        return None, None
    try:
        from app.providers.rerank.minilm import shared_encoder

        path = settings.corpus_vectors_path or vectors_dir(settings.corpus_dir) / INDEX_VECTORS_NAME
        dense = DenseIndex.load(index, path)
        encoder = shared_encoder(settings.sentence_model_path) if dense is not None else None
    except (ImportError, GroundingError) as exc:
        if mode == "on":
            raise
        log.info("corpus: dense retrieval off (%s)", exc)
        return None, None
    if dense is None:
        if mode == "on":
            raise GroundingError(f"GA_CORPUS_DENSE=on, but no stored passage vectors match the corpus ({path})")
        log.info("corpus: dense retrieval off (no stored vectors at %s: python -m app.pipeline.evidence_vectors)", path)
        return None, None
    log.info("corpus: dense retrieval on (%d passage vectors)", len(dense.rowids))
    return dense, encoder


def build_local_corpus(settings: Settings, http_client: httpx.AsyncClient) -> LocalCorpusSearch:
    """Factory for the registry; http_client is unused (the corpus needs no network)."""
    index = _open_index(settings.corpus_dir, settings.corpus_index_path)
    dense, encoder = dense_leg(settings, index)
    return LocalCorpusSearch(index, primary_domains=settings.primary_domains, dense=dense, encoder=encoder)


register_search_provider(PROVIDER_NAME, build_local_corpus)
