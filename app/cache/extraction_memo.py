"""Extracted documents by the bytes they came from.

Extraction is a pure function of (page bytes, URL, content type, the search hit's title and date,
the fallback switch) and the costliest stage for pages a provider already holds (the local docs
corpus, Tavily's raw_content): the same page is read for every question that finds it. `cache:
bypass` is about freshness, and the same bytes cannot give a different extraction, so the memo
serves bypassing requests too. Bounded by bytes (LRU, `GA_EXTRACTION_MEMO_MAX_BYTES`); a page that
extracted to nothing is remembered too, so a shell is not parsed again.
"""

from __future__ import annotations

import hashlib
import sys

from app.cache.lru import ByteLRU, str_bytes
from app.domain.types import Document, SearchHit, TextBlock

# The Document, its PageDates and dates, the URL/domain/hash strings and the block list, measured
# (sys.getsizeof) on CPython 3.11; each TextBlock adds its slots object and list slot.
DOCUMENT_OVERHEAD_BYTES = 700
BLOCK_OVERHEAD_BYTES = sys.getsizeof(TextBlock("paragraph", "")) + 8


def document_bytes(doc: Document | None) -> int:
    """What a remembered Document holds in memory (tests/cache/test_lru.py checks it)."""
    if doc is None:
        return 0
    return (
        DOCUMENT_OVERHEAD_BYTES
        + str_bytes((doc.title, doc.url))
        + str_bytes(b.text for b in doc.blocks)
        + BLOCK_OVERHEAD_BYTES * len(doc.blocks)
    )


class ExtractionMemo:
    def __init__(self, max_bytes: int = 64 * 1024 * 1024):
        self._lru: ByteLRU[str, Document | None] = ByteLRU(max_bytes, "extraction")

    @property
    def max_bytes(self) -> int:
        return self._lru.max_bytes

    @staticmethod
    def key(url: str, content_type: str, digest: str, hit: SearchHit | None, fallback: bool) -> str:
        """The memo key of a document whose content is named by `digest` (types.content_digest)."""
        published = hit.published_at.isoformat() if hit and hit.published_at else ""
        title = hit.title if hit else ""
        material = f"{digest}\0{url}\0{content_type}\0{title}\0{published}\0{int(fallback)}"
        return hashlib.sha256(material.encode("utf-8", "replace")).hexdigest()

    def get(self, key: str) -> tuple[bool, Document | None]:
        """(found, document): a found None is a page that extracted to nothing."""
        if key not in self._lru:
            return False, None
        return True, self._lru.get(key)

    def put(self, key: str, doc: Document | None) -> None:
        self._lru.put(key, doc, document_bytes(doc))

    @property
    def size_bytes(self) -> int:
        return self._lru.size_bytes

    def __len__(self) -> int:
        return len(self._lru)
