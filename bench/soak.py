"""Soak under faults: the service as a real process, a fault-injecting TCP proxy
(simulators/fault_proxy.py) between it and each simulated upstream, many concurrent clients for
minutes; what the service answers, how late, and whether its memory creeps.

    .venv/bin/python -m bench.soak                                  # 200 clients x 300 s, 2 workers
    .venv/bin/python -m bench.soak --clients 200 --seconds 120 --update-doc
    .venv/bin/python -m bench.soak --smoke --json /tmp/s.json       # 10 clients x 10 s (the test)

Processes: this one (load generator + RSS sampler), the service (`python -m uvicorn app.main:app`,
bench/procs.py ServiceProcess, GA_AUTH=disabled) and the upstreams (`python -m bench.soak --serve`:
SearXNG, the web with 240 sites, the scripted OpenAI chat model, and one FaultProxy in front of
each). The service sees only the proxies: GA_SEARXNG_URL and GA_LLM_BASE_URL point at theirs, and the
search results link pages at 127.0.0.x:<web proxy port> (one proxy listening on every site's
address and forwarding to the same address on the web server's port). That process reads commands
on stdin: `stats` (request and fault counters), `set <search|llm|web> <json>` (change a proxy's
faults at run time), `quit`.

Each client loops until the time is up: one distinct question per request (the latency figure's
workload: real aeb pages, LLM planner and composer), `grounding.cache` "bypass" on every other
request and "use" on the rest; a 503 is honoured with its Retry-After, as OpenAI clients do.

Errors attributable to the service: any 5xx other than 502/503/504 (the documented upstream and
overload answers), any 4xx (the requests are valid), a 200 that is not a chat completion,
connection errors to the service, and no answer within deadline + admission wait + 10 s. RSS: the
service's process tree (VmRSS summed), sampled every few seconds; the slope is a least-squares fit
over the second half of the load (after warm-up), in MB per minute.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402

from bench.common import REPO_ROOT  # noqa: E402
from bench.procs import EXTRA_SERVICE_ENV, ServiceProcess, add_service_env  # noqa: E402
from bench.soak_report import (  # noqa: E402, F401  (SECTION: re-exported)
    ADMISSION_WAIT_S,
    DOCUMENTED_5XX,
    SECTION,
    analyse,
    fmt,
    render,
    slope_mb_per_min,
    summarize_log,
    update_doc,
)
from bench.soak_upstreams import FAULTS, SMOKE_REFUSALS, FaultyUpstreamsProcess, serve  # noqa: E402
from bench.workload import Latencies, Workload  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results"

# --- load ------------------------------------------------------------------------------------


def _classify(resp: httpx.Response) -> dict:
    out: dict = {"status": resp.status_code}
    try:
        body = resp.json()
    except ValueError:
        body = None
    if resp.status_code == 200:
        choices = (body or {}).get("choices") if isinstance(body, dict) else None
        if not choices or not isinstance(choices[0].get("message", {}).get("content"), str):
            out["service_error"] = "200_not_a_chat_completion"
            return out
        g = body.get("grounding") or {}
        reason = (g.get("abstention") or {}).get("reason")
        out["answer"] = f"{g.get('status')}:{reason}" if reason else str(g.get("status"))
        total = (g.get("timings_ms") or {}).get("total")
        if isinstance(total, int | float):
            out["server_ms"] = round(total)
        return out
    err = (body or {}).get("error") if isinstance(body, dict) else None
    out["code"] = (err or {}).get("code") if isinstance(err, dict) else None
    if resp.status_code in DOCUMENTED_5XX:
        out["retry_after"] = resp.headers.get("retry-after")
    else:
        out["service_error"] = f"http_{resp.status_code}:{out['code']}"
    return out


async def drive(
    url: str,
    workload: Workload,
    clients: int,
    seconds: float,
    timeout_s: float,
    ramp_s: float,
    bypass_share: float = 0.5,
) -> tuple[list[dict], float]:
    counter = itertools.count()
    records: list[dict] = []
    t0 = time.monotonic()
    stop_at = t0 + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    timeout = httpx.Timeout(timeout_s, connect=10.0)
    async with httpx.AsyncClient(timeout=timeout, limits=limits, trust_env=False) as client:

        async def one_client(c: int) -> None:
            await asyncio.sleep(ramp_s * c / max(1, clients))
            while time.monotonic() < stop_at:
                i = next(counter)
                bypass = int((i + 1) * bypass_share) > int(i * bypass_share)  # 0.5: every other request
                body = workload.body(i % workload.n_requests, {"cache": "bypass" if bypass else "use"})
                start = time.monotonic()
                rec: dict = {"t": round(start - t0, 3), "i": i, "bypass": bypass}
                try:
                    resp = await client.post(url, json=body)
                    rec.update(_classify(resp))
                except httpx.TimeoutException as exc:
                    rec.update(status=0, service_error=f"timeout:{type(exc).__name__}")
                except httpx.HTTPError as exc:
                    rec.update(status=0, service_error=f"connection:{type(exc).__name__}")
                rec["latency_s"] = round(time.monotonic() - start, 4)
                records.append(rec)
                if rec["status"] == 503:  # back off as the service asks (OpenAI clients do)
                    try:
                        await asyncio.sleep(min(10.0, float(rec.get("retry_after") or 1)))
                    except ValueError:
                        await asyncio.sleep(1.0)

        await asyncio.gather(*(one_client(c) for c in range(clients)))
    return records, time.monotonic() - t0


class RssSampler(threading.Thread):
    def __init__(self, svc: ServiceProcess, every_s: float):
        super().__init__(daemon=True, name="rss-sampler")
        self.svc, self.every_s = svc, every_s
        self.t0 = time.monotonic()
        self.samples: list[tuple[float, float]] = []
        self.per_process: list[tuple[float, dict[int, float]]] = []
        # What the in-process stores say they hold (grounded_memory_store_bytes, summed over workers):
        # RSS minus this is memory no budget accounts for.
        self.stores: list[tuple[float, dict[str, float]]] = []
        self._halt = threading.Event()

    def sample(self) -> None:
        t = round(time.monotonic() - self.t0, 2)
        self.samples.append((t, round(self.svc.memory_mb("VmRSS"), 1)))
        self.per_process.append((t, _rss_by_pid(self.svc)))
        self.stores.append((t, _store_mb(self.svc.url)))

    def run(self) -> None:
        while not self._halt.wait(self.every_s):
            self.sample()

    def stop(self) -> None:
        self._halt.set()
        self.join(5)


def _rss_by_pid(svc: ServiceProcess) -> dict[int, float]:
    out = {}
    for pid in svc.tree():
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    out[pid] = round(int(line.split()[1]) / 1024, 1)
        except OSError:
            continue
    return out


def _metric_lines(url: str) -> list[str] | None:
    """The lines of the service's /metrics (None if unreachable)."""
    try:
        return httpx.get(url + "/metrics", timeout=3.0, trust_env=False).text.splitlines()
    except httpx.HTTPError:
        return None


def _store_mb(url: str) -> dict[str, float]:
    """grounded_memory_store_bytes by store, in MB, from the service's /metrics ({} if unreachable)."""
    out: dict[str, float] = {}
    for line in _metric_lines(url) or []:
        if line.startswith("grounded_memory_store_bytes{"):
            labels, _, value = line.rpartition(" ")
            store = labels.split('store="', 1)[1].split('"', 1)[0]
            out[store] = round(out.get(store, 0.0) + float(value) / 2**20, 1)
    return out


ANSWER_ROUTE = "/v1/chat/completions"


def server_durations(url: str, route: str = ANSWER_ROUTE) -> dict[str, float]:
    """The service's own view of the answer route's latency, from the outermost middleware (before
    the admission queue) to the last body byte: grounded_request_duration_seconds' cumulative buckets
    summed over workers, as {upper bound: requests at or under it} plus "count" ({} if unreachable).
    Whatever a client waits beyond this was spent before the app saw the request (the listening
    socket's queue, the event loop's backlog) or in the client itself."""
    out: dict[str, float] = {}
    for line in _metric_lines(url) or []:
        if not line.startswith("grounded_request_duration_seconds_") or f'route="{route}"' not in line:
            continue
        labels, _, value = line.rpartition(" ")
        if labels.startswith("grounded_request_duration_seconds_bucket{"):
            le = labels.split('le="', 1)[1].split('"', 1)[0]
            out[le] = out.get(le, 0.0) + float(value)
        elif labels.startswith("grounded_request_duration_seconds_count{"):
            out["count"] = out.get("count", 0.0) + float(value)
    return out


# --- the run ---------------------------------------------------------------------------------


def run(
    clients: int,
    seconds: float,
    deadline_ms: int,
    workers: int,
    *,
    smoke: bool = False,
    sample_s: float = 5.0,
    bypass_share: float = 0.5,
    cache_max_mb: int | None = None,
) -> dict:
    scale = 0.25 if smoke else 1.0
    latencies = Latencies(
        plan_s=0.4 * scale,
        search_s=0.3 * scale,
        fetch_min_s=0.2 * scale,
        fetch_max_s=1.5 * scale,
        compose_s=0.8 * scale,
    )
    # Distinct questions: more than the service could answer in the time (wraps around past that).
    n_requests = max(200, int(seconds * (40 if not smoke else 20)) + clients)
    workload = Workload(n_requests=n_requests, latencies=latencies)
    faults = json.loads(json.dumps(FAULTS))
    if smoke:
        for f in faults.values():
            f.update(SMOKE_REFUSALS)
    deadline_s = deadline_ms / 1000
    timeout_s = deadline_s + ADMISSION_WAIT_S + 10.0
    log_path = Path(tempfile.gettempdir()) / f"soak-service-{os.getpid()}.log"
    started = datetime.now(UTC)
    t_setup = time.monotonic()
    with FaultyUpstreamsProcess(workload, faults) as up:
        env = {**up.info["env"], "GA_DEADLINE_MS": str(deadline_ms)}
        # As deployed with several workers (docs/OPERATIONS.md): /metrics sums every worker's values.
        env["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="soak-metrics-")
        if cache_max_mb is not None:
            env["GA_MEMORY_CACHE_MAX_BYTES"] = str(cache_max_mb * 2**20)
        with open(log_path, "wb") as log:  # the service inherits fd 2 at spawn: its logs land in the file
            saved = os.dup(2)
            os.dup2(log.fileno(), 2)
            try:
                svc = ServiceProcess(env, workers=workers)
            finally:
                os.dup2(saved, 2)
                os.close(saved)
        with svc:
            setup_s = time.monotonic() - t_setup
            sampler = RssSampler(svc, sample_s if not smoke else 1.0)
            sampler.sample()
            sampler.start()
            records, wall_s = asyncio.run(
                drive(
                    svc.url + ANSWER_ROUTE,
                    workload,
                    clients,
                    seconds,
                    timeout_s,
                    ramp_s=min(5.0, seconds / 10),
                    bypass_share=bypass_share,
                )
            )
            sampler.stop()
            durations = server_durations(svc.url)
            sampler.sample()
            time.sleep(2.0 if not smoke else 0.5)
            sampler.sample()  # settled after the load
            alive = svc.proc.poll() is None
            peak = svc.memory_mb("VmHWM")
            upstream = up.stats()
    samples = sampler.samples
    second_half = [(t, v) for t, v in samples if seconds / 2 <= t <= seconds]
    slope = slope_mb_per_min(second_half)
    held = dict((t, sum(v.values())) for t, v in sampler.stores if v)
    unaccounted = [(t, v - held[t]) for t, v in second_half if t in held]
    slope_unaccounted = slope_mb_per_min(unaccounted)
    last_quarter = [(t, v) for t, v in samples if seconds * 3 / 4 <= t <= seconds]
    slope_last = slope_mb_per_min(last_quarter)
    rss = {
        "samples": samples,
        "per_process": sampler.per_process,
        "stores_mb": sampler.stores,
        "start_mb": samples[0][1] if samples else None,
        "end_of_load_mb": samples[-2][1] if len(samples) >= 2 else None,
        "after_load_mb": samples[-1][1] if samples else None,
        "peak_hwm_sum_mb": round(peak, 1),
        "slope_second_half_mb_per_min": None if slope is None else round(slope, 2),
        "slope_points": len(second_half),
        "stores_end_mb": sampler.stores[-1][1] if sampler.stores else {},
        "slope_unaccounted_second_half_mb_per_min": None if slope_unaccounted is None else round(slope_unaccounted, 2),
        "slope_last_quarter_mb_per_min": None if slope_last is None else round(slope_last, 2),
    }
    result = analyse(records, wall_s, deadline_s, rss)
    result["server_durations"] = durations
    result.update(
        {
            "config": {
                "clients": clients,
                "seconds": seconds,
                "deadline_ms": deadline_ms,
                "workers": workers,
                "smoke": smoke,
                "bypass_share": bypass_share,
                "memory_cache_max_mb": cache_max_mb if cache_max_mb is not None else 256,
                "client_timeout_s": timeout_s,
                "latencies_s": latencies.__dict__,
                "distinct_questions": n_requests,
                "questions_wrapped": max(0, len(records) - n_requests),
                "faults": faults,
                "service_command": svc.command,
                "service_env": dict(EXTRA_SERVICE_ENV),
            },
            "service_alive_at_end": alive,
            "faults_injected": upstream.pop("faults"),
            "upstream_requests": upstream,
            "service_log": {"path": str(log_path), **summarize_log(log_path)},
            "started": started.strftime("%Y-%m-%d %H:%M UTC"),
            "setup_s": round(setup_s, 1),
            "wall_s": round(wall_s, 1),
            "machine": {"nproc": os.cpu_count(), "loadavg_at_end": os.getloadavg()},
        }
    )
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, help="concurrent clients (default 200; --smoke: 10)")
    ap.add_argument("--seconds", type=float, help="seconds of load (default 300; --smoke: 10)")
    ap.add_argument("--deadline-ms", type=int, default=20_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sample-s", type=float, default=5.0, help="RSS sampling period")
    ap.add_argument("--bypass-share", type=float, default=0.5, help="share of requests with cache: bypass")
    ap.add_argument("--cache-max-mb", type=int, help="GA_MEMORY_CACHE_MAX_BYTES in MB (default: the service's 256)")
    ap.add_argument("--smoke", action="store_true", help="10 clients x 10 s, shorter upstream latencies")
    ap.add_argument("--json", type=Path, help="results JSON (default bench/results/soak-<UTC time>.json)")
    ap.add_argument("--md", type=Path, help="also write the markdown section to this file")
    ap.add_argument("--update-doc", action="store_true", help="replace/append the section in docs/BENCHMARKS.md")
    ap.add_argument(
        "--service-env",
        nargs="*",
        default=[],
        metavar="GA_NAME=VALUE",
        help="settings for the service on top of the soak's own (e.g. GA_REDIS_URL=redis://127.0.0.1:6379/15)",
    )
    ap.add_argument("--serve", help=argparse.SUPPRESS)  # the upstreams process
    args = ap.parse_args(argv)
    if (bad := add_service_env(args.service_env)) is not None:
        ap.error(f"--service-env takes GA_NAME=VALUE, not {bad!r}")
    if args.serve:
        serve(json.loads(args.serve))
        return 0
    clients = args.clients or (10 if args.smoke else 200)
    seconds = args.seconds or (10.0 if args.smoke else 300.0)
    command = "python -m bench.soak " + " ".join(
        a for a in (argv if argv is not None else sys.argv[1:]) if a != "--update-doc"
    )
    print(f"[soak] {clients} clients x {seconds:.0f} s, {args.workers} worker(s) …", file=sys.stderr, flush=True)
    res = run(
        clients,
        seconds,
        args.deadline_ms,
        args.workers,
        smoke=args.smoke,
        sample_s=args.sample_s,
        bypass_share=args.bypass_share,
        cache_max_mb=args.cache_max_mb,
    )
    res["config"]["sample_s"] = args.sample_s if not args.smoke else 1.0
    res["command"] = command.strip()
    path = args.json or RESULTS / f"soak-{datetime.now(UTC).strftime('%Y%m%d-%H%M')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res, indent=1, default=str) + "\n")
    section = render(res, res["command"])
    if args.md:
        args.md.write_text(section)
    if args.update_doc:
        update_doc(section)
    print(section, flush=True)
    print(
        f"[soak] {res['requests']} requests, {res['service_errors']} service errors, RSS slope "
        f"{fmt(res['rss']['slope_second_half_mb_per_min'])} MB/min → {path}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
