"""Run an ASGI app under a real uvicorn server in a background thread.

Each server owns its event loop in its own thread, so the test (or benchmark) code can be sync or
async and never shares a loop with the server. Sockets are bound before start-up (port 0 = an
ephemeral port), so `url` is known before the server accepts its first connection.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import uvicorn

LOOPBACK = "127.0.0.1"


def bind_socket(host: str = LOOPBACK, port: int = 0) -> socket.socket:
    # IPPROTO_TCP, not the default 0: asyncio turns Nagle off (TCP_NODELAY) only on connections whose
    # socket says TCP (base_events._set_nodelay). Without it a response written in two parts (head,
    # then body) waited for the client's delayed ACK: every simulator reply took ~44 ms on loopback,
    # an upstream latency no configuration asked for (the bench's "overhead" was mostly this).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def free_port(host: str = LOOPBACK) -> int:
    """A port that was free a moment ago (for subprocesses that must bind it themselves)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class ThreadedUvicorn:
    """Start/stop an ASGI app on pre-bound sockets; usable as a sync or async context manager."""

    def __init__(
        self,
        app: Any,
        sockets: list[socket.socket] | None = None,
        *,
        lifespan: str = "off",
        graceful_timeout_s: int = 1,
        name: str = "test-server",
        start_timeout_s: float = 60.0,  # a service's warm-up on two cores another job is using took over 15 s
        http: str = "httptools",
        loop: str = "asyncio",
    ):
        self._sockets = sockets or [bind_socket()]
        host, port = self._sockets[0].getsockname()[:2]
        self.host: str = host
        self.port: int = port
        self.url = f"http://{host}:{port}"
        self._name = name
        self._start_timeout_s = start_timeout_s
        # httptools (uvicorn[standard]'s parser): ~1.4x the requests/s of h11 here, and every
        # scripted protocol fault behaves the same under both (the self-tests pass with either).
        self._config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan=lifespan,
            loop=loop,
            http=http,
            ws="none",
            timeout_graceful_shutdown=graceful_timeout_s,
            interface="asgi3",
            proxy_headers=False,
            log_config=None,  # leave the process's logging alone (levels only); pytest captures it
        )
        self._server = uvicorn.Server(self._config)
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> ThreadedUvicorn:
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + self._start_timeout_s
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"{self._name} failed to start: {self._error!r}") from self._error
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"{self._name} did not start within {self._start_timeout_s}s")
            time.sleep(0.005)
        return self

    def _run(self) -> None:
        try:
            self._server.run(sockets=self._sockets)
        except BaseException as exc:  # SystemExit on lifespan start-up failure lands here
            self._error = exc

    def stop(self, timeout_s: float = 10.0) -> None:
        if self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout_s)
        if self._thread.is_alive():  # a handler ignored the graceful timeout: force it
            self._server.force_exit = True
            self._thread.join(timeout_s)
        self._thread = None
        for sock in self._sockets:
            sock.close()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._server.started and not self._server.should_exit

    @property
    def error(self) -> BaseException | None:
        return self._error

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self):
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)
