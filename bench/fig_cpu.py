"""Figure 2 — CPU cost per answer.

Upstreams answer at once; every answer fetches six real pages (aeb) at URLs never seen before, with
`cache: bypass`, each copy different in every sentence (`Workload.cold_pages`), so no content-keyed
memo of the service answers for a page it has not read; one more row serves the 181 pages unchanged
(as figures 1 and 2 did until 2026-12-05), side by side, to show what those memos were worth.
Answers/s at a fixed concurrency, and the service's CPU ms per answer (user+system time of the
uvicorn process tree / answers), for 1 and 2 workers, extractive composer and a zero-latency model;
then a c=1 pass for wall ms by stage (at c=1 and zero latency, ~CPU).
"""

from __future__ import annotations

import resource
import statistics

from bench.config import BenchConfig
from bench.loadgen import closed_loop
from bench.procs import ServiceProcess, UpstreamsProcess
from bench.stats import fmt_spread, spread, target_lines
from bench.workload import Workload

NAME = "cpu"
TITLE = "2. CPU cost per answer"
TARGET_RPS = 40.0
WARM = 8


def _self_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def run(cfg: BenchConfig) -> dict:
    out: dict = {"concurrency": cfg.cpu_concurrency, "requests_per_run": cfg.cpu_requests, "configs": []}
    cold = [(w, comp) for w in cfg.cpu_workers for comp in cfg.cpu_composers]
    _run_configs(cfg, cold, True, out)
    _run_configs(cfg, cold[:1], False, out)  # the same first config over the reused pool of pages
    best = max(c["answers_per_s"]["median"] for c in out["configs"] if c["cold_pages"])
    out["targets"] = {f"answers_per_s>={TARGET_RPS:g}": {"value": best, "met": best >= TARGET_RPS}}
    return out


def _run_configs(cfg: BenchConfig, configs: list[tuple[int, str]], cold_pages: bool, out: dict) -> None:
    per_config = WARM + cfg.repeats * cfg.cpu_requests + cfg.stage_requests
    workload = Workload(n_requests=per_config * len(configs), cold_pages=cold_pages)
    nxt = 0
    with UpstreamsProcess(workload) as up:
        for workers, composer in configs:
            env = dict(up.info["env"])
            if composer == "llm":
                env.update(up.info["llm_env"])
            runs, stages = [], {}
            with ServiceProcess(env, workers=workers) as svc:
                url = svc.url + "/v1/chat/completions"
                closed_loop(url, [(i, workload.body(i)) for i in range(nxt, nxt + WARM)], min(WARM, 2 * workers))
                nxt += WARM
                for _ in range(cfg.repeats):
                    jobs = [(i, workload.body(i)) for i in range(nxt, nxt + cfg.cpu_requests)]
                    nxt += cfg.cpu_requests
                    cpu0, up0, me0 = svc.cpu_s(), up.cpu_s(), _self_cpu_s()
                    samples, wall = closed_loop(url, jobs, cfg.cpu_concurrency)
                    cpu1, up1, me1 = svc.cpu_s(), up.cpu_s(), _self_cpu_s()
                    ok = [s for s in samples if s.status == 200]
                    statuses: dict[str, int] = {}
                    for s in samples:
                        key = s.grounding.get("status", f"http_{s.status}")
                        statuses[key] = statuses.get(key, 0) + 1
                    runs.append(
                        {
                            "answers": len(ok),
                            "wall_s": wall,
                            "answers_per_s": len(ok) / wall,
                            "service_cpu_ms_per_answer": (cpu1 - cpu0) * 1000 / max(1, len(ok)),
                            "service_cpu_share": (cpu1 - cpu0) / wall,
                            "upstreams_cpu_share": (up1 - up0) / wall,
                            "loadgen_cpu_share": (me1 - me0) / wall,
                            "statuses": statuses,
                        }
                    )
                if workers == 1:
                    jobs = [(i, workload.body(i)) for i in range(nxt, nxt + cfg.stage_requests)]
                    samples, _ = closed_loop(url, jobs, 1)
                    per_stage: dict[str, list[float]] = {}
                    for s in samples:
                        for k, v in s.grounding.get("timings_ms", {}).items():
                            per_stage.setdefault(k, []).append(v)
                    stages = {k: round(statistics.median(v), 2) for k, v in per_stage.items()}
                nxt += cfg.stage_requests
            out["configs"].append(
                {
                    "workers": workers,
                    "composer": composer,
                    "cold_pages": cold_pages,
                    "runs": runs,
                    "stage_ms_median_c1": stages,
                    "answers_per_s": spread(r["answers_per_s"] for r in runs),
                    "cpu_ms_per_answer": spread(r["service_cpu_ms_per_answer"] for r in runs),
                }
            )


def _pages(config: dict) -> str:
    return "new" if config.get("cold_pages") else "reused"  # runs before 2026-12-05 reused the pool


def render(res: dict) -> str:
    lines = [
        f"Zero-latency upstreams, six real aeb pages per answer at fresh URLs, `cache: bypass`; pages "
        '"new": every served copy differs in every sentence (no memo of the service has seen it); '
        '"reused": the 181 pages unchanged, so from the second round on content-keyed memos answer. '
        f"{res['requests_per_run']} answers per run at concurrency {res['concurrency']}. Service, simulators "
        "and load generator share the machine's 2 cores (CPU shares below say how). Capacity if the service "
        "had both cores to itself = 2000 / CPU ms per answer. Cells: median (min–max) over repeats.",
        "",
        "| pages | workers | composer | answers/s | service CPU ms / answer | capacity on 2 cores (answers/s) | "
        "service / simulators / load-gen CPU (cores) | statuses |",
        "|" + "---|" * 8,
    ]
    for c in res["configs"]:
        cpu = c["cpu_ms_per_answer"]
        cap = 2000 / cpu["median"] if cpu.get("n") else float("nan")
        shares = "/".join(
            f"{statistics.median(r[k] for r in c['runs']):.2f}"
            for k in ("service_cpu_share", "upstreams_cpu_share", "loadgen_cpu_share")
        )
        lines.append(
            f"| {_pages(c)} | {c['workers']} | {c['composer']} | {fmt_spread(c['answers_per_s'], 1)} | "
            f"{fmt_spread(cpu, 1)} | {cap:.1f} | {shares} | {c['runs'][0]['statuses']} |"
        )
    staged = [c for c in res["configs"] if c["stage_ms_median_c1"]]
    if staged:
        names = list(staged[0]["stage_ms_median_c1"])
        lines += [
            "",
            "Wall ms by stage at c=1 (median request; zero-latency upstreams, so this is mostly CPU):",
            "",
            "| pages | composer | " + " | ".join(names) + " |",
            "|" + "---|" * (len(names) + 2),
        ]
        for c in staged:
            lines.append(
                f"| {_pages(c)} | {c['composer']} | "
                + " | ".join(f"{c['stage_ms_median_c1'].get(k, 0):.1f}" for k in names)
                + " |"
            )
    lines += ["", *target_lines(res["targets"], "best median", 1, unit=" answers/s")]
    return "\n".join(lines)
