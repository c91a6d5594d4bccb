"""Several uvicorn workers, one /metrics: every scrape, whichever worker answers it, reports the totals
of all workers (prometheus_client multiprocess mode via PROMETHEUS_MULTIPROC_DIR)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKERS = 2
MODELS_CALLS = 24
BAD_BODIES = 6
ANSWERS = 2
QUESTION = {"model": "x", "messages": [{"role": "user", "content": "What is asyncio.TaskGroup?"}]}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def multiworker_service(tmp_path):
    """`uvicorn app.main:app --workers 2` with an empty multiprocess dir; yields
    (base_url, multiproc_dir) once every worker has finished its start-up."""
    mp_dir = tmp_path / "prom"
    mp_dir.mkdir()
    log_path = tmp_path / "uvicorn.log"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GA_") and k.upper() != "PROMETHEUS_MULTIPROC_DIR"}
    env.update(
        PROMETHEUS_MULTIPROC_DIR=str(mp_dir), GA_AUTH="disabled", GA_LOG_LEVEL="WARNING", PYTHONPATH=str(REPO_ROOT)
    )
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "app.main:app",
                "--workers",
                str(WORKERS),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--no-access-log",
            ],
            cwd=REPO_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while log_path.read_text(errors="replace").count("Application startup complete") < WORKERS:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"uvicorn --workers {WORKERS} did not start:\n{log_path.read_text(errors='replace')}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}", mp_dir
    finally:
        proc.send_signal(signal.SIGINT)  # uvicorn's graceful stop of the supervisor and its workers
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _call(method: str, url: str, **kw) -> int:
    # A new connection per call, so the kernel spreads the calls over the workers.
    with httpx.Client(timeout=30) as client:
        return client.request(method, url, **kw).status_code


def _scrape(base: str) -> dict[tuple[str, frozenset], float]:
    with httpx.Client(timeout=10) as client:
        resp = client.get(base + "/metrics")
    assert resp.status_code == 200
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for fam in text_string_to_metric_families(resp.text)
        for s in fam.samples
    }


def _total(samples: dict, name: str, **labels: str) -> float:
    want = set(labels.items())
    return sum(v for (n, lab), v in samples.items() if n == name and want <= lab)


def _per_worker_http_counts(mp_dir: Path, route: str) -> dict[str, float]:
    """pid -> requests counted for `route`, read from each worker's own counter file."""
    counts = {}
    for path in mp_dir.glob("counter_*.db"):
        fams = MultiProcessCollector.merge([str(path)], accumulate=False)
        counts[path.stem.removeprefix("counter_")] = sum(
            s.value
            for fam in fams
            if fam.name == "grounded_http_requests"
            for s in fam.samples
            if s.name == "grounded_http_requests_total" and s.labels.get("route") == route
        )
    return counts


def _expected(samples: dict) -> dict[str, float]:
    return {
        "models": _total(samples, "grounded_http_requests_total", route="/v1/models", status_class="2xx"),
        "bad": _total(samples, "grounded_http_requests_total", route="/v1/chat/completions", status_class="4xx"),
        "answered_http": _total(
            samples, "grounded_http_requests_total", route="/v1/chat/completions", status_class="2xx"
        ),
        "answers": _total(samples, "grounded_requests_total", route="chat-completions"),
        "answer_latency_count": _total(
            samples, "grounded_request_duration_seconds_count", route="/v1/chat/completions"
        ),
        "in_flight": _total(samples, "grounded_requests_in_flight"),
    }


def test_every_scrape_reports_the_totals_of_all_workers(multiworker_service):
    base, mp_dir = multiworker_service
    calls = (
        [("GET", base + "/v1/models", {})] * MODELS_CALLS
        + [("POST", base + "/v1/chat/completions", {"json": {"messages": "not a list"}})] * BAD_BODIES
        + [("POST", base + "/v1/chat/completions", {"json": QUESTION})] * ANSWERS
    )
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(lambda c: _call(c[0], c[1], **c[2]), calls))
    assert statuses == [200] * MODELS_CALLS + [400] * BAD_BODIES + [200] * ANSWERS

    want = {
        "models": MODELS_CALLS,
        "bad": BAD_BODIES,
        "answered_http": ANSWERS,
        "answers": ANSWERS,
        "answer_latency_count": BAD_BODIES + ANSWERS,
        "in_flight": 0,
    }
    # The last response can reach us a moment before its worker has counted it: wait for the totals once.
    deadline = time.monotonic() + 5
    while (got := _expected(_scrape(base))) != want and time.monotonic() < deadline:
        time.sleep(0.05)
    assert got == want

    # The requests really were spread over the workers (otherwise this test would prove nothing).
    served = {pid: n for pid, n in _per_worker_http_counts(mp_dir, "/v1/models").items() if n}
    assert len(served) == WORKERS, served
    assert sum(served.values()) == MODELS_CALLS

    # From now on every scrape, answered by whichever worker, must report exactly the same totals.
    # Go on until every worker has answered some scrapes (the kernel picks; ~64/36 measured here).
    for scrapes in range(1, 81):
        assert _expected(_scrape(base)) == want
        scrapers = {pid: n for pid, n in _per_worker_http_counts(mp_dir, "/metrics").items() if n}
        if scrapes >= 16 and len(scrapers) == WORKERS:
            break
    assert len(scrapers) == WORKERS, f"all {scrapes} scrapes were answered by one worker: {scrapers}"
