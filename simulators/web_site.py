"""One scripted site of the test web: its pages, robots.txt, and counters."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime

from .web_pages import HOSTILE_INSTRUCTION, article_html, gzip_bomb, hostile_html, near_duplicate_variants, tiny_png

HTML = "text/html; charset=utf-8"
ALLOW_ALL_ROBOTS = "User-agent: *\nDisallow:\n"


@dataclass(frozen=True)
class Page:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased names
    delay_s: float = 0.0  # before the status line
    trickle_interval_s: float | None = None  # send the body `trickle_chunk` bytes at a time
    trickle_chunk: int = 1
    declared_length: int | None = None  # a Content-Length that does not match the body
    stream_bytes: int = 0  # stream this many filler bytes after `body`, no Content-Length


NOT_FOUND = Page(404, b"<html><body><h1>Not Found</h1></body></html>", {"content-type": HTML})


class Site:
    def __init__(self, name: str, ip: str, port: int) -> None:
        self.name, self.ip, self.port = name, ip, port
        self.url = f"http://{ip}:{port}"
        self._lock = threading.Lock()
        self._pages: dict[str, Page] = {}
        self._not_modified: dict[str, int] = {}
        self.robots_txt: str | None = ALLOW_ALL_ROBOTS  # None = 404 for /robots.txt

    def __repr__(self) -> str:
        return f"Site({self.name!r}, {self.url!r})"

    def url_for(self, path: str) -> str:
        return self.url + path

    def named_url(self, path: str) -> str:
        """The URL by name (http://news-a.test:PORT/path): reachable through the proxy."""
        return f"http://{self.name}:{self.port}{path}"

    # --- scripting -----------------------------------------------------------------------------

    def add_page(
        self,
        path: str,
        body: str | bytes = b"",
        *,
        status: int = 200,
        content_type: str | None = None,
        headers: dict[str, str] | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        cache_control: str | None = None,
        delay_s: float = 0.0,
        **knobs,
    ) -> str:
        """Serve `body` at `path` (an exact "path?query" key wins over the bare path).
        Returns the page's URL."""
        raw = body.encode() if isinstance(body, str) else body
        hdrs = {"content-type": content_type or (HTML if isinstance(body, str) else "application/octet-stream")}
        for name, value in (("etag", etag), ("last-modified", last_modified), ("cache-control", cache_control)):
            if value is not None:
                hdrs[name] = value
        hdrs.update({k.lower(): v for k, v in (headers or {}).items()})
        with self._lock:
            self._pages[path] = Page(status, raw, hdrs, delay_s, **knobs)
        return self.url_for(path)

    def add_article(
        self,
        path: str,
        title: str,
        paragraphs: Iterable[str],
        *,
        published: date | datetime | str | None = None,
        modified: date | datetime | str | None = None,
        author: str | None = None,
        jsonld: bool = True,
        meta: bool = True,
        byline: bool = False,
        conditional: bool = False,
        **page_kw,
    ) -> str:
        """An article page; `conditional=True` adds a content-hash ETag (and answers 304)."""
        body = article_html(
            title,
            paragraphs,
            published=published,
            modified=modified,
            author=author,
            jsonld=jsonld,
            meta=meta,
            byline=byline,
            site_name=self.name,
        )
        if conditional and "etag" not in page_kw:
            page_kw["etag"] = '"' + hashlib.sha1(body.encode()).hexdigest()[:16] + '"'
        return self.add_page(path, body, **page_kw)

    def add_redirect(self, path: str, location: str, status: int = 301) -> str:
        return self.add_page(path, f'<a href="{location}">moved</a>', status=status, headers={"location": location})

    def add_redirect_chain(
        self, path: str, final: str, hops: int = 3, status: int = 302, absolute: bool = False
    ) -> str:
        """path -> path/hop1 -> ... -> final; relative Location headers unless `absolute`."""
        steps = [path] + [f"{path.rstrip('/')}/hop{i}" for i in range(1, hops)]
        for i, step in enumerate(steps):
            target = steps[i + 1] if i + 1 < len(steps) else final
            if absolute and target.startswith("/"):
                target = self.url_for(target)
            self.add_redirect(step, target, status)
        return self.url_for(path)

    def add_slow(self, path: str, delay_s: float, body: str = "<p>slow page</p>") -> str:
        return self.add_page(path, body, delay_s=delay_s)

    def add_trickle(
        self,
        path: str,
        body: str | bytes = "<html><body><p>trickle</p></body></html>",
        interval_ms: float = 100,
        chunk: int = 1,
    ) -> str:
        return self.add_page(path, body, trickle_interval_s=interval_ms / 1000, trickle_chunk=chunk)

    def add_gzip_bomb(self, path: str, decompressed_bytes: int = 20_000_000) -> str:
        return self.add_page(
            path, gzip_bomb(decompressed_bytes), content_type=HTML, headers={"content-encoding": "gzip"}
        )

    def add_length_lie(
        self, path: str, claimed: int = 10_000_000_000, sent: bytes = b"<html><body><p>short</p>"
    ) -> str:
        """Declares `claimed` bytes in Content-Length, sends `sent`, then drops the connection."""
        return self.add_page(path, sent, content_type=HTML, declared_length=claimed)

    def add_huge(self, path: str, total_bytes: int = 50_000_000) -> str:
        """An honest but huge HTML body, streamed chunked with no Content-Length."""
        return self.add_page(path, "<html><body>", stream_bytes=total_bytes)

    def add_binary(self, path: str, body: bytes | None = None, content_type: str = "image/png") -> str:
        return self.add_page(path, tiny_png() if body is None else body, content_type=content_type)

    def add_hostile(
        self,
        path: str,
        title: str,
        paragraphs: Iterable[str],
        *,
        instruction: str = HOSTILE_INSTRUCTION,
        visible_instruction: bool = True,
        published: date | str | None = None,
        **page_kw,
    ) -> str:
        return self.add_page(
            path,
            hostile_html(
                title, paragraphs, instruction=instruction, visible_instruction=visible_instruction, published=published
            ),
            **page_kw,
        )

    def add_near_duplicates(self, paths: list[str], title: str, paragraphs: list[str], **article_kw) -> list[str]:
        """Near-duplicate copies of one story at `paths` on this site (use the module-level
        helper in several sites' loops for cross-site copies)."""
        variants = near_duplicate_variants(title, paragraphs, len(paths))
        return [self.add_article(p, t, paras, **article_kw) for p, (t, paras) in zip(paths, variants)]

    def set_robots(self, text: str | None) -> None:
        """robots.txt body; None = 404 (also allow-all by RFC 9309)."""
        self.robots_txt = text

    def clear(self) -> None:
        with self._lock:
            self._pages.clear()
            self._not_modified.clear()
        self.robots_txt = ALLOW_ALL_ROBOTS

    # --- serving -------------------------------------------------------------------------------

    def lookup(self, path: str, query: str) -> Page:
        with self._lock:
            page = self._pages.get(f"{path}?{query}") if query else None
            page = page or self._pages.get(path)
        if page is not None:
            return page
        if path == "/robots.txt" and self.robots_txt is not None:
            return Page(200, self.robots_txt.encode(), {"content-type": "text/plain"})
        return NOT_FOUND

    def count_not_modified(self, path: str) -> None:
        with self._lock:
            self._not_modified[path] = self._not_modified.get(path, 0) + 1

    def not_modified_count(self, path: str | None = None) -> int:
        """How many 304s this site answered (for one path, or in all)."""
        with self._lock:
            if path is None:
                return sum(self._not_modified.values())
            return self._not_modified.get(path, 0)


def add_near_duplicates_across(
    sites: list[Site], path: str, title: str, paragraphs: list[str], **article_kw
) -> list[str]:
    """One story syndicated across several sites (one near-duplicate copy each)."""
    variants = near_duplicate_variants(title, paragraphs, len(sites))
    return [s.add_article(path, t, paras, **article_kw) for s, (t, paras) in zip(sites, variants)]
