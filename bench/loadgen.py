"""Bounded closed-loop load: a fixed list of request bodies sent by `concurrency` workers, each
request timed end to end; and a wrk runner for the cheap routes, where a Python client would be
the bottleneck. Every loop is bounded in count and in time, and targets 127.0.0.1 only."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx


@dataclass
class Sample:
    index: int  # request number in the workload
    latency_s: float
    status: int
    grounding: dict = field(default_factory=dict)  # the response's grounding block (may be empty)
    error: str = ""


async def _closed_loop(
    url: str, jobs: list[tuple[int, dict]], concurrency: int, timeout_s: float, budget_s: float, keep_grounding: bool
) -> list[Sample]:
    queue: asyncio.Queue[tuple[int, dict]] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)
    samples: list[Sample] = []
    stop_at = time.monotonic() + budget_s
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=timeout_s, limits=limits, trust_env=False) as client:

        async def worker() -> None:
            while time.monotonic() < stop_at:
                try:
                    index, body = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                t0 = time.perf_counter()
                try:
                    resp = await client.post(url, json=body)
                    latency = time.perf_counter() - t0
                    grounding = {}
                    if keep_grounding and resp.status_code == 200:
                        grounding = resp.json().get("grounding") or {}
                    samples.append(Sample(index, latency, resp.status_code, grounding))
                except httpx.HTTPError as exc:
                    samples.append(Sample(index, time.perf_counter() - t0, 0, error=type(exc).__name__))

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return samples


def closed_loop(
    url: str,
    jobs: list[tuple[int, dict]],
    concurrency: int,
    *,
    timeout_s: float = 60.0,
    budget_s: float = 300.0,
    keep_grounding: bool = True,
) -> tuple[list[Sample], float]:
    """Send every job (index, body) with `concurrency` in flight; returns samples and wall seconds."""
    t0 = time.perf_counter()
    samples = asyncio.run(_closed_loop(url, jobs, concurrency, timeout_s, budget_s, keep_grounding))
    return samples, time.perf_counter() - t0


# --- wrk -------------------------------------------------------------------------------------

_WRK_LUA = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("%(body)s", "rb")
wrk.body = f:read("*a")
f:close()
done = function(summary, latency, requests)
  io.write(string.format("BENCH {\\"requests\\": %%d, \\"seconds\\": %%f, \\"p50_ms\\": %%f, \\"p99_ms\\": %%f, \\"non2xx\\": %%d, \\"errors\\": %%d}\\n",
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1e3, latency:percentile(99) / 1e3,
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
"""


def wrk_available() -> bool:
    return shutil.which("wrk") is not None


def wrk_post(url: str, body: dict, *, connections: int, seconds: float, threads: int = 1) -> dict:
    """POST the same JSON body for `seconds`; returns requests/s, p50/p99 ms, error counts."""
    with tempfile.TemporaryDirectory() as tmp:
        body_path = Path(tmp) / "body.json"
        body_path.write_text(json.dumps(body))
        script = Path(tmp) / "post.lua"
        script.write_text(_WRK_LUA % {"body": body_path})
        out = subprocess.run(
            [
                "wrk",
                "-t",
                str(threads),
                "-c",
                str(connections),
                "-d",
                f"{max(1, round(seconds))}s",
                "--timeout",
                "10s",
                "-s",
                str(script),
                url,
            ],
            capture_output=True,
            text=True,
            timeout=seconds + 30,
            check=True,
        ).stdout
    m = re.search(r"^BENCH (\{.*\})$", out, re.M)
    if not m:
        raise RuntimeError(f"wrk printed no summary: {out[-500:]}")
    res = json.loads(m.group(1))
    res["rps"] = res["requests"] / res["seconds"] if res["seconds"] else 0.0
    res["tool"] = "wrk"
    return res


def httpx_post_for(url: str, body: dict, *, connections: int, seconds: float) -> dict:
    """The same measurement without wrk (the Python client may then be the bottleneck)."""
    n = 100_000
    jobs = [(i, body) for i in range(n)]
    samples, wall = closed_loop(url, jobs, connections, budget_s=seconds, keep_grounding=False)
    lat = sorted(s.latency_s * 1000 for s in samples)
    ok = [s for s in samples if s.status == 200]

    def pct(q: float) -> float:
        return lat[min(len(lat) - 1, int(q * (len(lat) - 1)))] if lat else 0.0

    return {
        "requests": len(samples),
        "seconds": wall,
        "rps": len(ok) / wall if wall else 0.0,
        "p50_ms": pct(0.5),
        "p99_ms": pct(0.99),
        "non2xx": len(samples) - len(ok),
        "errors": 0,
        "tool": "httpx",
    }
