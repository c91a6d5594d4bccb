"""Figure 6 — memory: peak RSS (VmHWM) of a fresh service process through a c=64 load in the
latency figure's setting (real pages, LLM planner and composer, simulated upstream latencies)."""

from __future__ import annotations

from bench.config import BenchConfig
from bench.fig_latency import make_workload
from bench.loadgen import closed_loop
from bench.procs import ServiceProcess, UpstreamsProcess
from bench.stats import fmt_spread, spread

NAME = "memory"
TITLE = "6. Memory"
WARM = 8


def run(cfg: BenchConfig) -> dict:
    concurrency = 64 if not cfg.quick else 4
    n = cfg.memory_requests
    workload = make_workload(cfg, WARM + cfg.repeats * n)
    runs = []
    with UpstreamsProcess(workload) as up:
        for rep in range(cfg.repeats):
            with ServiceProcess({**up.info["env"], **up.info["llm_env"]}) as svc:
                start_rss = svc.memory_mb("VmRSS")
                base = WARM + rep * n
                closed_loop(svc.url + "/v1/chat/completions", [(i, workload.body(i)) for i in range(WARM)], 4)
                idle_rss = svc.memory_mb("VmRSS")
                samples, _ = closed_loop(
                    svc.url + "/v1/chat/completions",
                    [(i, workload.body(i)) for i in range(base, base + n)],
                    concurrency,
                )
                runs.append(
                    {
                        "start_rss_mb": start_rss,
                        "warm_rss_mb": idle_rss,
                        "peak_rss_mb": svc.memory_mb("VmHWM"),
                        "end_rss_mb": svc.memory_mb("VmRSS"),
                        "ok": sum(s.status == 200 for s in samples),
                    }
                )
    return {
        "concurrency": concurrency,
        "requests": n,
        "runs": runs,
        "peak_rss_mb": spread(r["peak_rss_mb"] for r in runs),
        "warm_rss_mb": spread(r["warm_rss_mb"] for r in runs),
        "end_rss_mb": spread(r["end_rss_mb"] for r in runs),
    }


def render(res: dict) -> str:
    return "\n".join(
        [
            f"Fresh service process (1 worker) per run; {res['requests']} requests at c={res['concurrency']} after "
            f"{WARM} warm-up requests. /proc/<pid>/status, MB, median (min–max) over runs.",
            "",
            f"| after start-up + warm-up (VmRSS) | peak during c={res['concurrency']} (VmHWM) | after the load (VmRSS) |",
            "|---|---|---|",
            f"| {fmt_spread(res['warm_rss_mb'], 0)} | {fmt_spread(res['peak_rss_mb'], 0)} | {fmt_spread(res['end_rss_mb'], 0)} |",
        ]
    )
