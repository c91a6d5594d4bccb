"""One service process on two cores: page extraction in worker processes (GA_EXTRACT_PROCESSES=2)
against the threads alone (the default), with two uvicorn workers as the reference. Figure 2's workload
(zero-latency upstreams, six real aeb pages an answer at fresh URLs whose every sentence differs from
any served before, `cache: bypass`, extractive composer), a fresh service per run, alternating.

    .venv/bin/python -m bench.extract_processes [--runs 3] [--requests 100] [--concurrency 8]

Each run: a fresh service, 8 warm-up answers, then `--requests` answers at `--concurrency` through a new
client pool (bench/loadgen.closed_loop). Per run: answers/s, the CPU ms an answer of the service's
whole process tree (the extraction processes included), the median latency, and the tree's summed peak
RSS (an upper bound: forked children share their start-up pages).
"""

from __future__ import annotations

import argparse
from statistics import median

from bench.loadgen import closed_loop
from bench.procs import ServiceProcess, UpstreamsProcess
from bench.stats import alternate, spread_row
from bench.workload import Workload

WARM = 8
# mode -> (uvicorn workers, GA_EXTRACT_PROCESSES)
MODES = {
    "1 worker, threads (default)": "1:0",
    "1 worker + 2 extraction processes": "1:2",
    "2 workers, threads": "2:0",
}


def one_run(up: UpstreamsProcess, workload: Workload, first: int, mode: str, n: int, c: int) -> dict:
    workers, processes = (int(v) for v in mode.split(":"))
    env = {**up.info["env"], "GA_EXTRACT_PROCESSES": str(processes)}
    with ServiceProcess(env, workers=workers) as svc:
        url = svc.url + "/v1/chat/completions"
        closed_loop(url, [(i, workload.body(i)) for i in range(first, first + WARM)], WARM)
        cpu = svc.cpu_s()
        samples, wall = closed_loop(url, [(i, workload.body(i)) for i in range(first + WARM, first + WARM + n)], c)
        used = svc.cpu_s() - cpu
        rss = svc.memory_mb("VmHWM")
    ok = [s for s in samples if s.status == 200]
    return {
        "answers_per_s": len(ok) / wall,
        "cpu_ms_per_answer": 1000 * used / max(len(ok), 1),
        "p50_ms": 1000 * median(s.latency_s for s in ok) if ok else 0.0,
        "rss_mb": rss,
        "errors": n - len(ok),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()
    per_run = WARM + args.requests
    workload = Workload(n_requests=per_run * args.runs * len(MODES), cold_pages=True)
    with UpstreamsProcess(workload) as up:
        results = alternate(
            MODES, args.runs, lambda k, mode: one_run(up, workload, k * per_run, mode, args.requests, args.concurrency)
        )
    print(f"{args.requests} answers a run at c={args.concurrency}, {args.runs} runs each, alternating")
    print("| service | answers/s | CPU ms / answer | p50 ms | peak RSS MB (tree, summed) | errors |")
    print("|---|---|---|---|---|---|")
    for mode, runs in results.items():
        cols = [("answers_per_s", 1), ("cpu_ms_per_answer", 1), ("p50_ms", 0), ("rss_mb", 0)]
        print(spread_row(mode, runs, cols))


if __name__ == "__main__":
    main()
