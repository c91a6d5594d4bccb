"""An HTTP forward proxy: absolute-form requests and CONNECT tunnels, with its own resolver.

    with ForwardProxy(resolve={"*.test": "127.0.0.1"}) as proxy:
        httpx.get("http://news-a.test:PORT/x", proxy=proxy.url)
        proxy.requests.all()  # every URL that passed, with the status the upstream answered
        proxy.deny("*.blocked.test")  # -> 403 (deny_status), like Smokescreen's deny list

Each forwarded request is sent upstream with `Connection: close` and answered to the client with
`Connection: close`, so one client connection carries one request: simple and exact to record.
"""

from __future__ import annotations

import asyncio
import fnmatch
import ipaddress
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ._record import Recorder
from ._threaded import bind_socket

HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "upgrade",
}


@dataclass
class ProxiedRequest:
    method: str
    url: str  # absolute URL, or "host:port" for CONNECT
    host: str
    port: int
    resolved: str = ""  # the address the proxy connected to ("" if it did not)
    status: int = 0  # upstream status (200 for an established tunnel) or the proxy's own
    denied: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    at: float = field(default_factory=time.time)


class ForwardProxy:
    def __init__(
        self,
        host: str = "127.0.0.1",
        *,
        resolve: dict[str, str] | None = None,
        deny: Iterable[str] = (),
        deny_status: int = 403,
        upstream_timeout_s: float = 10.0,
    ) -> None:
        self._sock = bind_socket(host)
        self.host, self.port = self._sock.getsockname()[:2]
        self.url = f"http://{self.host}:{self.port}"
        self._initial_resolve = dict(resolve if resolve is not None else {"*.test": "127.0.0.1"})
        self._initial_deny = list(deny)
        self.deny_status = deny_status
        self.upstream_timeout_s = upstream_timeout_s
        self._lock = threading.Lock()
        self.requests: Recorder[ProxiedRequest] = Recorder()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.reset()

    # --- scripting -----------------------------------------------------------------------------

    def reset(self) -> None:
        with self._lock:
            self._resolve = dict(self._initial_resolve)
            self._deny = list(self._initial_deny)
        self.requests.clear()

    def map_host(self, pattern: str, ip: str) -> None:
        with self._lock:
            self._resolve[pattern.lower()] = ip

    def deny(self, pattern: str) -> None:
        """Refuse hosts matching `pattern` (fnmatch, e.g. "*.evil.test" or "127.0.0.3")."""
        with self._lock:
            self._deny.append(pattern.lower())

    def settings_overrides(self) -> dict[str, str]:
        """Settings overrides that send the service's page fetches through this proxy."""
        return {"fetch_proxy": self.url}

    def urls(self) -> list[str]:
        return [r.url for r in self.requests.all()]

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> ForwardProxy:
        if self._thread is not None:
            return self
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="proxy", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise TimeoutError("proxy did not start")
        return self

    def _run(self, ready: threading.Event) -> None:
        loop = self._loop = asyncio.new_event_loop()
        server = loop.run_until_complete(asyncio.start_server(self._client, sock=self._sock))
        ready.set()
        try:
            loop.run_forever()
        finally:
            server.close()
            loop.run_until_complete(_cancel_connections())
            loop.close()

    def stop(self) -> None:
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._thread = None
        self._sock.close()

    def __enter__(self) -> ForwardProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> ForwardProxy:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)

    # --- proxying ------------------------------------------------------------------------------

    def _denied(self, host: str) -> bool:
        with self._lock:
            return any(fnmatch.fnmatch(host.lower(), p) for p in self._deny)

    async def _resolve_host(self, host: str) -> str:
        with self._lock:
            mapped = next((ip for p, ip in self._resolve.items() if fnmatch.fnmatch(host.lower(), p)), None)
        if mapped:
            return mapped
        try:
            return str(ipaddress.ip_address(host.strip("[]")))
        except ValueError:
            infos = await asyncio.get_running_loop().getaddrinfo(host, None)
            return infos[0][4][0]

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        try:
            lines = head.decode("latin-1").split("\r\n")
            method, target, version = lines[0].split(" ", 2)
            headers = [tuple(line.split(":", 1)) for line in lines[1:] if ":" in line]
            if method == "CONNECT":
                await self._tunnel(target, dict((k.strip().lower(), v.strip()) for k, v in headers), reader, writer)
            else:
                await self._forward(method, target, version, headers, reader, writer)
        except asyncio.CancelledError:  # the proxy is stopping: drop the connection quietly
            pass
        except Exception as exc:  # a broken client must not take the proxy down
            await self._reply(writer, 502, f"proxy error: {exc!r}")
        finally:
            writer.close()

    async def _reply(self, writer: asyncio.StreamWriter, status: int, text: str) -> None:
        body = text.encode()
        reason = {
            403: "Forbidden",
            502: "Bad Gateway",
            503: "Service Unavailable",
            504: "Gateway Timeout",
            400: "Bad Request",
        }.get(status, "Error")
        try:
            writer.write(
                f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except ConnectionError:
            pass

    async def _connect(self, record: ProxiedRequest):
        if self._denied(record.host):
            record.denied, record.status = True, self.deny_status
            self.requests.append(record)
            return None
        try:
            record.resolved = await self._resolve_host(record.host)
            return await asyncio.wait_for(
                asyncio.open_connection(record.resolved, record.port), self.upstream_timeout_s
            )
        except (TimeoutError, OSError) as exc:
            record.status = 504 if isinstance(exc, asyncio.TimeoutError) else 502
            self.requests.append(record)
            return None

    async def _tunnel(self, target: str, headers: dict[str, str], reader, writer) -> None:
        host, _, port = target.rpartition(":")
        record = ProxiedRequest("CONNECT", target, host.strip("[]"), int(port), headers=headers)
        upstream = await self._connect(record)
        if upstream is None:
            await self._reply(
                writer, record.status, "Request rejected by proxy" if record.denied else "upstream unreachable"
            )
            return
        record.status = 200
        self.requests.append(record)
        writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        await writer.drain()
        up_reader, up_writer = upstream
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    async def _forward(
        self, method: str, target: str, version: str, headers: list[tuple[str, str]], reader, writer
    ) -> None:
        parts = urlsplit(target)
        if parts.scheme != "http" or not parts.hostname:
            await self._reply(writer, 400, "absolute-form http:// URL required")
            return
        lower = {k.strip().lower(): v.strip() for k, v in headers}
        record = ProxiedRequest(method, target, parts.hostname, parts.port or 80, headers=lower)
        body = await _read_body(reader, lower)
        upstream = await self._connect(record)
        if upstream is None:
            await self._reply(
                writer, record.status, "Request rejected by proxy" if record.denied else "upstream unreachable"
            )
            return
        up_reader, up_writer = upstream
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        out = [f"{method} {path} {version}"]
        out += [f"{k.strip()}:{v}" for k, v in headers if k.strip().lower() not in HOP_BY_HOP]
        out.append("Connection: close")
        up_writer.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body)
        await up_writer.drain()
        try:
            status_head = await asyncio.wait_for(up_reader.readuntil(b"\r\n\r\n"), self.upstream_timeout_s)
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            record.status = 504
            self.requests.append(record)
            up_writer.close()
            await self._reply(writer, 504, "upstream did not answer")
            return
        resp_lines = status_head.decode("latin-1").split("\r\n")
        record.status = int(resp_lines[0].split(" ", 2)[1])
        self.requests.append(record)
        kept = [line for line in resp_lines[1:] if line and line.split(":", 1)[0].strip().lower() not in HOP_BY_HOP]
        writer.write(("\r\n".join([resp_lines[0], *kept, "Connection: close"]) + "\r\n\r\n").encode("latin-1"))
        await _pipe(up_reader, writer)
        up_writer.close()


async def _cancel_connections() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "content-length" in headers:
        return await reader.readexactly(int(headers["content-length"]))
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raw = b""
        while True:  # pass the chunked framing through unchanged
            size_line = await reader.readuntil(b"\r\n")
            raw += size_line
            size = int(size_line.split(b";")[0], 16)
            raw += await reader.readexactly(size + 2)
            if size == 0:
                return raw
    return b""


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while data := await src.read(65536):
            dst.write(data)
            await dst.drain()
    except ConnectionError:
        pass
    finally:
        try:
            dst.close()
        except RuntimeError:
            pass
