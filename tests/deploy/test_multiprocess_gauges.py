"""Gauges across processes: IN_FLIGHT sums live workers only (mark_worker_dead drops a dead one),
REDIS_UP reports the most recent write of any worker. Each "worker" is a real Python process with
PROMETHEUS_MULTIPROC_DIR set before prometheus_client is imported, as under uvicorn --workers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

REPO_ROOT = Path(__file__).resolve().parents[2]


def _run(mp_dir: Path, code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k.upper() != "PROMETHEUS_MULTIPROC_DIR"}
    env.update(PROMETHEUS_MULTIPROC_DIR=str(mp_dir), PYTHONPATH=str(REPO_ROOT))
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _value(exposition: str, name: str) -> float:
    (value,) = [s.value for fam in text_string_to_metric_families(exposition) for s in fam.samples if s.name == name]
    return value


WORKER = """
    import os, time
    from app import metrics
    metrics.IN_FLIGHT.inc({in_flight})
    metrics.REDIS_UP.set({redis_up})
    metrics.REQUESTS.labels(route="chat-completions", status="200", grounding_status="grounded").inc()
    print(os.getpid())
"""
SCRAPE = """
    import sys
    from app.metrics_export import mark_worker_dead, multiprocess_mode, render_metrics
    assert multiprocess_mode()
    for pid in {dead}:
        mark_worker_dead(pid)
    sys.stdout.write(render_metrics()[0].decode())
"""


def test_gauges_combine_workers_as_declared(tmp_path):
    first = int(_run(tmp_path, WORKER.format(in_flight=2, redis_up=1)))
    second = int(_run(tmp_path, WORKER.format(in_flight=3, redis_up=0)))  # later: Redis failed
    assert first != second

    text = _run(tmp_path, SCRAPE.format(dead=[]))
    assert _value(text, "grounded_requests_in_flight") == 5  # livesum over both (none marked dead)
    assert _value(text, "grounded_redis_up") == 0  # the most recent write wins
    assert _value(text, "grounded_requests_total") == 2

    _run(tmp_path, WORKER.format(in_flight=0, redis_up=1))  # a third worker: Redis is back
    dead = _run(tmp_path, SCRAPE.format(dead=[second]))
    assert _value(dead, "grounded_requests_in_flight") == 2  # the dead worker no longer counts
    assert _value(dead, "grounded_redis_up") == 1
    assert _value(dead, "grounded_requests_total") == 3  # counters keep dead workers' totals
