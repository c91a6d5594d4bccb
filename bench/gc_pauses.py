"""The garbage collector's pauses in the service, with what start-up built frozen out of its sight
(GA_GC_FREEZE=true, the default) and without (false), alternately, a fresh service per run.

    .venv/bin/python -m bench.gc_pauses [--runs 3] [--requests 96] [--concurrency 16]

Figure 1's workload (simulated upstreams: plan 0.4 s, search 0.3 s, pages 0.2–1.5 s, compose 0.8 s;
six real aeb pages an answer, LLM planner and composer, `cache: bypass`), one worker, after 8 warm-up
answers. Per run, from the service's own `grounded_gc_pause_seconds` histogram (app/metrics.py)
read before and after the load: full (generation 2) collections, their total and mean pause, and
the answers' end-to-end p50 / p99. A full collection holds the interpreter: every answer in flight
in the process waits it out.
"""

from __future__ import annotations

import argparse
import re

import httpx

from bench.common import percentile
from bench.loadgen import closed_loop
from bench.procs import ServiceProcess, UpstreamsProcess
from bench.stats import alternate, spread_row
from bench.workload import Latencies, Workload

WARM = 8
MODES = {"frozen at start-up (default)": "true", "not frozen (before)": "false"}
_LINE = re.compile(r'^grounded_gc_pause_seconds_(count|sum)\{generation="2"\} (\S+)$', re.M)


def full_collections(metrics_text: str) -> tuple[float, float]:
    """(count, seconds) of generation-2 collections so far, from a /metrics page."""
    found = {kind: float(value) for kind, value in _LINE.findall(metrics_text)}
    return found.get("count", 0.0), found.get("sum", 0.0)


def one_run(up: UpstreamsProcess, workload: Workload, first: int, freeze: str, n: int, c: int) -> dict:
    env = {**up.info["env"], **up.info["llm_env"], "GA_GC_FREEZE": freeze}
    with ServiceProcess(env) as svc:
        url = svc.url + "/v1/chat/completions"
        closed_loop(url, [(i, workload.body(i)) for i in range(first, first + WARM)], WARM)
        count0, sum0 = full_collections(httpx.get(svc.url + "/metrics").text)
        samples, _ = closed_loop(url, [(i, workload.body(i)) for i in range(first + WARM, first + WARM + n)], c)
        count1, sum1 = full_collections(httpx.get(svc.url + "/metrics").text)
    ok = [s.latency_s for s in samples if s.status == 200]
    count = count1 - count0
    return {
        "full_collections": count,
        "pause_ms_total": 1000 * (sum1 - sum0),
        "pause_ms_mean": 1000 * (sum1 - sum0) / count if count else 0.0,
        "p50_s": percentile(ok, 0.5),
        "p99_s": percentile(ok, 0.99),
        "errors": n - len(ok),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=96)
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args()
    per_run = WARM + args.requests
    workload = Workload(
        n_requests=per_run * args.runs * len(MODES),
        latencies=Latencies(plan_s=0.4, search_s=0.3, fetch_min_s=0.2, fetch_max_s=1.5, compose_s=0.8),
    )
    with UpstreamsProcess(workload) as up:
        results = alternate(
            MODES,
            args.runs,
            lambda k, value: one_run(up, workload, k * per_run, value, args.requests, args.concurrency),
        )
    print(f"1 worker, {args.requests} answers a run at c={args.concurrency}, {args.runs} runs each, alternating")
    print("| start-up objects | full collections | pause ms, total | pause ms, mean | e2e p50 s | e2e p99 s | errors |")
    print("|---|---|---|---|---|---|---|")
    columns = [("full_collections", 0), ("pause_ms_total", 0), ("pause_ms_mean", 1), ("p50_s", 2), ("p99_s", 2)]
    for mode, runs in results.items():
        print(spread_row(mode, runs, columns))


if __name__ == "__main__":
    main()
