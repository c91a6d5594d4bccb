"""The fault proxy passes bytes through unchanged and injects each fault so that a plain client sees
it: added latency and spikes, RST mid-stream, trickled responses and requests, refused connections
(for a window, now or on a schedule), one proxy mirroring many loopback addresses. Time bounds are
lower bounds with a wide margin (the machine is shared), never upper bounds."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest

from simulators import FaultProxy
from simulators.fault_proxy import Faults

RESET = (ConnectionResetError, BrokenPipeError)  # an RST at once: seen by connect(), send() or recv()
BODY = "<p>" + "fault proxy " * 200 + "</p>"  # ~2.4 KB


@pytest.fixture
def page(web):
    web.add_page("/p", BODY)
    return "/p"


@pytest.fixture
def fp(web):
    with FaultProxy("127.0.0.1", web.port, seed=3) as proxy:
        yield proxy


def _raw_get(port: int, path: str = "/p", host: str = "127.0.0.1") -> tuple[bytes, BaseException | None]:
    """GET over a plain socket; returns the bytes received and the error that ended it (None: EOF)."""
    got = b""
    try:  # an RST can beat connect() back to the client: it then fails there
        with socket.create_connection((host, port), timeout=10) as sock:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            while chunk := sock.recv(65536):
                got += chunk
    except OSError as exc:
        return got, exc
    return got, None


def test_passes_bytes_through_and_counts_exchanges_per_keepalive_request(web, fp, page):
    with httpx.Client(base_url=fp.url) as client:
        first = client.get(page)
        second = client.get(page)
    assert first.status_code == second.status_code == 200 and first.text == BODY == second.text
    stats = fp.stats()
    assert stats["connections"] == 1 and stats["exchanges"] == 2
    assert [r.path for r in web.requests.all()] == ["/p", "/p"]


def test_latency_and_spikes(fp, page):
    fp.set(latency_ms=300)
    t0 = time.monotonic()
    assert httpx.get(fp.url + page).status_code == 200
    assert time.monotonic() - t0 >= 0.25
    fp.set(latency_ms=0, spike_prob=1.0, spike_ms=(600, 600))
    t0 = time.monotonic()
    assert httpx.get(fp.url + page).status_code == 200
    assert time.monotonic() - t0 >= 0.5
    stats = fp.stats()
    assert stats["spikes"] == 1 and stats["latency_ms_added"] == 900


def test_reset_mid_stream_is_an_rst_after_some_response_bytes(fp, page):
    fp.set(reset_prob=1.0, reset_after_bytes=(40, 40))
    got, error = _raw_get(fp.port)
    assert isinstance(error, ConnectionResetError)  # an RST, not a clean FIN
    assert len(got) <= 40 and b"fault proxy" not in got
    with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
        httpx.get(fp.url + page)
    assert fp.stats()["resets"] == 2


def test_reset_before_the_first_byte(fp, page):
    fp.set(reset_prob=1.0, reset_after_bytes=(0, 0))
    got, error = _raw_get(fp.port)
    assert got == b"" and isinstance(error, ConnectionResetError)


def test_slow_write_trickles_the_response(fp, page):
    fp.set(slow_write_prob=1.0, trickle_bytes=100, trickle_interval_ms=40)
    with socket.create_connection(("127.0.0.1", fp.port), timeout=10) as sock:
        sock.sendall(b"GET /p HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        t0, got, reads = time.monotonic(), b"", 0
        while chunk := sock.recv(65536):
            got += chunk
            reads += 1
        elapsed = time.monotonic() - t0
    assert got.endswith(BODY.encode()) and b" 200 " in got.split(b"\r\n", 1)[0]
    assert reads >= 10  # arrived in pieces
    assert elapsed >= 0.5  # ≥ 24 pieces 40 ms apart
    assert fp.stats()["slow_writes"] == 1


def test_slow_read_trickles_the_request_to_the_upstream(fp):
    # A raw upstream that reads the whole request before answering and counts its reads.
    listener = socket.create_server(("127.0.0.1", 0))
    seen: dict[str, float] = {}

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            data, reads, t0 = b"", 0, time.monotonic()
            while len(data) < 2000:
                data += conn.recv(65536)
                reads += 1
            seen.update(reads=reads, seconds=time.monotonic() - t0)
            conn.sendall(b"done")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    with FaultProxy("127.0.0.1", listener.getsockname()[1]) as slow, listener:
        slow.set(slow_read_prob=1.0, trickle_bytes=100, trickle_interval_ms=40)
        with socket.create_connection(("127.0.0.1", slow.port), timeout=10) as sock:
            sock.sendall(b"x" * 2000)  # the client's write completes at once (the proxy buffers it)
            assert sock.recv(16) == b"done"
        thread.join(10)
        assert slow.stats()["slow_reads"] == 1
    assert seen["reads"] >= 10  # the upstream got it in pieces…
    assert seen["seconds"] >= 0.5  # …20 of them, 40 ms apart


def test_refuse_for_a_window_then_listen_again(fp, page):
    fp.refuse_for(1.5)
    time.sleep(0.2)  # the listening sockets close on the proxy's next 20 ms tick
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", fp.port), timeout=5)
    with pytest.raises(httpx.ConnectError):
        httpx.get(fp.url + page)
    deadline = time.monotonic() + 10
    while fp.refusing and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    assert httpx.get(fp.url + page).status_code == 200
    assert fp.stats()["refuse_windows"] == 1


def test_scheduled_refusals_in_reset_mode(fp, page):
    fp.set(refuse_every_s=0.3, refuse_for_s=0.3, refuse_mode="reset")
    outcomes = set()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and len(outcomes) < 2:
        got, error = _raw_get(fp.port)
        outcomes.add("reset" if isinstance(error, RESET) and not got else "ok")
        time.sleep(0.05)
    assert outcomes == {"reset", "ok"}
    stats = fp.stats()
    assert stats["refuse_windows"] >= 1 and stats["refused"] >= 1


def test_mirrors_the_address_connected_to(web):
    site = web.site("mirror.test")  # the first named site: 127.0.0.2
    site.add_page("/m", "<p>mirrored</p>")
    with FaultProxy(None, web.port, listen_hosts=["127.0.0.1", site.ip]) as fp:
        resp = httpx.get(f"http://{site.ip}:{fp.port}/m")
    assert resp.status_code == 200 and "mirrored" in resp.text
    assert web.requests.last().site == "mirror.test"


def test_unreachable_upstream_resets_the_client():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead_port = s.getsockname()[1]  # closed again before the proxy connects
    with FaultProxy("127.0.0.1", dead_port) as fp:
        got, error = _raw_get(fp.port)
        assert got == b"" and isinstance(error, RESET)
        assert fp.stats()["upstream_unreachable"] == 1


def test_settings_are_validated_and_cleared(fp):
    with pytest.raises(ValueError):
        Faults(reset_prob=1.5)
    with pytest.raises(ValueError):
        fp.set(refuse_mode="sometimes")
    assert fp.set(latency_ms=10).latency_ms == 10
    fp.clear()
    assert fp.faults == Faults()
