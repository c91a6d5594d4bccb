"""Round trip of one request to a simulator, with its listening socket bound as bind_socket binds it
(IPPROTO_TCP) and as it was bound before 2026-12-04 (protocol 0), side by side in one run.

    .venv/bin/python -m bench.simulator_rtt [--requests 40]

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


def round_trips_ms(server: ThreadedUvicorn, n: int) -> list[float]:
    """Keep-alive GETs on one connection, one at a time, until the whole response is read."""
    out = []
    with socket.create_connection((server.host, server.port)) as conn:
        for _ in range(n):
            t = time.perf_counter()
            conn.sendall(b"GET / HTTP/1.1\r\nHost: bench\r\n\r\n")
            got = b""
            while not got.endswith(b"\r\n\r\nok"):
                got += conn.recv(65536)
            out.append((time.perf_counter() - t) * 1000)
    return out[2:]  # the first two warm the connection


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=40)
    args = ap.parse_args()
    for label, sock in (("IPPROTO_TCP (bind_socket)", bind_socket()), ("protocol 0 (before)", _unspecified_protocol())):
        server = ThreadedUvicorn(_app, [sock], name="rtt").start()
        try:
            ms = round_trips_ms(server, args.requests)
        finally:
            server.stop()
        print(f"{label:28s} median {statistics.median(ms):6.2f} ms  max {max(ms):6.2f} ms  ({len(ms)} requests)")


if __name__ == "__main__":
    main()
