"""Local servers speaking the keyed web search APIs: Brave (`GET /res/v1/web/search`), Tavily
(`POST /search`) and Serper (`POST /search`), with each API's real auth check, answer shape and
error bodies.

Script them per test, like the SearXNG server:
    brave.set_results("foo 2.0", [api_hit(url, "Title", "snippet", published="2025-03-04")])
    brave.set_default([...]) or brave.set_default(lambda q, req: [...])   # unscripted queries
    brave.fail(429, times=2)       # the API's real 429 body and headers; 500 / 422 / 432 too
    brave.latency_s = 1.0          # every request (timeouts, benchmarks)
    brave.api_key                  # the key it accepts; anything else gets the real auth error
and read what they received: brave.requests.all() (ApiRequest), brave.queries().
A result is an `api_hit(...)` dict, a bare URL, or an already API-shaped item (kept as given).
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
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse as _StarletteJSON
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from ._record import Recorder
from ._threaded import ThreadedUvicorn, bind_socket


class JSONResponse(_StarletteJSON):
    """JSON as the real APIs may send it: ASCII with \\u escapes, so an unpaired surrogate in a result
    ("\\ud800", which no UTF-8 encoder takes) reaches the client as the escape a real API would send."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def api_hit(
    url: str, title: str = "", snippet: str = "", *, published: date | datetime | str | None = None, **extra: Any
) -> dict:
    """One provider-neutral result; each server renders it in its API's shape."""
    if isinstance(published, datetime):
        published = published.replace(tzinfo=None).isoformat()
    elif isinstance(published, date):
        published = f"{published.isoformat()}T00:00:00"
    return {
        "_neutral": True,
        "url": url,
        "title": title or url,
        "snippet": snippet,
        "published": published,
        "extra": extra,
    }


@dataclass
class ApiRequest:
    method: str
    path: str
    query: str  # the search text (q / query)
    params: dict[str, str]  # URL query string
    body: dict[str, Any]  # JSON body ({} for GET)
    headers: dict[str, str]  # lower-cased names
    at: float = field(default_factory=time.time)


@dataclass
class _Failure:
    status: int
    retry_after: str | None = None


Default = Callable[[str, ApiRequest], Iterable[dict | str]]


class SearchApiServer(ThreadedUvicorn):
    """Shared scripting; subclasses say where the query and key live and how answers look."""

    name = "search-api"
    path = "/search"
    methods = ["POST"]
    settings_prefix = ""

    def __init__(self, host: str = "127.0.0.1", api_key: str | None = None) -> None:
        self._lock = threading.Lock()
        self.api_key = api_key or f"test-{self.name}-key"
        self.requests: Recorder[ApiRequest] = Recorder()
        self.reset()
        app = Starlette(
            routes=[
                Route(self.path, self._endpoint, methods=self.methods),
                Route("/healthz", lambda r: PlainTextResponse("OK")),
            ]
        )
        super().__init__(app, [bind_socket(host)], name=self.name)

    # --- scripting (any thread) ----------------------------------------------------------------

    def reset(self) -> None:
        with self._lock:
            self._scripted: dict[str, list[dict | str]] = {}
            self._default: Default | None = None
            self._failures: list[_Failure] = []
            self._fail_always: _Failure | None = None
            self.latency_s = 0.0
        self.requests.clear()

    def set_results(self, query: str, results: Iterable[dict | str]) -> None:
        """Results for an exact search text (as sent, `site:` operators included)."""
        with self._lock:
            self._scripted[query] = list(results)

    def set_default(self, fn_or_results: Default | Iterable[dict | str] | None) -> None:
        if fn_or_results is None or callable(fn_or_results):
            fn = fn_or_results
        else:
            fixed = list(fn_or_results)
            fn = lambda q, r: fixed  # noqa: E731
        with self._lock:
            self._default = fn

    def fail(self, status: int, times: int | None = 1, retry_after: str | None = None) -> None:
        """The next `times` requests answer `status` with the API's body (None = until reset)."""
        with self._lock:
            if times is None:
                self._fail_always = _Failure(status, retry_after)
            else:
                self._failures.extend([_Failure(status, retry_after)] * times)

    def queries(self) -> list[str]:
        return [r.query for r in self.requests.all()]

    def settings_overrides(self) -> dict[str, Any]:
        p = self.settings_prefix
        return {"search_providers": [p], f"{p}_api_key": self.api_key, f"{p}_url": self.url + self.path}

    # --- per API -------------------------------------------------------------------------------

    def _query_of(self, req: ApiRequest) -> str:
        raise NotImplementedError

    def _key_ok(self, req: ApiRequest) -> bool:
        raise NotImplementedError

    def _auth_error(self) -> Response:
        raise NotImplementedError

    def _error_response(self, failure: _Failure) -> Response:
        raise NotImplementedError

    def _render(self, query: str, req: ApiRequest, items: list[dict]) -> dict:
        raise NotImplementedError

    def _item(self, hit: dict, position: int) -> dict:
        raise NotImplementedError

    # --- the endpoint --------------------------------------------------------------------------

    async def _endpoint(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = None
        req = ApiRequest(
            request.method,
            request.url.path,
            "",
            dict(request.query_params),
            body if isinstance(body, dict) else {},
            {k.lower(): v for k, v in request.headers.items()},
        )
        req.query = self._query_of(req)
        self.requests.append(req)
        with self._lock:
            failure = self._failures.pop(0) if self._failures else self._fail_always
            latency, scripted, default = self.latency_s, self._scripted.get(req.query), self._default
        if latency:
            await asyncio.sleep(latency)
        if not self._key_ok(req):
            return self._auth_error()
        if failure:
            return self._error_response(failure)
        if body is None or not req.query.strip():
            return self._bad_request()
        items = scripted if scripted is not None else (list(default(req.query, req)) if default else [])
        rendered = [self._item(_neutral(i), pos) if _is_neutral(i) else i for pos, i in enumerate(items, start=1)]
        return JSONResponse(self._render(req.query, req, rendered))

    def _bad_request(self) -> Response:
        return self._error_response(_Failure(400))


def _is_neutral(item: dict | str) -> bool:
    return isinstance(item, str) or bool(item.get("_neutral"))


def _neutral(item: dict | str) -> dict:
    return api_hit(item) if isinstance(item, str) else item


# --- Brave ---------------------------------------------------------------------------------------


class BraveServer(SearchApiServer):
    name = "brave"
    path = "/res/v1/web/search"
    methods = ["GET", "POST"]
    settings_prefix = "brave"

    def _query_of(self, req: ApiRequest) -> str:
        return req.params.get("q") or str(req.body.get("q", ""))

    def _key_ok(self, req: ApiRequest) -> bool:
        return req.headers.get("x-subscription-token") == self.api_key

    @staticmethod
    def _error_body(status: int, code: str, detail: str, meta: dict | None = None) -> dict:
        return {
            "type": "ErrorResponse",
            "time": int(time.time()),
            "error": {
                "id": "c0ffee00-0000-4000-8000-000000000000",
                "status": status,
                "code": code,
                "detail": detail,
                "meta": meta or {},
            },
        }

    def _auth_error(self) -> Response:
        # Brave answers a missing or wrong token with 422, not 401.
        return JSONResponse(
            self._error_body(
                422,
                "SUBSCRIPTION_TOKEN_INVALID",
                "The provided subscription token is invalid.",
                {"component": "authentication"},
            ),
            status_code=422,
        )

    def _error_response(self, failure: _Failure) -> Response:
        s = failure.status
        if s == 429:
            headers = {
                "X-RateLimit-Limit": "1, 2000",
                "X-RateLimit-Policy": "1;w=1, 2000;w=2592000",
                "X-RateLimit-Remaining": "0, 1500",
                "X-RateLimit-Reset": "1, 1419200",
            }
            if failure.retry_after:
                headers["Retry-After"] = failure.retry_after
            body = self._error_body(
                429,
                "RATE_LIMITED",
                "Request rate limit exceeded for plan.",
                {
                    "plan": "Free",
                    "rate_limit": 1,
                    "rate_current": 2,
                    "quota_limit": 2000,
                    "quota_current": 500,
                    "component": "rate_limiter",
                },
            )
            return JSONResponse(body, status_code=429, headers=headers)
        if s == 422 or s == 400:
            return JSONResponse(
                self._error_body(
                    s,
                    "VALIDATION",
                    "Unable to validate request parameter(s)",
                    {"errors": [{"loc": ["query", "q"], "msg": "field required"}]},
                ),
                status_code=s,
            )
        if s in (401, 403):
            return JSONResponse(
                self._error_body(
                    s,
                    "SUBSCRIPTION_TOKEN_INVALID" if s == 401 else "OPTION_NOT_IN_PLAN",
                    "The provided subscription token is invalid."
                    if s == 401
                    else "The option is not subscribed in the plan.",
                ),
                status_code=s,
            )
        return JSONResponse(self._error_body(s, "INTERNAL_ERROR", "Internal server error"), status_code=s)

    def _item(self, hit: dict, position: int) -> dict:
        parts = urlsplit(hit["url"])
        item = {
            "type": "search_result",
            "title": hit["title"],
            "url": hit["url"],
            "description": hit["snippet"],
            "is_source_local": False,
            "is_source_both": False,
            "language": "en",
            "family_friendly": True,
            "meta_url": {
                "scheme": parts.scheme,
                "netloc": parts.netloc,
                "hostname": parts.hostname,
                "path": parts.path,
            },
            "profile": {"name": parts.hostname, "url": hit["url"], "long_name": parts.hostname},
        }
        if hit["published"]:
            item["page_age"] = hit["published"]
            item["age"] = datetime.fromisoformat(hit["published"]).strftime("%B %-d, %Y")
        item.update(hit["extra"])
        return item

    def _render(self, query: str, req: ApiRequest, items: list[dict]) -> dict:
        count = int(req.params.get("count") or req.body.get("count") or 20)
        out: dict[str, Any] = {
            "type": "search",
            "query": {
                "original": query,
                "show_strict_warning": False,
                "is_navigational": False,
                "is_news_breaking": False,
                "spellcheck_off": True,
                "country": "us",
                "bad_results": False,
                "should_fallback": False,
                "postal_code": "",
                "city": "",
                "header_country": "",
                "more_results_available": len(items) > count,
                "state": "",
            },
            "mixed": {
                "type": "mixed",
                "main": [{"type": "web", "index": i, "all": False} for i in range(min(count, len(items)))],
            },
        }
        if items:  # Brave leaves the web block out when nothing matched
            out["web"] = {"type": "search", "results": items[:count], "family_friendly": True}
        return out


# --- Tavily --------------------------------------------------------------------------------------


class TavilyServer(SearchApiServer):
    name = "tavily"
    settings_prefix = "tavily"

    def __init__(self, host: str = "127.0.0.1", api_key: str | None = None) -> None:
        super().__init__(host, api_key or "tvly-dev-test0000000000000000000000")

    def _query_of(self, req: ApiRequest) -> str:
        return str(req.body.get("query", ""))

    def _key_ok(self, req: ApiRequest) -> bool:
        # Current clients send the Bearer header; older ones put api_key in the body. Both work.
        return req.headers.get("authorization") == f"Bearer {self.api_key}" or req.body.get("api_key") == self.api_key

    def _auth_error(self) -> Response:
        return JSONResponse({"detail": {"error": "Unauthorized: missing or invalid API key."}}, status_code=401)

    def _error_response(self, failure: _Failure) -> Response:
        messages = {
            400: "Invalid request.",
            401: "Unauthorized: missing or invalid API key.",
            429: "Your request has been blocked due to excessive requests. Please reduce rate of requests.",
            432: "This request exceeds your plan's set usage limit. Please upgrade your plan or contact "
            "support@tavily.com",
            433: "This request exceeds the pay-as-you-go limit. You can increase your limit on the Tavily dashboard.",
        }
        headers = {"retry-after": failure.retry_after} if failure.retry_after else {}
        msg = messages.get(failure.status, "Internal Server Error")
        return JSONResponse({"detail": {"error": msg}}, status_code=failure.status, headers=headers)

    def _item(self, hit: dict, position: int) -> dict:
        item = {
            "title": hit["title"],
            "url": hit["url"],
            "content": hit["snippet"],
            "score": round(0.9 / position, 4),
            "raw_content": None,
        }
        if hit["published"]:
            item["published_date"] = datetime.fromisoformat(hit["published"]).strftime("%a, %d %b %Y %H:%M:%S GMT")
        item.update(hit["extra"])
        return item

    def _render(self, query: str, req: ApiRequest, items: list[dict]) -> dict:
        count = int(req.body.get("max_results") or 5)
        results = items[:count]
        if not req.body.get("include_raw_content"):
            results = [{**r, "raw_content": None} for r in results]
        return {
            "query": query,
            "follow_up_questions": None,
            "answer": None,
            "images": [],
            "results": results,
            "response_time": 0.42,
            "request_id": "123e4567-e89b-12d3-a456-426614174111",
        }


# --- Serper --------------------------------------------------------------------------------------


class SerperServer(SearchApiServer):
    name = "serper"
    settings_prefix = "serper"

    def _query_of(self, req: ApiRequest) -> str:
        return str(req.body.get("q", ""))

    def _key_ok(self, req: ApiRequest) -> bool:
        return req.headers.get("x-api-key") == self.api_key

    def _auth_error(self) -> Response:
        return JSONResponse({"message": "Unauthorized.", "statusCode": 403}, status_code=403)

    def _error_response(self, failure: _Failure) -> Response:
        messages = {400: "Not enough credits", 401: "Unauthorized.", 403: "Unauthorized.", 429: "Too many requests"}
        headers = {"retry-after": failure.retry_after} if failure.retry_after else {}
        return JSONResponse(
            {"message": messages.get(failure.status, "Internal server error"), "statusCode": failure.status},
            status_code=failure.status,
            headers=headers,
        )

    def _item(self, hit: dict, position: int) -> dict:
        item = {"title": hit["title"], "link": hit["url"], "snippet": hit["snippet"], "position": position}
        if hit["published"]:
            item["date"] = datetime.fromisoformat(hit["published"]).strftime("%b %-d, %Y")
        item.update(hit["extra"])
        return item

    def _render(self, query: str, req: ApiRequest, items: list[dict]) -> dict:
        num = int(req.body.get("num") or 10)
        params = {"q": query, "type": "search", "engine": "google", "num": num}
        if req.body.get("tbs"):
            params["tbs"] = req.body["tbs"]
        return {
            "searchParameters": params,
            "organic": items[:num],
            "peopleAlsoAsk": [],
            "relatedSearches": [],
            "credits": 1,
        }
