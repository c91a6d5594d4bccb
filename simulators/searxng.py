"""A SearXNG-shaped search server: `/search?q=...&format=json` (GET or POST form).

Answers the JSON shape of a real SearXNG instance (checked against searxng's webapp and client
libraries): query, number_of_results, results[] (url, title, content, engine, engines, score,
category, publishedDate, parsed_url, positions, template, ...), answers, corrections, infoboxes,
suggestions, unresponsive_engines ([[engine, reason], ...]).

Script it per test:
    searxng.set_results("python 3.13 release", [searx_result("http://127.0.0.2:P/a", "A", "...")])
    searxng.set_default(lambda q, params: [...])       # fallback for unscripted queries
    searxng.json_enabled = False                          # -> 403, SearXNG's default config
    searxng.fail(429, times=2)                            # the next 2 requests fail
    searxng.latency_s = 0.05                              # every request (benchmarks)
and read what it received: searxng.requests.all(), searxng.queries().
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any
from urllib.parse import parse_qsl, urlparse

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from ._record import Recorder
from ._threaded import ThreadedUvicorn, bind_socket


def searx_result(
    url: str,
    title: str = "",
    content: str = "",
    *,
    published: datetime | date | str | None = None,
    engine: str = "duckduckgo",
    engines: Iterable[str] | None = None,
    score: float | None = None,
    category: str = "general",
    position: int = 1,
    **extra: Any,
) -> dict:
    """One result item in SearXNG's JSON shape."""
    if isinstance(published, (datetime, date)):
        if not isinstance(published, datetime):
            published = datetime(published.year, published.month, published.day)
        published = published.isoformat()
    engines_list = list(engines) if engines is not None else [engine]
    item = {
        "url": url,
        "title": title or url,
        "content": content,
        "engine": engine,
        "template": "default.html",
        "parsed_url": list(urlparse(url)),
        "img_src": "",
        "thumbnail": "",
        "priority": "",
        "engines": engines_list,
        "positions": [position] * len(engines_list),
        "score": score if score is not None else round(len(engines_list) / position, 4),
        "category": category,
        "publishedDate": published,
    }
    item.update(extra)
    return item


@dataclass
class SearchRequest:
    method: str
    query: str
    params: dict[str, str]  # query string and form fields merged (q, format, pageno, ...)
    headers: dict[str, str]  # lower-cased names
    at: float = field(default_factory=time.time)


@dataclass
class ScriptedSearch:
    results: list[dict] = field(default_factory=list)
    answers: list[Any] = field(default_factory=list)
    corrections: list[str] = field(default_factory=list)
    infoboxes: list[dict] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
    unresponsive_engines: list[tuple[str, str]] = field(default_factory=list)
    number_of_results: int | None = None
    delay_s: float = 0.0


# A default function receives (query, params) and returns a result list or a ScriptedSearch.
DefaultSearch = Callable[[str, dict[str, str]], "list[dict | str] | ScriptedSearch"]


def _complete(items: Iterable[dict | str]) -> list[dict]:
    """Fill the fields a test left out, so partial dicts (or bare URLs) become real results."""
    out = []
    for pos, item in enumerate(items, start=1):
        if isinstance(item, str):
            item = {"url": item}
        base = searx_result(
            item["url"],
            item.get("title", ""),
            item.get("content", ""),
            published=item.get("publishedDate"),
            position=pos,
            engine=item.get("engine", "duckduckgo"),
            engines=item.get("engines"),
        )
        base.update({k: v for k, v in item.items() if k != "publishedDate"})
        out.append(base)
    return out


class _AsciiJSON(JSONResponse):
    """JSON with non-ASCII as \\u escapes (the same JSON to any parser): a test can put an unpaired
    surrogate in a title, which a UTF-8 body cannot carry but a JSON escape can."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, separators=(",", ":")).encode("ascii")


class SearxngServer(ThreadedUvicorn):
    def __init__(self, host: str = "127.0.0.1") -> None:
        self._lock = threading.Lock()
        self.requests: Recorder[SearchRequest] = Recorder()
        self.reset()
        app = Starlette(
            routes=[
                Route("/search", self._search, methods=["GET", "POST"]),
                Route("/healthz", lambda r: PlainTextResponse("OK")),
            ]
        )
        super().__init__(app, [bind_socket(host)], name="searxng")

    # --- scripting (any thread) ----------------------------------------------------------------

    def reset(self) -> None:
        with self._lock:
            self._scripted: dict[str, ScriptedSearch] = {}
            self._default: DefaultSearch | None = None
            self._failures: list[tuple[int, str | None]] = []
            self._fail_always: tuple[int, str | None] | None = None
            self.json_enabled = True
            self.latency_s = 0.0
            self.unresponsive_engines: list[tuple[str, str]] = []
        self.requests.clear()

    def set_results(self, query: str, results: Iterable[dict | str], **kw: Any) -> None:
        """Results for an exact query string (page 1; later pages are empty, as in SearXNG when
        the engines have nothing more). kw: answers, corrections, infoboxes, suggestions,
        unresponsive_engines, number_of_results, delay_s."""
        with self._lock:
            self._scripted[query] = ScriptedSearch(results=_complete(results), **kw)

    def set_default(self, fn_or_results: DefaultSearch | Iterable[dict | str] | None) -> None:
        if fn_or_results is None or callable(fn_or_results):
            fn = fn_or_results
        else:
            fixed = list(fn_or_results)
            fn = lambda q, p: fixed  # noqa: E731
        with self._lock:
            self._default = fn

    def fail(self, status: int, times: int | None = 1, retry_after: str | None = None) -> None:
        """The next `times` requests answer `status` (None = every request until reset)."""
        with self._lock:
            if times is None:
                self._fail_always = (status, retry_after)
            else:
                self._failures.extend([(status, retry_after)] * times)

    def settings_overrides(self) -> dict[str, Any]:
        """Settings overrides that make the service search here."""
        return {"search_providers": ["searxng"], "searxng_url": self.url}

    def queries(self) -> list[str]:
        return [r.query for r in self.requests.all()]

    # --- the endpoint --------------------------------------------------------------------------

    async def _search(self, request: Request) -> Response:
        params = dict(request.query_params)
        if request.method == "POST":
            # SearXNG clients POST application/x-www-form-urlencoded (no multipart parser needed).
            params.update(parse_qsl((await request.body()).decode("utf-8", "replace"), keep_blank_values=True))
        query = params.get("q", "")
        self.requests.append(
            SearchRequest(request.method, query, params, {k.lower(): v for k, v in request.headers.items()})
        )
        with self._lock:
            failure = self._failures.pop(0) if self._failures else self._fail_always
            json_enabled, latency = self.json_enabled, self.latency_s
            scripted = self._scripted.get(query)
            default = self._default
            global_unresponsive = list(self.unresponsive_engines)
        if latency:
            await asyncio.sleep(latency)
        if failure:
            status, retry_after = failure
            headers = {"retry-after": retry_after} if retry_after else {}
            text = {429: "Too Many Requests"}.get(status, "Internal Server Error")
            return PlainTextResponse(text, status_code=status, headers=headers)
        fmt = params.get("format", "html")
        if fmt != "html" and (fmt != "json" or not json_enabled):
            # SearXNG answers 403 for any output format not listed in search.formats.
            return HTMLResponse("<h1>Forbidden</h1>", status_code=403)
        if not query.strip():
            return JSONResponse({"error": "No query"}, status_code=400)

        answer = await self._answer(query, params, scripted, default)
        if answer.delay_s:
            await asyncio.sleep(answer.delay_s)
        unresponsive = [list(e) for e in answer.unresponsive_engines + global_unresponsive]
        if fmt == "html":
            items = "".join(
                f'<article><a href="{r["url"]}">{r["title"]}</a><p>{r["content"]}</p></article>' for r in answer.results
            )
            return HTMLResponse(f"<html><body>{items}</body></html>")
        return _AsciiJSON(
            {
                "query": query,
                "number_of_results": (
                    answer.number_of_results if answer.number_of_results is not None else len(answer.results)
                ),
                "results": answer.results,
                "answers": answer.answers,
                "corrections": answer.corrections,
                "infoboxes": answer.infoboxes,
                "suggestions": answer.suggestions,
                "unresponsive_engines": unresponsive,
            }
        )

    @staticmethod
    async def _answer(
        query: str, params: dict[str, str], scripted: ScriptedSearch | None, default: DefaultSearch | None
    ) -> ScriptedSearch:
        page = int(params.get("pageno", "1") or 1)
        if scripted is not None:
            return scripted if page == 1 else ScriptedSearch(delay_s=scripted.delay_s)
        if default is None:
            return ScriptedSearch()
        got = default(query, params)
        if asyncio.iscoroutine(got):
            got = await got
        if isinstance(got, ScriptedSearch):
            got.results = _complete(got.results)
            return got
        return ScriptedSearch(results=_complete(got))
