"""Real HTTP servers on 127.0.0.1 for the fetcher tests (self-contained; raw asyncio streams so a
test controls every byte: trickles, gzip bombs, lying Content-Length, abrupt resets)."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest

from app.fetch.fetcher import PageFetcher


@dataclass
class Request:
    method: str
    target: str  # as on the request line: origin-form "/x" or absolute-form "http://h/x" (proxy)
    headers: dict[str, str]

    @property
    def path(self) -> str:
        return urlsplit(self.target).path or "/"


Handler = Callable[[Request, asyncio.StreamWriter], Awaitable[None]]

_REASONS = {
    200: "OK",
    204: "No Content",
    301: "Moved",
    302: "Found",
    304: "Not Modified",
    307: "Temporary Redirect",
    404: "Not Found",
    429: "Too Many",
    500: "Server Error",
    503: "Unavailable",
}


def head_bytes(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'X')}"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def respond(
    writer: asyncio.StreamWriter,
    status: int = 200,
    body: bytes = b"",
    *,
    content_type: str | None = "text/html; charset=utf-8",
    headers: dict[str, str] | None = None,
) -> None:
    h = {"Connection": "close"}
    if content_type is not None:
        h["Content-Type"] = content_type
    h.update(headers or {})
    h.setdefault("Content-Length", str(len(body)))
    writer.write(head_bytes(status, h) + body)
    await writer.drain()


async def not_found(request: Request, writer: asyncio.StreamWriter) -> None:
    await respond(writer, 404, b"not found", content_type="text/plain")


@dataclass
class LocalServer:
    routes: dict[str, Handler] = field(default_factory=dict)
    fallback: Handler = not_found
    ssl_context: ssl.SSLContext | None = None
    requests: list[Request] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    port: int = 0
    _server: asyncio.AbstractServer | None = None
    _tasks: set[asyncio.Task] = field(default_factory=set)

    async def start(self) -> LocalServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self.ssl_context)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        scheme = "https" if self.ssl_context else "http"
        return f"{scheme}://{host}:{self.port}{path}"

    def hits(self, path: str) -> int:
        return sum(1 for r in self.requests if r.path == path)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            line, *header_lines = head.decode("latin-1").split("\r\n")
            method, target, _ = line.split(" ", 2)
            headers = {}
            for h in header_lines:
                if ":" in h:
                    k, v = h.split(":", 1)
                    headers[k.strip().lower()] = v.strip()
            request = Request(method, target, headers)
            self.requests.append(request)
            handler = self.routes.get(request.path, self.fallback)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                await handler(request, writer)
            finally:
                self.in_flight -= 1
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError, OSError):
            pass  # the client went away (deadline, cap): expected in these tests
        finally:
            self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def close(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 2)


class FakeResolver:
    """Name -> successive answers (the last repeats); counts calls. Unknown names fail like DNS."""

    def __init__(self, answers: dict[str, list[list[str]]]):
        self.answers = answers
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        seq = self.answers.get(host)
        if not seq:
            raise OSError(f"unknown test host {host}")
        n = sum(1 for c in self.calls if c == host) - 1
        return seq[min(n, len(seq) - 1)]


class NoResolver:
    """For proxy mode: any local resolution is a test failure."""

    calls = 0

    async def __call__(self, host: str, port: int) -> list[str]:
        NoResolver.calls += 1
        raise AssertionError(f"resolved {host} locally in proxy mode")


@pytest.fixture
async def server():
    srv = await LocalServer().start()
    yield srv
    await srv.close()


@pytest.fixture
async def make_server():
    servers: list[LocalServer] = []

    async def make(**kw) -> LocalServer:
        srv = await LocalServer(**kw).start()
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        await srv.close()


@pytest.fixture
async def make_fetcher():
    """PageFetcher with test defaults: loopback exempt, robots off unless asked, short limits."""
    fetchers: list[PageFetcher] = []

    def make(*, ports: list[int] = (), **kw) -> PageFetcher:
        options = {
            "user_agent": "GroundedAnswerBot/0.1",
            "contact_url": "https://example.org/bot",
            "timeout_s": 5.0,
            "connect_timeout_s": 2.0,
            "max_bytes": 1_000_000,
            "allowed_ports": [80, 443, *ports],
            "allow_private": ["127.0.0.0/8"],
            "respect_robots": False,
        }
        options.update(kw)
        fetcher = PageFetcher(**options)
        fetchers.append(fetcher)
        return fetcher

    yield make
    for fetcher in fetchers:
        await fetcher.aclose()
