"""The HTTP protocol the service runs under: uvicorn's httptools protocol with a header deadline.

uvicorn bounds the idle time between requests (keep-alive) but not the time a client may take to
send a request's headers: a client that opens a connection and sends one header byte a minute holds
a socket and its buffers for ever (slowloris). Here the request line and headers must be complete
within GA_HEADER_READ_TIMEOUT_S of the connection opening (or of the request's first byte on a
kept-alive connection), else the connection is closed. The body has its own deadline
(GA_BODY_READ_TIMEOUT_S, app/api/limits.py).

Run with `uvicorn app.main:app --http app.server:HttpProtocol` (scripts/serve and the Dockerfile do).
"""

from __future__ import annotations

import asyncio
import logging

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.settings import get_settings

log = logging.getLogger(__name__)


class HttpProtocol(HttpToolsProtocol):
    header_timeout_s: float | None = None  # None = read GA_HEADER_READ_TIMEOUT_S on first use
    _header_timer: asyncio.TimerHandle | None = None

    def _timeout(self) -> float:
        cls = type(self)
        if cls.header_timeout_s is None:
            cls.header_timeout_s = get_settings().header_read_timeout_s
        return cls.header_timeout_s

    def _arm(self) -> None:
        self._disarm()
        if self._timeout() > 0:
            self._header_timer = self.loop.call_later(self._timeout(), self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            log.info("closing a connection whose request headers did not arrive within %.0f s", self._timeout())
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_timer is None:
            self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # Waiting for the next request is the keep-alive timer's job until its first byte arrives.
        self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)
