"""Extract: main text blocks and publication dates of each fetched page, as Documents."""

from __future__ import annotations

import re
from dataclasses import replace

from app.domain.types import Document, FetchedPage, FetchReason, PageDates, SearchHit, TextBlock
from app.extract.dates import find_page_dates
from app.extract.fallback import extract_with_fallback
from app.extract.html import parse_html
from app.extract.text_clean import content_hash
from app.urls import registrable_domain

MIN_TEXT_CHARS = 200
# Bounds on CPU per page: main text of a huge page is near its top, and dates sit in the head,
# the byline or the first screen. Beyond these sizes the cost grows while the answer does not.
# A page over the bound is cut by its markup, not its scripts and stylesheets: news pages put 1 MB
# of inline JavaScript and CSS before the article (2 of the 181 benchmark pages came out empty).
# Scripts are dropped whole (JSON-LD, which holds dates, is kept); stylesheets and JSON-LD are kept
# outside the markup count up to a budget of their own (the same size: CSS costs the hidden-text
# check, app/extract/hidden.py), past which they count as markup.
EXTRACT_MAX_BYTES = 1_000_000
DATES_MAX_CHARS = 200_000
_NAME_ENDS = frozenset(b" \t\n\r\f/>")


def _element_start(low: bytes, opener: bytes, pos: int) -> int:
    """Where the next `opener` element starts ("<style" but not "<stylesheet"), or len(low)."""
    while (i := low.find(opener, pos)) >= 0:
        if i + len(opener) < len(low) and low[i + len(opener)] in _NAME_ENDS:
            return i
        pos = i + 1
    return len(low)


def _tag_end(low: bytes, start: int) -> int:
    """The ">" closing the tag at `start`, outside quoted attribute values; -1 if none."""
    m = _TAG_REST.match(low, start + 1)
    return m.end() - 1 if m else -1


# The rest of a tag up to its ">": runs of other bytes and whole quoted values. Possessive, so a tag
# that never closes fails in one linear pass instead of backtracking.
_TAG_REST = re.compile(rb"""(?:[^>"']++|"[^"]*+"|'[^']*+')*+>""")


def bounded_markup(body: bytes, limit: int = EXTRACT_MAX_BYTES) -> bytes:
    """`body` with at most `limit` bytes of markup outside <script> and <style> elements, and at most
    `limit` more of stylesheets and JSON-LD. One linear pass: comments are markup (a "<script" inside
    one starts nothing), a tag ends at a ">" outside quotes, an element at its first "</script" or
    "</style" (as in HTML parsing)."""
    if len(body) <= limit:
        return body
    low = body.lower()
    out: list[bytes] = []
    pos = counted = 0
    spare = limit  # stylesheets and JSON-LD kept outside the markup count

    def markup(a: int, b: int) -> None:
        """body[a:b] as counted markup, cut where the count reaches `limit`."""
        nonlocal counted
        take = min(b - a, limit - counted)
        out.append(body[a : a + take])
        counted += take

    # The next of each kind, looked up again only once passed: each find moves forward (linear).
    nxt = {b"<script": -1, b"<style": -1, b"<!--": -1}
    while True:
        for opener, at in nxt.items():
            if at < pos:
                nxt[opener] = (
                    _element_start(low, opener, pos)
                    if opener != b"<!--"
                    else (i if (i := low.find(opener, pos)) >= 0 else len(low))
                )
        start = min(nxt.values())
        markup(pos, start)
        if counted >= limit or start == len(body):
            break
        if start == nxt[b"<!--"]:
            end = low.find(b"-->", start + 4)
            end = len(body) if end < 0 else end + 3
        else:
            is_script = start == nxt[b"<script"]
            tag_end = _tag_end(low, start)
            close = low.find(b"</script" if is_script else b"</style", tag_end) if tag_end >= 0 else -1
            if close < 0:
                markup(start, len(body))  # unclosed: the rest is its text
                break
            close_end = _tag_end(low, close)
            end = len(body) if close_end < 0 else close_end + 1
            if is_script and b"ld+json" not in low[start:tag_end]:
                pos = end  # dropped whole: the text extractor and the date finder never read it
                continue
            if end - start <= spare:
                out.append(body[start:end])
                spare -= end - start
                pos = end
                continue
        markup(start, end)  # a comment, or a stylesheet past its budget: counted as markup
        if counted >= limit:
            break
        pos = end
    return b"".join(out)


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
        body = bounded_markup(page.body)
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


def extract_in_child(
    page: FetchedPage, hit: SearchHit | None, rank: int, fallback: bool
) -> tuple[Document | None, FetchReason]:
    """extract_page in an extraction process (app/cpu_processes.py): the page's reason comes back with
    the Document, since the child marks its own copy of the page."""
    doc = extract_page(page, hit, rank, fallback)
    return doc, page.reason


def hit_for_child(hit: SearchHit | None) -> SearchHit | None:
    """The hit as it travels to an extraction process: without what extraction does not read — the
    provider's page reader (not picklable) and its copy of the page (already in the page's body)."""
    return replace(hit, raw_content=None, read_page=None, queries=[]) if hit is not None else None
