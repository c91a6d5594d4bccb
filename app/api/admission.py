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
import contextlib
import math
from collections import deque
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
    """A semaphore with a bounded, timed, first-come wait. Single event loop: no lock. A released slot
    is handed to the first waiter directly (its future resolved), so a release never waits: the
    asyncio.Condition this replaced made every release and every timed-out waiter queue for its lock,
    and on a saturated event loop (the 2026-12-08 soak) that convoy kept requests in the app for
    seconds after their last byte, holding their slots."""

    def __init__(self, max_in_flight: int, max_queue: int, wait_s: float):
        self.max_in_flight = max_in_flight
        self.max_queue = max_queue
        self.wait_s = wait_s
        self.in_flight = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def queued(self) -> int:
        return len(self._waiters)

    async def acquire(self) -> None:
        if self.in_flight < self.max_in_flight and not self._waiters:
            self.in_flight += 1
            return
        if len(self._waiters) >= self.max_queue:
            metrics.ADMISSION_REFUSED.labels(reason="queue_full").inc()
            raise Overloaded(
                f"overloaded: {self.in_flight} answers in flight and {self.queued} waiting (GA_MAX_IN_FLIGHT, "
                "GA_ADMISSION_QUEUE); retry after the Retry-After delay"
            )
        slot: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(slot)
        metrics.ADMISSION_QUEUED.set(self.queued)
        try:
            async with asyncio.timeout(self.wait_s):
                await slot  # resolved by release(): the slot is ours, in_flight already counts it
        except TimeoutError:
            if _handed(slot):  # the slot came in the same loop turn as the timeout: take it
                return
            metrics.ADMISSION_REFUSED.labels(reason="wait_timeout").inc()
            raise Overloaded(
                f"overloaded: no answer slot freed within {self.wait_s:g} s (GA_ADMISSION_WAIT_S); retry after the "
                "Retry-After delay",
                retry_after_s=max(RETRY_AFTER_S, math.ceil(self.wait_s)),
            ) from None
        except asyncio.CancelledError:
            if _handed(slot):  # cancelled (client gone, shutdown) just after being handed a slot: pass it on
                self._release_now()
            raise
        finally:
            if not slot.done():
                slot.cancel()
            with contextlib.suppress(ValueError):
                self._waiters.remove(slot)
            metrics.ADMISSION_QUEUED.set(self.queued)

    async def release(self) -> None:
        self._release_now()

    def _release_now(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes on: in_flight is unchanged
                metrics.ADMISSION_QUEUED.set(self.queued)
                return
        self.in_flight -= 1


def _handed(slot: asyncio.Future[None]) -> bool:
    return slot.done() and not slot.cancelled()


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
