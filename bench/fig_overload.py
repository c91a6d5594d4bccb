"""Figure 7 — overload: admission control at c=256 against the same service at c=16.

The service (2 workers) admits at most GA_MAX_IN_FLIGHT answers per worker; past that a request
waits at most GA_ADMISSION_WAIT_S in a queue of GA_ADMISSION_QUEUE, then gets a JSON 503 with
Retry-After. Same simulated upstreams and questions as the latency figure. Reported: latency of the
accepted answers at c=256 next to c=16 (the goal: c=16-like), the refusal rate, and the longest any
request waited for its answer or refusal against the deadline (the goal: none past it).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import httpx

from bench.config import BenchConfig
from bench.fig_latency import make_workload
from bench.loadgen import closed_loop
from bench.procs import ServiceProcess, UpstreamsProcess
from bench.stats import pcts

NAME = "overload"
TITLE = "7. Overload: bounded in-flight answers, a bounded queue, then 503"
WORKERS = 2
# 32 in all: c=16 stays within it even when the kernel hands one worker most of the connections.
IN_FLIGHT_PER_WORKER = 16
QUEUE_PER_WORKER = 16
WAIT_S = 1.0
DEADLINE_MS = 20_000


async def _clients(url: str, bodies: list[dict], c: int, seconds: float) -> tuple[list[tuple[int, float]], float]:
    """c clients for `seconds`, each sending one question after another; a 503 is retried after
    its Retry-After, as OpenAI clients do. Returns (status, latency s) per request and wall time."""
    out: list[tuple[int, float]] = []
    queue = iter(bodies)
    stop = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=c, max_keepalive_connections=c)
    async with httpx.AsyncClient(timeout=DEADLINE_MS / 1000 + 10, limits=limits, trust_env=False) as client:

        async def one() -> None:
            while time.monotonic() < stop:
                body = next(queue, None)
                if body is None:
                    return
                t0 = time.perf_counter()
                try:
                    r = await client.post(url, json=body)
                    out.append((r.status_code, time.perf_counter() - t0))
                    if r.status_code == 503:
                        await asyncio.sleep(float(r.headers.get("retry-after", "1")))
                except httpx.HTTPError:
                    out.append((0, time.perf_counter() - t0))

        t_start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(c)))
    return out, time.perf_counter() - t_start


def _level(url: str, bodies: list[dict], c: int, seconds: float) -> dict:
    samples, wall = asyncio.run(_clients(url, bodies, c, seconds))
    ok = [lat * 1000 for st, lat in samples if st == 200]
    refused = [lat * 1000 for st, lat in samples if st == 503]
    return {
        "c": c,
        "seconds": seconds,
        "requests": len(samples),
        "statuses": dict(Counter(str(st) for st, _ in samples)),
        "accepted_ms": pcts(ok) if ok else None,
        "refused_ms": pcts(refused) if refused else None,
        "refusal_rate": round(len(refused) / len(samples), 4) if samples else None,
        "longest_wait_ms": round(max(lat for _, lat in samples) * 1000, 1) if samples else None,
        "answers_per_s": round(len(ok) / wall, 2) if wall else 0.0,
    }


def run(cfg: BenchConfig) -> dict:
    seconds = 4.0 if cfg.quick else 30.0
    workload = make_workload(cfg, 8 + (200 if cfg.quick else 6000))
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
            half = (workload.n_requests - 8) // 2
            low = _level(url, [workload.body(i) for i in range(8, 8 + half)], 4 if cfg.quick else 16, seconds)
            high = _level(
                url, [workload.body(i) for i in range(8 + half, 8 + 2 * half)], 16 if cfg.quick else 256, seconds
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
        f"(`cache: bypass`). Each level: c clients for {res['levels'][0]['seconds']:.0f} s, one distinct question "
        "after another; a 503 is retried after its Retry-After, as OpenAI clients do.",
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
