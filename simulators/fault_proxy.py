"""A fault-injecting TCP proxy: put it between the service and an upstream to add latency (fixed and
spikes), reset connections mid-stream (RST, SO_LINGER 0), trickle bytes, or refuse connections.

    with SearxngServer() as sx, FaultProxy(sx.host, sx.port) as fp:
        fp.set(latency_ms=50, spike_prob=0.05, spike_ms=(1000, 3000), reset_prob=0.02)
        ... point the service at fp.url instead of sx.url ...
        fp.refuse_for(2.0)  # ECONNREFUSED for two seconds (the listening sockets are closed)
        fp.stats()  # {"connections": …, "exchanges": …, "resets": …, …}

It speaks no protocol: bytes pass through unchanged. Faults are drawn per *exchange*: an exchange
starts when the client sends bytes after the upstream has answered (or first sends on a new
connection), which on HTTP/1.1 keep-alive connections is one request and its response.

- latency: `latency_ms` before each exchange's request is passed on, plus with `spike_prob` a spike
  drawn uniformly from `spike_ms`.
- reset: with `reset_prob`, after a number of response bytes drawn from `reset_after_bytes` the
  client connection is aborted with SO_LINGER 0 (the client sees ECONNRESET, no FIN) and the upstream
  connection is dropped. A response shorter than the drawn count is not cut (`stats()["resets"]`
  counts only the resets that happened).
- slow write: with `slow_write_prob` the response reaches the client in `trickle_bytes` pieces every
  `trickle_interval_ms`.
- slow read: with `slow_read_prob` the request reaches the upstream the same way (the upstream sees a
  slow client; the client's own writes stall only when the request outgrows the proxy's buffer).
- refuse: `refuse_for(seconds)` now, or on a schedule every `refuse_every_s` for `refuse_for_s`.
  `refuse_mode="closed"` stops listening (connect() fails with ECONNREFUSED); `"reset"` accepts
  and resets at once.

`upstream_host=None` mirrors the address the client connected to: with `listen_hosts` =
127.0.0.1…127.0.0.N on one port, one proxy fronts every site of a `WebServer` (same IP, its port).
Every setter is thread-safe; the proxy runs its own event loop in a background thread (a sync and
async context manager, like the other simulators). Faults are drawn from a seeded `random.Random`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass

from ._threaded import bind_socket

_CHUNK = 65536


@dataclass
class Faults:
    latency_ms: float = 0.0
    spike_prob: float = 0.0
    spike_ms: tuple[float, float] = (500.0, 2000.0)
    reset_prob: float = 0.0
    reset_after_bytes: tuple[int, int] = (0, 2048)
    slow_write_prob: float = 0.0
    slow_read_prob: float = 0.0
    trickle_bytes: int = 256
    trickle_interval_ms: float = 10.0
    refuse_every_s: float = 0.0  # 0: no scheduled refusal windows
    refuse_for_s: float = 0.0
    refuse_mode: str = "closed"  # "closed" (ECONNREFUSED) or "reset" (accept, then RST)

    def __post_init__(self) -> None:
        if self.refuse_mode not in ("closed", "reset"):
            raise ValueError(f"refuse_mode must be 'closed' or 'reset', not {self.refuse_mode!r}")
        for name in ("spike_prob", "reset_prob", "slow_write_prob", "slow_read_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be within [0, 1]")


@dataclass
class _Exchange:
    reset_after: int | None = None  # response bytes to pass before the RST (None: no reset)
    slow_write: bool = False
    slow_read: bool = False
    sent: int = 0  # response bytes passed so far


class _Conn:
    def __init__(self) -> None:
        self.exchange: _Exchange | None = None
        self.answering = False  # the upstream has sent bytes since the client last did


def _abort_with_rst(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()


class FaultProxy:
    def __init__(
        self,
        upstream_host: str | None,
        upstream_port: int,
        *,
        listen_hosts: tuple[str, ...] | list[str] = ("127.0.0.1",),
        port: int = 0,
        faults: Faults | None = None,
        seed: int = 1,
        connect_timeout_s: float = 5.0,
        name: str = "fault-proxy",
    ) -> None:
        self.upstream_host = upstream_host
        self.upstream_port = upstream_port
        self._listen_hosts = list(listen_hosts)
        self._socks = _bind_same_port(self._listen_hosts, port)
        self.host, self.port = self._socks[0].getsockname()[:2]
        self.url = f"http://{self.host}:{self.port}"
        self.name = name
        self.connect_timeout_s = connect_timeout_s
        self._lock = threading.Lock()
        self._faults = faults or Faults()
        self._rng = random.Random(seed)
        self._stats: Counter[str] = Counter()
        self._refuse_until = 0.0  # monotonic
        self._servers: list[asyncio.AbstractServer] = []
        self._listening = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._conns: set[asyncio.Task] = set()

    # --- control (thread-safe) -----------------------------------------------------------------

    @property
    def faults(self) -> Faults:
        with self._lock:
            return dataclasses.replace(self._faults)

    def set(self, **changes: object) -> Faults:
        """Change some fault settings (the others keep their values); takes effect at once."""
        with self._lock:
            self._faults = dataclasses.replace(self._faults, **changes)  # type: ignore[arg-type]
            return dataclasses.replace(self._faults)

    def clear(self) -> None:
        """No faults at all (and no refusal window in progress)."""
        with self._lock:
            self._faults = Faults()
            self._refuse_until = 0.0

    def reset(self) -> None:
        """No faults and zeroed counters."""
        self.clear()
        with self._lock:
            self._stats.clear()

    def refuse_for(self, seconds: float) -> None:
        """Refuse new connections from now for `seconds` (established ones are left alone)."""
        with self._lock:
            self._refuse_until = max(self._refuse_until, time.monotonic() + seconds)
            self._stats["refuse_windows"] += 1

    def stats(self) -> dict[str, int]:
        """Counters: connections, exchanges, latency_ms_added, spikes, resets, slow_writes,
        slow_reads, refuse_windows, refused (reset mode only: closed mode refusals happen in the
        kernel), upstream_unreachable."""
        with self._lock:
            return dict(self._stats)

    @property
    def refusing(self) -> bool:
        with self._lock:
            return time.monotonic() < self._refuse_until

    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self._stats[key] += n

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FaultProxy:
        if self._thread is not None:
            return self
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), name=self.name, daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise TimeoutError(f"{self.name} did not start")
        return self

    def _run(self, ready: threading.Event) -> None:
        loop = self._loop = asyncio.new_event_loop()
        loop.run_until_complete(self._listen())
        ticker = loop.create_task(self._tick())
        ready.set()
        try:
            loop.run_forever()
        finally:
            ticker.cancel()
            for server in self._servers:
                server.close()
            loop.run_until_complete(_cancel_all())
            loop.close()

    def stop(self) -> None:
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._thread = None
        for sock in self._socks:
            sock.close()

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> FaultProxy:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)

    # --- listening and refusal windows ---------------------------------------------------------

    async def _listen(self) -> None:
        self._servers = [await asyncio.start_server(self._client, sock=s, limit=_CHUNK) for s in self._socks]
        self._listening = True

    async def _unlisten(self) -> None:
        for server in self._servers:
            server.close()  # closes the listening socket: connect() now fails with ECONNREFUSED
        self._servers = []
        self._listening = False

    async def _tick(self) -> None:
        """Every 20 ms: open scheduled refusal windows, and close/reopen the listening sockets."""
        next_window = None
        while True:
            await asyncio.sleep(0.02)
            now = time.monotonic()
            with self._lock:
                f = self._faults
                if f.refuse_every_s > 0 and f.refuse_for_s > 0:
                    if next_window is None:
                        next_window = now + f.refuse_every_s
                    elif now >= next_window:
                        self._refuse_until = max(self._refuse_until, now + f.refuse_for_s)
                        self._stats["refuse_windows"] += 1
                        next_window = now + f.refuse_every_s
                else:
                    next_window = None
                refusing = now < self._refuse_until
                closed_mode = f.refuse_mode == "closed"
            if refusing and closed_mode and self._listening:
                await self._unlisten()
            elif not (refusing and closed_mode) and not self._listening:
                try:
                    self._socks = _bind_same_port(self._listen_hosts, self.port)
                    await self._listen()
                except OSError:  # the port is briefly taken: try again on the next tick
                    pass

    # --- proxying ------------------------------------------------------------------------------

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._conns.add(task)
        try:
            await self._serve(reader, writer)
        except asyncio.CancelledError:
            writer.transport.abort()
        except Exception:  # a broken connection must not take the proxy down
            writer.transport.abort()
        finally:
            if task is not None:
                self._conns.discard(task)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._count("connections")
        if self.refusing:  # reset mode (closed mode refuses in the kernel)
            self._count("refused")
            _abort_with_rst(writer)
            return
        host = self.upstream_host or writer.get_extra_info("sockname")[0]
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(host, self.upstream_port, limit=_CHUNK), self.connect_timeout_s
            )
        except (OSError, TimeoutError):
            self._count("upstream_unreachable")
            _abort_with_rst(writer)
            return
        conn = _Conn()
        c2u = asyncio.create_task(self._client_to_upstream(conn, reader, up_writer))
        u2c = asyncio.create_task(self._upstream_to_client(conn, up_reader, writer, up_writer))
        try:
            done, _ = await asyncio.wait({c2u, u2c}, return_when=asyncio.FIRST_COMPLETED)
            if u2c not in done:  # the client finished sending: let the upstream finish answering
                try:
                    await asyncio.wait_for(asyncio.shield(u2c), 30)
                except TimeoutError:
                    pass
        finally:
            for task in (c2u, u2c):
                task.cancel()
            await asyncio.gather(c2u, u2c, return_exceptions=True)
            up_writer.transport.abort()
            if not writer.transport.is_closing():
                writer.close()

    def _draw(self) -> tuple[_Exchange, float]:
        with self._lock:
            f = self._faults
            rng = self._rng
            delay_ms = f.latency_ms
            if f.spike_prob and rng.random() < f.spike_prob:
                delay_ms += rng.uniform(*f.spike_ms)
                self._stats["spikes"] += 1
            ex = _Exchange()
            if f.reset_prob and rng.random() < f.reset_prob:
                ex.reset_after = rng.randint(*f.reset_after_bytes)
            ex.slow_write = bool(f.slow_write_prob) and rng.random() < f.slow_write_prob
            ex.slow_read = bool(f.slow_read_prob) and rng.random() < f.slow_read_prob
            self._stats["exchanges"] += 1
            self._stats["latency_ms_added"] += round(delay_ms)
            self._stats["slow_writes"] += ex.slow_write
            self._stats["slow_reads"] += ex.slow_read
        return ex, delay_ms

    def _trickle(self) -> tuple[int, float]:
        with self._lock:
            return max(1, self._faults.trickle_bytes), self._faults.trickle_interval_ms / 1000

    async def _client_to_upstream(self, conn: _Conn, reader: asyncio.StreamReader, up: asyncio.StreamWriter) -> None:
        while data := await reader.read(_CHUNK):
            if conn.exchange is None or conn.answering:  # a new request
                conn.answering = False
                ex, delay_ms = self._draw()
                conn.exchange = ex
                if delay_ms > 0:
                    await asyncio.sleep(delay_ms / 1000)
            if conn.exchange.slow_read:
                await _trickle_write(up, data, *self._trickle())
            else:
                up.write(data)
                await up.drain()
        if up.can_write_eof():
            up.write_eof()

    async def _upstream_to_client(
        self, conn: _Conn, up_reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up: asyncio.StreamWriter
    ) -> None:
        while data := await up_reader.read(_CHUNK):
            conn.answering = True
            ex = conn.exchange or _Exchange()
            if ex.reset_after is not None and ex.sent + len(data) >= ex.reset_after:
                head = data[: ex.reset_after - ex.sent]
                if head:
                    writer.write(head)
                    await writer.drain()
                self._count("resets")
                _abort_with_rst(writer)
                up.transport.abort()
                return
            if ex.slow_write:
                await _trickle_write(writer, data, *self._trickle())
            else:
                writer.write(data)
                await writer.drain()
            ex.sent += len(data)
        if writer.can_write_eof():
            writer.write_eof()


async def _trickle_write(writer: asyncio.StreamWriter, data: bytes, size: int, interval_s: float) -> None:
    for i in range(0, len(data), size):
        writer.write(data[i : i + size])
        await writer.drain()
        if i + size < len(data):
            await asyncio.sleep(interval_s)


def _bind_same_port(hosts: list[str], port: int = 0, attempts: int = 30) -> list[socket.socket]:
    """One listening socket per host, all on the same port (port 0: a free one for all)."""
    for _ in range(attempts if port == 0 else 1):
        first = bind_socket(hosts[0], port)
        chosen = first.getsockname()[1]
        socks = [first]
        try:
            for host in hosts[1:]:
                socks.append(bind_socket(host, chosen))
            return socks
        except OSError:
            for s in socks:
                s.close()
    raise OSError(f"could not bind one port on all of {hosts}")


async def _cancel_all() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
