"""Page cache entries: the extracted document with its validators (ETag / Last-Modified).

An entry is served as is until `fresh_until`; after that it is revalidated with a conditional GET,
and a 304 costs neither a download nor a re-extraction. Entries live longer than their freshness
(REVALIDATE_WINDOW_S) so there is something to revalidate.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass
from datetime import date, datetime

import orjson

from app.domain.types import Document, PageDates, TextBlock
from app.urls import normalize_url

REVALIDATE_WINDOW_S = 7 * 86400
COMPRESS_OVER = 4096  # bytes of JSON; pages are text-heavy and compress ~4x
MAX_ENTRY_BYTES = 1_500_000


@dataclass(slots=True)
class PageEntry:
    doc: Document
    etag: str | None
    last_modified: str | None
    fresh_until: float

    @property
    def fresh(self) -> bool:
        return time.time() < self.fresh_until


def page_key(url: str) -> str:
    return "page:" + normalize_url(url)


def version_key(url: str) -> str:
    """A small companion of each page entry holding only its content hash, so validating a cached
    answer reads a few bytes per page instead of decoding whole documents."""
    return "pagever:" + normalize_url(url)


async def store_entry(cache, url: str, entry: PageEntry) -> None:
    """Store the entry and its version key, kept REVALIDATE_WINDOW_S past its freshness."""
    raw = encode_entry(entry)
    if raw is None:
        return
    ttl_s = int(max(60.0, entry.fresh_until - time.time()) + REVALIDATE_WINDOW_S)
    await cache.set(page_key(url), raw, ttl_s)
    await cache.set(version_key(url), entry.doc.content_hash.encode(), ttl_s)


def encode_entry(entry: PageEntry) -> bytes | None:
    d = entry.doc
    raw = orjson.dumps(
        {
            "url": d.url,
            "title": d.title,
            "domain": d.domain,
            "hash": d.content_hash,
            "density": d.density,
            "blocks": [[b.kind, b.text, b.level] for b in d.blocks],
            "dates": [
                d.dates.published.isoformat() if d.dates.published else None,
                d.dates.modified.isoformat() if d.dates.modified else None,
                d.dates.source,
            ],
            "fetched_at": d.fetched_at.isoformat() if d.fetched_at else None,
            "etag": entry.etag,
            "last_modified": entry.last_modified,
            "fresh_until": entry.fresh_until,
        }
    )
    if len(raw) > COMPRESS_OVER:
        raw = b"z" + zlib.compress(raw, 3)
    else:
        raw = b"j" + raw
    return raw if len(raw) <= MAX_ENTRY_BYTES else None


def decode_entry(raw: bytes) -> PageEntry | None:
    try:
        data = orjson.loads(zlib.decompress(raw[1:]) if raw[:1] == b"z" else raw[1:])
        pub, mod, source = data["dates"]
        doc = Document(
            url=data["url"],
            title=data["title"],
            domain=data["domain"],
            blocks=[TextBlock(k, t, lvl) for k, t, lvl in data["blocks"]],
            dates=PageDates(date.fromisoformat(pub) if pub else None, date.fromisoformat(mod) if mod else None, source),
            fetched_at=datetime.fromisoformat(data["fetched_at"]) if data["fetched_at"] else None,
            content_hash=data["hash"],
            rank=0,
            density=data["density"],
        )
        return PageEntry(doc, data["etag"], data["last_modified"], data["fresh_until"])
    except Exception:  # a corrupt or foreign entry is a miss
        return None
