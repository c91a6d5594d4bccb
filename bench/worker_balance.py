"""Are kept-alive connections spread over uvicorn's workers? Figure 2's workload (zero-latency
upstreams, six real aeb pages an answer at fresh URLs, `cache: bypass`) against 2 workers, with
`Connection: close` under load (GA_KEEPALIVE_MAX_IN_FLIGHT, the default 1) and without it (0),
alternately, a fresh service per run.

    .venv/bin/python -m bench.worker_balance [--runs 3] [--requests 100] [--concurrency 8]

Each run: a fresh service, 8 warm-up answers, then `--requests` answers through a new client pool of
`--concurrency` connections (bench/loadgen.closed_loop). Per run: answers/s, the service's CPU ms an
answer, and the busiest worker's share of the workers' CPU (0.5 = even; 1.0 = one worker did all).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.loadgen import closed_loop
from bench.procs import ServiceProcess, UpstreamsProcess
from bench.stats import alternate, spread_row
from bench.workload import Workload

WORKERS = 2
WARM = 8
MODES = {"close when busy (default)": "1", "never close (before)": "0"}


def _cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / 100.0


def one_run(up: UpstreamsProcess, workload: Workload, first: int, keepalive: str, n: int, c: int) -> dict:
    env = {**up.info["env"], "GA_KEEPALIVE_MAX_IN_FLIGHT": keepalive}
    with ServiceProcess(env, workers=WORKERS) as svc:
        url = svc.url + "/v1/chat/completions"
        closed_loop(url, [(i, workload.body(i)) for i in range(first, first + WARM)], WARM)
        pids = svc.tree()
        before = {p: _cpu_s(p) for p in pids}
        samples, wall = closed_loop(url, [(i, workload.body(i)) for i in range(first + WARM, first + WARM + n)], c)
        used = sorted((_cpu_s(p) - before[p] for p in pids), reverse=True)
    ok = sum(1 for s in samples if s.status == 200)
    workers = used[:WORKERS]  # the supervisor uses next to nothing
    return {
        "answers_per_s": ok / wall,
        "cpu_ms_per_answer": 1000 * sum(used) / max(ok, 1),
        "busiest_worker_share": workers[0] / max(sum(workers), 1e-9),
        "errors": n - ok,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()
    per_run = WARM + args.requests
    workload = Workload(n_requests=per_run * args.runs * len(MODES))
    with UpstreamsProcess(workload) as up:
        results = alternate(
            MODES,
            args.runs,
            lambda k, value: one_run(up, workload, k * per_run, value, args.requests, args.concurrency),
        )
    print(
        f"{WORKERS} workers, {args.requests} answers a run at c={args.concurrency}, {args.runs} runs each, alternating"
    )
    print("| connections | answers/s | CPU ms / answer | busiest worker's CPU share | errors |")
    print("|---|---|---|---|---|")
    for mode, runs in results.items():
        print(spread_row(mode, runs, [("answers_per_s", 1), ("cpu_ms_per_answer", 1), ("busiest_worker_share", 2)]))


if __name__ == "__main__":
    main()
