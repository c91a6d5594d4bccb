"""Publication and modification dates of a page, with the source that gave them.

Sources, in a fixed order of preference (the first that yields a plausible date wins):
1. JSON-LD ``datePublished`` / ``dateModified`` (objects, arrays and ``@graph``)  -> "json-ld"
2. meta tags (``article:published_time``, ``datePublished`` itemprop, ``pubdate``, ``dc.date``,
   ``parsely-pub-date``, ``sailthru.date``, ... ``og:updated_time`` last)           -> "meta"
3. ``<time datetime>`` / elements with ``itemprop=datePublished``                   -> "time"
4. a visible byline/dateline element (class or id saying date/time/published/byline) -> "byline"
5. a date in the URL path (/2020/03/15/)                                             -> "url"
6. the HTTP ``Last-Modified`` header                                                 -> "http-last-modified"
7. a date near the top of the page text                                              -> "text"
Copyright lines never count. Nothing found stays unknown: there is no default to today.
A UTC stamp (``Z``/``+00:00``, or one naming GMT/UTC with a zero offset) on a country-code domain is
read as that country's local day; a MediaWiki page is dated by its latest revision; in a byline,
"Published" beats "Updated". A UTC stamp one day from the date in the page's URL, when some offset from Hawaii to New Zealand puts the stamp's
moment on the URL's day, is read as that day: the URL names the publisher's local day.

``Last-Modified`` is a server fact about the file, not the article: it is always recorded as the
modified date when nothing better is known, and used as the published date only as a last resort
before text scanning (a page served unchanged since then was published on or before that day).
"""

from __future__ import annotations

import json
import re
from datetime import date

from selectolax.lexbor import LexborHTMLParser, LexborNode

from app.domain.types import PageDates
from app.extract.date_parse import (
    date_in_url,
    local_day_of_utc_stamp,
    parse_date,
    parse_http_date,
    parse_human_date,
    utc_offset_for_url,
    utc_stamp_allows_day,
)
from app.extract.fallback import LXML_LOCK

PUBLISHED_META = (
    "article:published_time",
    "og:published_time",
    "og:article:published_time",
    "datepublished",
    "article.published",
    "published_time",
    "publish_date",
    "publish-date",
    "publishdate",
    "pubdate",
    "parsely-pub-date",
    "sailthru.date",
    "dc.date.issued",
    "dcterms.issued",
    "dc.date",
    "dcterms.date",
    "dc.date.created",
    "dcterms.created",
    "date",
    "citation_publication_date",
    "citation_date",
    "article_date_original",
    "original-publish-date",
    "cxenseparse:recs:publishtime",
    "datecreated",
    "og:updated_time",
)
MODIFIED_META = (
    "article:modified_time",
    "og:updated_time",
    "datemodified",
    "last-modified",
    "dcterms.modified",
    "dc.date.modified",
    "article.updated",
    "sailthru.lastmodified",
)
_LD_ARTICLE_TYPES = re.compile(r"article|posting|report|news|blog|webpage|video|creativework", re.I)
_LD_FIELD_RE = re.compile(r'"(datePublished|dateModified|dateCreated|uploadDate)"\s*:\s*"([^"]{6,40})"')
_BYLINE_SELECTOR = (
    '[class*="date" i],[class*="time" i],[class*="publish" i],[class*="byline" i],'
    '[class*="posted" i],[id*="date" i],[id*="publish" i],[class*="meta" i]'
)
_COPYRIGHT_RE = re.compile(r"©|&copy;|\(c\)|copyright|all rights reserved", re.I)
_TEXT_SCAN_CHARS = 2500


def find_page_dates(
    html: str | bytes,
    url: str | None = None,
    headers: dict[str, str] | None = None,
    *,
    parser: LexborHTMLParser | None = None,
) -> PageDates:
    """`parser`: the page already parsed (the service parses once for dates and main text; dates
    must run first, extraction prunes the tree). `html` then only feeds the last-resort fallback."""
    if parser is None:
        parser = LexborHTMLParser(html, encoding=True) if isinstance(html, bytes) else LexborHTMLParser(html)
    http_modified = parse_http_date((headers or {}).get("last-modified", ""))

    ld_published, ld_modified, ld_raw = _json_ld_dates(parser)
    meta = _meta_values(parser)
    modified = ld_modified or _first_meta_date(meta, MODIFIED_META)[0] or http_modified
    meta_published, meta_raw = _first_meta_date(meta, PUBLISHED_META)
    if modified and meta.get("generator", "").lower().startswith("mediawiki"):
        # a wiki page shows its latest revision; its creation date says nothing about that text
        return PageDates(modified, modified, "json-ld" if ld_modified else "meta")
    for source, published, raw in (("json-ld", ld_published, ld_raw), ("meta", meta_published, meta_raw)):
        if published:
            offset = utc_offset_for_url(url)
            local = local_day_of_utc_stamp(raw, offset) if offset else None
            if local:
                return PageDates(local, modified or local, source)
            shown = _shown_day_near_midnight(parser, published, raw)
            if shown:
                return PageDates(shown[0], modified or shown[0], shown[1])
            url_day = date_in_url(url) if url else None
            if url_day and url_day != published and utc_stamp_allows_day(raw, url_day):
                # the publisher's URL names its local day; the UTC stamp is the same moment
                return PageDates(url_day, modified or url_day, "url")
            return PageDates(published, modified or published, source)
    for source, finder in (
        ("time", lambda: _time_element_date(parser)),
        ("byline", lambda: _byline_date(parser)),
        ("url", lambda: date_in_url(url) if url else None),
        ("http-last-modified", lambda: http_modified),
        ("text", lambda: _text_date(parser) or _htmldate_fallback(html)),
    ):
        published = finder()
        if published:
            return PageDates(published, modified or published, source)
    return PageDates(None, modified, "unknown")


# --- JSON-LD ---------------------------------------------------------------------------------


_LD_NEWS_TYPES = re.compile(r"article|posting|report|news|blog", re.I)


def _json_ld_dates(parser: LexborHTMLParser) -> tuple[date | None, date | None, str]:
    """The best ``datePublished`` over all JSON-LD objects: an article-like object's before a
    WebPage's, and any ``datePublished`` before a ``dateCreated`` / ``uploadDate``."""
    best: tuple[int, date, str] | None = None
    modified: date | None = None
    for script in parser.css('script[type="application/ld+json" i]'):
        raw = script.text(deep=True).strip()
        if not raw:
            continue
        for item in _json_ld_items(raw):
            kind = item.get("@type", "")
            kind = " ".join(kind) if isinstance(kind, list) else str(kind)
            if kind and not _LD_ARTICLE_TYPES.search(kind):
                continue
            for rank_base, field_name in ((0, "datePublished"), (2, "dateCreated"), (2, "uploadDate")):
                value = item.get(field_name)
                pub = _ld_date(value)
                if pub:
                    rank = rank_base + (0 if _LD_NEWS_TYPES.search(kind) else 1)
                    if best is None or rank < best[0]:
                        best = (rank, pub, str(value))
                    break
            modified = modified or _ld_date(item.get("dateModified"))
        if best is not None and best[0] == 0:
            break
    if best is None:
        return None, modified, ""
    return best[1], modified, best[2]


def _json_ld_items(raw: str) -> list[dict]:
    """Every object in a JSON-LD script (nested @graph and arrays flattened); tolerant of junk."""
    raw = raw.replace("<!--", "").replace("-->", "").replace("<![CDATA[", "").replace("]]>", "")
    try:
        data = json.loads(raw, strict=False)
    except ValueError:
        # broken JSON is common; the fields themselves are still readable
        fields: dict[str, str] = {}
        for name, value in _LD_FIELD_RE.findall(raw):
            fields.setdefault(name, value)
        return [fields] if fields else []
    out: list[dict] = []
    stack = [data]
    while stack and len(out) < 200:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, dict):
            out.append(node)
            for key in ("@graph", "mainEntity", "mainEntityOfPage", "itemListElement"):
                child = node.get(key)
                if isinstance(child, (list, dict)):
                    stack.append(child)
    return out


def _ld_date(value: object) -> date | None:
    if isinstance(value, list):
        value = value[0] if value else None
    return parse_date(value) if isinstance(value, str) else None


# --- meta tags -------------------------------------------------------------------------------


def _meta_values(parser: LexborHTMLParser) -> dict[str, str]:
    values: dict[str, str] = {}
    for node in parser.css("meta[content]"):
        attrs = node.attributes
        content = attrs.get("content")
        if not content:
            continue
        for key in ("property", "name", "itemprop", "http-equiv"):
            name = attrs.get(key)
            if name:
                values.setdefault(name.strip().lower(), content)
    return values


def _first_meta_date(meta: dict[str, str], names: tuple[str, ...]) -> tuple[date | None, str]:
    for name in names:
        value = meta.get(name)
        if value:
            found = parse_date(value)
            if found:
                return found, value
    return None, ""


_STAMP_HOUR_RE = re.compile(r"T(\d\d):")


def _shown_day_near_midnight(parser: LexborHTMLParser, stamp_day: date, raw: str) -> tuple[date, str] | None:
    """A machine stamp a few hours from midnight may be a day off the date readers see (it is
    often written in UTC, the page shows local time). Then a visible date one day away wins."""
    m = _STAMP_HOUR_RE.search(raw)
    if not m or 4 <= int(m[1]) <= 20:
        return None
    for source, finder in (("time", _time_element_date), ("byline", _byline_date)):
        shown = finder(parser)
        if shown and abs((shown - stamp_day).days) == 1:
            return shown, source
    return None


# --- visible elements ------------------------------------------------------------------------


def _time_element_date(parser: LexborHTMLParser) -> date | None:
    for node in parser.css('[itemprop="datePublished"], time[datetime], time[pubdate], abbr.published[title]'):
        if _in_footer(node):
            continue
        attrs = node.attributes
        value = attrs.get("datetime") or attrs.get("content") or attrs.get("title") or node.text()
        found = parse_date(value or "")
        if found:
            return found
    return None


def _byline_date(parser: LexborHTMLParser) -> date | None:
    body = parser.body
    if body is None:
        return None
    for node in body.css(_BYLINE_SELECTOR)[:60]:
        text = node.text(separator=" ")
        if not text or len(text) > 200 or _COPYRIGHT_RE.search(text) or _in_footer(node):
            continue
        found = _published_in_line(text)
        if found:
            return found
    return None


_UPDATED_RE = re.compile(r"\b(?:updated|modified|edited|aktualisiert|mis à jour|actualizado|atualizado)\b", re.I)
_PUBLISHED_RE = re.compile(r"\b(?:published|posted|created|first published|publié|publicado|veröffentlicht)\b", re.I)


def _published_in_line(text: str) -> date | None:
    """A byline's date; in "Updated: X | Published: Y" the published one, not the first one."""
    if updated := _UPDATED_RE.search(text):
        m = _PUBLISHED_RE.search(text)
        if m:
            found = parse_date(text[m.end() :])
            if found:
                return found
        # only an update date is given: it is not the publication date
        head = text[: updated.start()]
        return parse_date(head) if head.strip() else None
    return parse_date(text)


def _in_footer(node: LexborNode) -> bool:
    parent, depth = node.parent, 0
    while parent is not None and depth < 12:
        if parent.tag == "footer":
            return True
        parent, depth = parent.parent, depth + 1
    return False


def _text_date(parser: LexborHTMLParser) -> date | None:
    body = parser.body
    if body is None:
        return None
    for node in body.css("script, style, noscript, footer, nav"):
        node.decompose()
    text = body.text(separator="\n")[: _TEXT_SCAN_CHARS * 2]
    for line in text.split("\n"):
        line = line.strip()
        if not line or _COPYRIGHT_RE.search(line):
            continue
        found = parse_human_date(line) or (parse_date(line) if len(line) < 80 else None)
        if found:
            return found
    return None


HTMLDATE_MAX_CHARS = 100_000


def _htmldate_fallback(html: str | bytes) -> date | None:
    """htmldate's extensive text heuristics, only for pages none of the cheap sources could date
    (measured: it finds a correct date for some of them; see docs/EXTRACTION.md)."""
    if len(html) > HTMLDATE_MAX_CHARS:
        # htmldate's text scan has pathological cases on long pages (seconds on the Python docs'
        # re.html); past this size a page goes undated rather than stalling a request.
        return None
    try:
        from htmldate import find_date
    except ImportError:  # optional at run time
        return None
    try:
        with LXML_LOCK:  # lxml's parsers are not thread-safe
            found = find_date(html, original_date=True, extensive_search=True)
    except Exception:  # a third-party parser must not fail the page
        return None
    day = parse_date(found) if found else None
    # htmldate falls back to YYYY-01-01 from a bare year (often the copyright line): not a date
    return None if day is None or (day.month == 1 and day.day == 1) else day


def warm_up_dates() -> bool:
    """Initialise htmldate's external date parser (dateparser, all its locales) now rather than in
    the first request whose page only the fallback can date: that request would pay ~2 s of CPU
    (the regular expressions of 205 locales, compiled once a process). False when htmldate is not
    installed or no longer has the hook."""
    try:
        from htmldate.extractors import get_external_parser
    except ImportError:
        return False
    try:
        # Text no locale parses: every locale is tried, so every one is loaded (a date would stop at
        # the first locale that reads it).
        get_external_parser().get_date_data("zzz qqq")
    except Exception:  # a warm-up must never stop the service from starting
        return False
    return True
