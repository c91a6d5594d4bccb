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
from collections import OrderedDict
from dataclasses import dataclass

from app.domain.types import Document, SearchHit

ENTRY_OVERHEAD_BYTES = 512  # the Document, its dates and the key, roughly
BYTES_PER_CHAR = 2  # str storage (1-2 bytes a character) plus the TextBlock objects, roughly


@dataclass(slots=True)
class _Entry:
    doc: Document | None
    cost: int


class ExtractionMemo:
    def __init__(self, max_bytes: int = 64 * 1024 * 1024):
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0

    @staticmethod
    def key(url: str, content_type: str, body: bytes, hit: SearchHit | None, fallback: bool) -> str:
        h = hashlib.sha256(body)
        published = hit.published_at.isoformat() if hit and hit.published_at else ""
        title = hit.title if hit else ""
        h.update(f"\0{url}\0{content_type}\0{title}\0{published}\0{int(fallback)}".encode("utf-8", "replace"))
        return h.hexdigest()

    def get(self, key: str) -> tuple[bool, Document | None]:
        """(found, document): a found None is a page that extracted to nothing."""
        entry = self._entries.get(key)
        if entry is None:
            return False, None
        self._entries.move_to_end(key)
        return True, entry.doc

    def put(self, key: str, doc: Document | None) -> None:
        chars = sum(len(b.text) for b in doc.blocks) + len(doc.title) if doc is not None else 0
        cost = ENTRY_OVERHEAD_BYTES + BYTES_PER_CHAR * chars
        if cost > self.max_bytes:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= old.cost
        self._entries[key] = _Entry(doc, cost)
        self._bytes += cost
        while self._bytes > self.max_bytes:
            _, evicted = self._entries.popitem(last=False)
            self._bytes -= evicted.cost

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)
