"""Figure 7 — overload: admission control at c=256 against the same service at c=16.

The service (2 workers) admits at most GA_MAX_IN_FLIGHT answers per worker; past that a request
waits at most GA_ADMISSION_WAIT_S in a queue of GA_ADMISSION_QUEUE, then gets a JSON 503 with
Retry-After. Same simulated upstreams and questions as the latency figure. Reported: latency of the
accepted answers at c=256 next to c=16 (the goal: c=16-like), the refusal rate, and the longest any
request waited for its answer or refusal against the deadline (the goal: none past it).
"""

from __future__ import annotations

from collections import Counter

from bench.config import BenchConfig
from bench.fig_latency import make_workload
from bench.loadgen import closed_loop
from bench.procs import ServiceProcess, UpstreamsProcess
from bench.stats import pcts

NAME = "overload"
TITLE = "7. Overload: bounded in-flight answers, a bounded queue, then 503"
WORKERS = 2
IN_FLIGHT_PER_WORKER = 8  # 16 in all: the c=16 level is the service at its admitted capacity
QUEUE_PER_WORKER = 16
WAIT_S = 1.0
DEADLINE_MS = 20_000


def _level(url: str, jobs: list[tuple[int, dict]], c: int) -> dict:
    samples, wall = closed_loop(url, jobs, c, timeout_s=DEADLINE_MS / 1000 + 10, keep_grounding=False)
    ok = [s.latency_s * 1000 for s in samples if s.status == 200]
    refused = [s.latency_s * 1000 for s in samples if s.status == 503]
    return {
        "c": c,
        "requests": len(samples),
        "statuses": dict(Counter(str(s.status) if s.status else s.error for s in samples)),
        "accepted_ms": pcts(ok) if ok else None,
        "refused_ms": pcts(refused) if refused else None,
        "refusal_rate": round(len(refused) / len(samples), 4) if samples else None,
        "longest_wait_ms": round(max(s.latency_s for s in samples) * 1000, 1) if samples else None,
        "answers_per_s": round(len(ok) / wall, 2) if wall else 0.0,
    }


def run(cfg: BenchConfig) -> dict:
    n_low, n_high = (8, 32) if cfg.quick else (64, 768)
    workload = make_workload(cfg, n_low + n_high + 8)
    env_extra = {
        "GA_MAX_IN_FLIGHT": str(IN_FLIGHT_PER_WORKER),
        "GA_ADMISSION_QUEUE": str(QUEUE_PER_WORKER),
        "GA_ADMISSION_WAIT_S": str(WAIT_S),
        "GA_DEADLINE_MS": str(DEADLINE_MS),
    }
    with UpstreamsProcess(workload) as up:
        env = {**up.info["env"], **up.info["llm_env"], **env_extra}
        with ServiceProcess(env, workers=1 if cfg.quick else WORKERS) as svc:
            url = svc.url + "/v1/chat/completions"
            closed_loop(url, [(i, workload.body(i)) for i in range(8)], 4)  # warm-up
            low = _level(url, [(i, workload.body(i)) for i in range(8, 8 + n_low)], 4 if cfg.quick else 16)
            high = _level(
                url, [(i, workload.body(i)) for i in range(8 + n_low, 8 + n_low + n_high)], 16 if cfg.quick else 256
            )
    ratio = None
    if low["accepted_ms"] and high["accepted_ms"]:
        ratio = round(high["accepted_ms"]["p50"] / low["accepted_ms"]["p50"], 3)
    return {
        "workers": 1 if cfg.quick else WORKERS,
        "settings": env_extra,
        "levels": [low, high],
        "accepted_p50_ratio_high_over_low": ratio,
        "targets": {
            "none_past_deadline": {
                "value": high["longest_wait_ms"],
                "limit": DEADLINE_MS,
                "met": high["longest_wait_ms"] is not None and high["longest_wait_ms"] <= DEADLINE_MS,
            },
        },
    }


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"


def render(res: dict) -> str:
    s = res["settings"]
    lines = [
        f"Service with {res['workers']} workers, GA_MAX_IN_FLIGHT={s['GA_MAX_IN_FLIGHT']} per worker, "
        f"GA_ADMISSION_QUEUE={s['GA_ADMISSION_QUEUE']}, GA_ADMISSION_WAIT_S={s['GA_ADMISSION_WAIT_S']}, deadline "
        f"{int(s['GA_DEADLINE_MS']) // 1000} s; the latency figure's simulated upstreams and questions "
        "(`cache: bypass`). A refused client takes its next question at once (closed loop).",
        "",
        "| c | requests | answers/s | accepted p50 ms | accepted p95 ms | accepted p99 ms | refused | "
        "refusal p50 ms | longest wait ms | statuses |",
        "|" + "---|" * 10,
    ]
    for lv in res["levels"]:
        acc, ref = lv["accepted_ms"] or {}, lv["refused_ms"] or {}
        lines.append(
            f"| {lv['c']} | {lv['requests']} | {lv['answers_per_s']} | {_ms(acc.get('p50'))} | {_ms(acc.get('p95'))} | "
            f"{_ms(acc.get('p99'))} | {lv['refusal_rate']:.1%} | {_ms(ref.get('p50'))} | {_ms(lv['longest_wait_ms'])} | "
            f"{lv['statuses']} |"
        )
    lines += [
        "",
        f"Accepted answers' median latency at the high level / at c=16: **{res['accepted_p50_ratio_high_over_low']}**; "
        f"longest wait for an answer or a refusal: {res['levels'][-1]['longest_wait_ms']} ms (deadline "
        f"{int(s['GA_DEADLINE_MS'])} ms). Reproduce: `scripts/bench --only overload`.",
    ]
    return "\n".join(lines)
