"""The /metrics body, correct with one process or several uvicorn workers, and the ASGI middleware
that counts and times every HTTP request.

Several workers: set PROMETHEUS_MULTIPROC_DIR to an empty, writable directory before the workers
start (prometheus_client reads it at import and then keeps every value in per-process files); a
scrape answered by any worker then sums all of them. See docs/OPERATIONS.md.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess, values

from app import metrics

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED_ROUTE = "unmatched"


def multiprocess_mode() -> bool:
    """True when prometheus_client keeps values in PROMETHEUS_MULTIPROC_DIR files. Asked of the
    library itself: it chose its value class once, at import, and that is what the metrics use."""
    return values.ValueClass is not values.MutexValue


def render_metrics() -> tuple[bytes, str]:
    """(body, content type) for GET /metrics."""
    if not multiprocess_mode():
        return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
    # A fresh registry per scrape, as prometheus_client documents: the collector reads every
    # worker's files (live and dead ones) and merges them.
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return generate_latest(registry), CONTENT_TYPE_LATEST


def mark_worker_dead(pid: int | None = None) -> None:
    """Drop a worker's live-gauge files (IN_FLIGHT is "livesum") so a worker that exited stops
    counting. Call it in the lifespan shutdown; a no-op outside multiprocess mode."""
    if multiprocess_mode():
        multiprocess.mark_process_dead(os.getpid() if pid is None else pid)


def _route_template(scope: Scope) -> str:
    # FastAPI's router stores the matched route in the (shared, mutated) scope; its `path` is the
    # template. Unknown paths never become label values.
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) and path else UNMATCHED_ROUTE


class HttpMetricsMiddleware:
    """Pure ASGI middleware: grounded_http_requests_total{route,method,status_class} and
    grounded_request_duration_seconds{route}. The time runs until the response is complete, so a
    streamed answer counts its whole stream."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        ended: float | None = None  # when the last body byte went out; work after it is not latency
        status = 500  # an exception before the response started is answered 500 by Starlette

        async def send_with_status(message: Message) -> None:
            nonlocal status, ended
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                ended = time.perf_counter()

        try:
            await self.app(scope, receive, send_with_status)
        finally:
            route = _route_template(scope)
            method = scope.get("method", "").upper()
            metrics.labelled(
                metrics.HTTP_REQUESTS, route, method if method in _KNOWN_METHODS else "OTHER", f"{status // 100}xx"
            ).inc()
            metrics.labelled(metrics.REQUEST_SECONDS, route).observe((ended or time.perf_counter()) - started)


def install_http_metrics(app: Any) -> Any:
    """app.add_middleware(HttpMetricsMiddleware) once (idempotent); returns the app."""
    if not any(getattr(m, "cls", None) is HttpMetricsMiddleware for m in app.user_middleware):
        app.add_middleware(HttpMetricsMiddleware)
    return app
