"""Extract: main text blocks and publication dates of each fetched page, as Documents."""

from __future__ import annotations

from app.domain.types import Document, FetchedPage, FetchReason, PageDates, SearchHit, TextBlock
from app.extract.dates import find_page_dates
from app.extract.fallback import extract_with_fallback
from app.extract.html import parse_html
from app.extract.text_clean import content_hash
from app.urls import registrable_domain

MIN_TEXT_CHARS = 200
# Bounds on CPU per page: main text of a huge page is near its top, and dates sit in the head,
# the byline or the first screen. Beyond these sizes the cost grows while the answer does not.
EXTRACT_MAX_BYTES = 1_000_000
DATES_MAX_CHARS = 200_000


def _extract_one(page: FetchedPage, hit: SearchHit | None, rank: int, fallback: bool) -> Document | None:
    ctype = page.content_type.split(";")[0].strip().lower()
    dates = PageDates()
    title = hit.title if hit else ""
    density = 1.0
    if ctype == "application/pdf":
        from app.extract.pdf import extract_pdf  # pypdf loads only when a PDF shows up

        ext = extract_pdf(page.body)
        blocks, title = ext.blocks, ext.title or title
    elif ctype == "text/plain" or ctype == "text/markdown":
        text = page.body.decode("utf-8", errors="replace")
        blocks = [TextBlock("paragraph", p.strip()) for p in text.split("\n\n") if p.strip()]
    else:
        body = page.body[:EXTRACT_MAX_BYTES]
        parser = parse_html(body)  # parsed once: dates first, then extraction prunes the tree
        head = body[: DATES_MAX_CHARS * 2].decode("utf-8", errors="replace")[:DATES_MAX_CHARS]
        dates = find_page_dates(head, url=page.url, headers=page.headers, parser=parser)
        ext = extract_with_fallback(body, url=page.url, parser=parser, enabled=fallback)
        if ext.is_shell:
            return None
        blocks, title, density = ext.blocks, ext.title or title, ext.density
    if dates.published is None and hit is not None and hit.published_at is not None:
        dates = PageDates(published=hit.published_at.date(), modified=dates.modified, source="search-engine")
    text_len = sum(len(b.text) for b in blocks)
    if text_len < MIN_TEXT_CHARS:
        return None
    return Document(
        url=page.url,
        title=title or page.url,
        domain=registrable_domain(page.url),
        blocks=blocks,
        dates=dates,
        fetched_at=page.fetched_at,
        content_hash=content_hash("\n".join(b.text for b in blocks)),
        rank=rank,
        primary=bool(hit and hit.primary),
        density=density,
    )


def extract_page(page: FetchedPage, hit: SearchHit | None, rank: int, fallback: bool = True) -> Document | None:
    """Extract one fetched page; None (and the page marked empty_extraction) when nothing usable.
    ``fallback``: trafilatura's second opinion on low-confidence HTML (Settings.extract_fallback)."""
    try:
        doc = _extract_one(page, hit, rank, fallback)
    except Exception:  # a page that breaks the parser is a lost page, not a failed request
        doc = None
    if doc is None:
        page.reason = FetchReason.empty_extraction
    return doc
