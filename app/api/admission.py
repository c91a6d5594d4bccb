"""Admission control: a bounded number of answers in flight per process, a bounded queue in front
of them, and a fast, explicit refusal past both.

Without it every request is accepted and all of them slow down together until each misses its
deadline. With it the accepted ones keep their latency: past GA_MAX_IN_FLIGHT answers a request
waits in a queue of at most GA_ADMISSION_QUEUE for at most GA_ADMISSION_WAIT_S, then gets a JSON
503 (`overloaded`) with Retry-After, which OpenAI clients retry with backoff. Only requests that
cause answer work are admitted this way; health, metrics, models and traces never queue.

Keep-alive and several workers: uvicorn's workers share one listening socket, and the worker that
wakes first accepts every connection waiting, so a client with a pool of kept-alive connections can
pin all of them to one worker while the others idle (`python -m bench.worker_balance`: the busiest of
two workers did all the work in most runs). A busy process therefore answers with `Connection: close` when more
than GA_KEEPALIVE_MAX_IN_FLIGHT answers are in flight in it: the client reconnects, and the new
connection goes to whichever worker accepts first — usually one with less to do.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import metrics
from app.api.limits import send_error
from app.errors import GroundingError

RETRY_AFTER_S = 1  # a refused client should come back soon: the queue drains in about a deadline


class Overloaded(GroundingError):
    status_code = 503
    error_type = "server_error"
    code = "overloaded"

    def __init__(self, message: str, retry_after_s: int = RETRY_AFTER_S):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class Admission:
    """A semaphore with a bounded, timed wait. Single event loop: counters need no lock."""

    def __init__(self, max_in_flight: int, max_queue: int, wait_s: float):
        self.max_in_flight = max_in_flight
        self.max_queue = max_queue
        self.wait_s = wait_s
        self.in_flight = 0
        self.queued = 0
        self._freed = asyncio.Condition()

    async def acquire(self) -> None:
        if self.in_flight < self.max_in_flight and self.queued == 0:
            self.in_flight += 1
            return
        if self.queued >= self.max_queue:
            metrics.ADMISSION_REFUSED.labels(reason="queue_full").inc()
            raise Overloaded(
                f"overloaded: {self.in_flight} answers in flight and {self.queued} waiting (GA_MAX_IN_FLIGHT, "
                "GA_ADMISSION_QUEUE); retry after the Retry-After delay"
            )
        self.queued += 1
        metrics.ADMISSION_QUEUED.set(self.queued)
        try:
            async with self._freed:
                await asyncio.wait_for(
                    self._freed.wait_for(lambda: self.in_flight < self.max_in_flight), timeout=self.wait_s
                )
                self.in_flight += 1
        except TimeoutError:
            metrics.ADMISSION_REFUSED.labels(reason="wait_timeout").inc()
            raise Overloaded(
                f"overloaded: no answer slot freed within {self.wait_s:g} s (GA_ADMISSION_WAIT_S); retry after the "
                "Retry-After delay",
                retry_after_s=max(RETRY_AFTER_S, math.ceil(self.wait_s)),
            ) from None
        finally:
            self.queued -= 1
            metrics.ADMISSION_QUEUED.set(self.queued)

    async def release(self) -> None:
        self.in_flight -= 1
        if self.queued:  # only a waiter needs waking: the common, unloaded path takes no lock
            async with self._freed:
                self._freed.notify(1)


class AdmissionMiddleware:
    """Pure ASGI: admits POSTs to the answer routes; the slot is held until the response (a whole
    stream included) is sent."""

    def __init__(self, app: ASGIApp, admission: Admission, paths: Iterable[str], keepalive_max_in_flight: int = 0):
        self.app = app
        self.admission = admission
        self.paths = frozenset(paths)
        self.keepalive_max_in_flight = keepalive_max_in_flight  # 0: never close a connection for load

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in self.paths:
            return await self.app(scope, receive, send)
        try:
            await self.admission.acquire()
        except Overloaded as exc:
            return await send_error(send, exc, headers=[(b"retry-after", str(exc.retry_after_s).encode())])
        try:
            await self.app(scope, receive, self._shedding(send) if self.keepalive_max_in_flight > 0 else send)
        finally:
            await self.admission.release()

    def _shedding(self, send: Send) -> Send:
        """`send`, adding `Connection: close` to the response head while the process is busy."""

        async def shed(message: Message) -> None:
            if message["type"] == "http.response.start" and self.admission.in_flight > self.keepalive_max_in_flight:
                message = {**message, "headers": [*message.get("headers", []), (b"connection", b"close")]}
            await send(message)

        return shed
