"""Round trip of one request to a simulator, with its listening socket bound as bind_socket binds it
(IPPROTO_TCP) and as it was bound before 2026-12-04 (protocol 0), side by side in one run.

    .venv/bin/python -m bench.simulator_rtt [--requests 40] [--service]

With `--service`, also the service as deployed (`python -m uvicorn app.main:app`, 1 and 2 workers,
uvicorn binding its own socket): /healthz the same way.

asyncio turns Nagle's algorithm off only on connections whose socket says TCP
(`asyncio.base_events._set_nodelay`); a response written in two parts (head, then body) then waits
for the client's delayed ACK (~40 ms on Linux). Every simulated upstream in the benches and tests
paid that on each reply, on top of the latency the bench configured.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import time

from simulators._threaded import LOOPBACK, ThreadedUvicorn, bind_socket


async def _app(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _unspecified_protocol() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # protocol 0, as before
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((LOOPBACK, 0))
    return sock


def round_trips_ms(host: str, port: int, n: int, path: str = "/") -> list[float]:
    """Keep-alive GETs on one connection, one at a time, each until its whole body is read."""
    out = []
    with socket.create_connection((host, port)) as conn:
        for _ in range(n):
            t = time.perf_counter()
            conn.sendall(f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
            got = b""
            while b"\r\n\r\n" not in got:
                got += conn.recv(65536)
            head, _, body = got.partition(b"\r\n\r\n")
            length = next(
                int(v) for k, _, v in (h.partition(b":") for h in head.split(b"\r\n")) if k.lower() == b"content-length"
            )
            while len(body) < length:
                body += conn.recv(65536)
            out.append((time.perf_counter() - t) * 1000)
    return out[2:]  # the first two warm the connection


def _line(label: str, ms: list[float]) -> str:
    return f"{label:28s} median {statistics.median(ms):6.2f} ms  max {max(ms):6.2f} ms  ({len(ms)} requests)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument("--service", action="store_true", help="also the service's /healthz, 1 and 2 workers")
    args = ap.parse_args()
    for label, sock in (("IPPROTO_TCP (bind_socket)", bind_socket()), ("protocol 0 (before)", _unspecified_protocol())):
        server = ThreadedUvicorn(_app, [sock], name="rtt").start()
        try:
            print(_line(label, round_trips_ms(server.host, server.port, args.requests)))
        finally:
            server.stop()
    if args.service:
        from bench.procs import ServiceProcess

        for workers in (1, 2):
            with ServiceProcess({"GA_AUTH": "disabled"}, workers=workers) as svc:
                ms = round_trips_ms("127.0.0.1", svc.port, args.requests, "/healthz")
            print(_line(f"service /healthz, {workers} worker(s)", ms))


if __name__ == "__main__":
    main()
