"""Figure 3 — cache hits against a bare FastAPI JSON route, side by side in one run.

The same chat body is sent twice to prime the caches; the second answer's `grounding.cache` says
which cache served it (`answer: hit` once the answer cache exists; until then only `search: hit`,
and every request still fetches and extracts). Then the service and bench/bare_app.py — the same
uvicorn, one route answering the service's own response bytes' document — are loaded alternately
with the same tool (wrk when installed, else an httpx loop) for the same time.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import httpx

from bench.config import BenchConfig
from bench.loadgen import httpx_post_for, wrk_available, wrk_post
from bench.procs import BareProcess, ServiceProcess, UpstreamsProcess
from bench.stats import fmt_spread, spread, target_lines
from bench.workload import Workload

NAME = "cache"
TITLE = "3. Cache hits against a bare FastAPI route"
TARGET_RATIO = 0.5


def _load(url: str, body: dict, cfg: BenchConfig) -> dict:
    if wrk_available():
        return wrk_post(url, body, connections=cfg.cache_connections, seconds=cfg.cache_seconds)
    return httpx_post_for(url, body, connections=cfg.cache_connections, seconds=cfg.cache_seconds)


def run(cfg: BenchConfig) -> dict:
    workload = Workload(n_requests=1)
    body = workload.body(0, {"cache": "use"})
    out: dict = {
        "connections": cfg.cache_connections,
        "seconds": cfg.cache_seconds,
        "tool": "wrk" if wrk_available() else "httpx",
        "runs": [],
    }
    with UpstreamsProcess(workload) as up, tempfile.TemporaryDirectory() as tmp:
        with ServiceProcess(up.info["env"]) as svc:
            url = svc.url + "/v1/chat/completions"
            first = httpx.post(url, json=body, timeout=60).json()
            second_resp = httpx.post(url, json=body, timeout=60)
            second = second_resp.json()
            cache = second["grounding"].get("cache", {})
            out["first_cache"] = first["grounding"].get("cache", {})
            out["second_cache"] = cache
            out["hit_kind"] = (
                "answer" if cache.get("answer") == "hit" else ("search" if cache.get("search") == "hit" else "none")
            )
            out["response_bytes"] = len(second_resp.content)
            out["second_timings_ms"] = second["grounding"].get("timings_ms", {})
            body_file = Path(tmp) / "response.json"
            body_file.write_bytes(second_resp.content)
            with BareProcess(body_file) as bare:
                for _ in range(cfg.repeats):
                    b = _load(bare.url + "/v1/chat/completions", body, cfg)
                    before = up.stats()
                    s = _load(url, body, cfg)
                    after = up.stats()
                    out["runs"].append(
                        {
                            "bare": b,
                            "service": s,
                            "ratio_rps": s["rps"] / b["rps"] if b["rps"] else 0.0,
                            "upstream_calls_during_service_run": {
                                k: after[k] - before[k] for k in ("search_requests", "web_requests", "llm_requests")
                            },
                        }
                    )
            out["hit_path"] = _hit_path_counts(svc.url)
    out["ratio"] = spread(r["ratio_rps"] for r in out["runs"])
    out["bare_rps"] = spread(r["bare"]["rps"] for r in out["runs"])
    out["service_rps"] = spread(r["service"]["rps"] for r in out["runs"])
    out["bare_p99_ms"] = spread(r["bare"]["p99_ms"] for r in out["runs"])
    out["service_p99_ms"] = spread(r["service"]["p99_ms"] for r in out["runs"])
    out["targets"] = {
        f"answer_cache_hit_rps>={TARGET_RATIO}x_bare": {
            "value": out["ratio"]["median"],
            "met": (out["ratio"]["median"] >= TARGET_RATIO) if out["hit_kind"] == "answer" else None,
        }
    }
    return out


def _hit_path_counts(base: str) -> dict[str, float]:
    """grounded_hit_path_total by outcome (summed over workers): how many hits skipped routing."""
    text = httpx.get(base + "/metrics", timeout=30).text
    found = re.findall(r'^grounded_hit_path_total\{outcome="(\w+)"\} (\S+)$', text, re.M)
    return {outcome: float(value) for outcome, value in found}


def render(res: dict) -> str:
    kind = res["hit_kind"]
    note = (
        "Answer-cache hits measured."
        if kind == "answer"
        else f"**The answer cache was not available**: the second identical request reported `grounding.cache` = "
        f"`{json.dumps(res['second_cache'])}`, so these are {kind}-cache hits — each request still fetches "
        "and extracts its pages. The code is ready: once the second request reports `answer: hit`, this "
        "figure measures answer-cache hits."
    )
    lines = [
        f"{note} Load: {res['tool']}, {res['connections']} connections, {res['seconds']:g} s per run, bare and "
        f"service alternately; the bare route answers the same {res['response_bytes']} bytes of JSON. "
        "Cells: median (min–max) over repeats.",
        "",
        "| route | requests/s | p99 ms |",
        "|---|---|---|",
        f"| bare FastAPI route | {fmt_spread(res['bare_rps'], 0)} | {fmt_spread(res['bare_p99_ms'], 1)} |",
        f"| service, {kind}-cache hit | {fmt_spread(res['service_rps'], 1)} | {fmt_spread(res['service_p99_ms'], 1)} |",
        f"| ratio service / bare | {fmt_spread(res['ratio'], 3)} | |",
        "",
        f"Upstream calls during the service's runs: "
        f"{[r['upstream_calls_during_service_run'] for r in res['runs']]}; `grounding.cache` of the first request "
        f"`{json.dumps(res['first_cache'])}`, of the second `{json.dumps(res['second_cache'])}`.",
        "",
        "Served before routing by the hit path (app/api/hit_path.py), `grounded_hit_path_total` after the runs: "
        f"{json.dumps(res.get('hit_path', {}))}; the other hits took the route.",
        "",
    ]
    lines += target_lines(res["targets"], "ratio", 3, " — not measurable without the answer cache")
    return "\n".join(lines)
