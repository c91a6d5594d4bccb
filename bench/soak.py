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
import dataclasses
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402

from bench.common import REPO_ROOT  # noqa: E402
from bench.procs import PYTHON, ServiceProcess, UpstreamsProcess  # noqa: E402
from bench.stats import pcts  # noqa: E402
from bench.workload import Latencies, Workload  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results"
DOC = REPO_ROOT / "docs" / "BENCHMARKS.md"
SECTION = "## Soak under faults"
ADMISSION_WAIT_S = 2.0  # GA_ADMISSION_WAIT_S default: a request may wait this long before its deadline starts
DOCUMENTED_5XX = {502, 503, 504}

# Per upstream: every exchange (request/response on a connection) draws its faults.
FAULTS: dict[str, dict] = {
    "search": {
        "latency_ms": 10,
        "spike_prob": 0.05,
        "spike_ms": [1000, 5000],  # past GA_SEARCH_TIMEOUT_S (4 s) now and then
        "reset_prob": 0.02,
        "reset_after_bytes": [0, 4096],
        "slow_write_prob": 0.05,
        "trickle_bytes": 512,
        "trickle_interval_ms": 10,
        "refuse_every_s": 60,
        "refuse_for_s": 2,
    },
    "llm": {
        "latency_ms": 10,
        "spike_prob": 0.05,
        "spike_ms": [1000, 4000],
        "reset_prob": 0.02,
        "reset_after_bytes": [0, 1024],
        "slow_write_prob": 0.05,
        "trickle_bytes": 64,
        "trickle_interval_ms": 10,
        "refuse_every_s": 90,
        "refuse_for_s": 2,
    },
    "web": {
        "latency_ms": 5,
        "spike_prob": 0.05,
        "spike_ms": [1000, 5000],
        "reset_prob": 0.03,
        "reset_after_bytes": [0, 32768],
        "slow_write_prob": 0.05,
        "slow_read_prob": 0.02,
        "trickle_bytes": 1024,
        "trickle_interval_ms": 10,
        "refuse_every_s": 75,
        "refuse_for_s": 1,
    },
}
SMOKE_REFUSALS = {"refuse_every_s": 4, "refuse_for_s": 0.5}  # at least one window in a 10 s run


# --- the upstreams process ---------------------------------------------------------------------


def serve(spec: dict) -> None:
    """`python -m bench.soak --serve '<json>'`: the upstreams of bench/upstreams.py behind fault proxies."""
    from bench.upstreams import Upstreams
    from simulators import FaultProxy
    from simulators.fault_proxy import Faults

    class FaultyUpstreams(Upstreams):
        def start(self) -> None:
            super().start()
            hosts = ["127.0.0.1"] + [f"127.0.0.{2 + j}" for j in range(self.workload.n_sites)]
            f = spec["faults"]
            self.proxies = {
                "search": FaultProxy(
                    self.searxng.host, self.searxng.port, faults=Faults(**f["search"]), seed=11, name="fault-search"
                ),
                "llm": FaultProxy(self.llm.host, self.llm.port, faults=Faults(**f["llm"]), seed=12, name="fault-llm"),
                "web": FaultProxy(
                    None, self.web.port, listen_hosts=hosts, faults=Faults(**f["web"]), seed=13, name="fault-web"
                ),
            }
            for proxy in self.proxies.values():
                proxy.start()

        def stop(self) -> None:
            for proxy in getattr(self, "proxies", {}).values():
                proxy.stop()
            super().stop()

        def url(self, i: int, k: int) -> str:
            port = self.proxies["web"].port
            return f"http://127.0.0.{2 + self.workload.site_index(i, k)}:{port}{self.workload.path(i, k)}"

        def stats(self) -> dict:
            return {**super().stats(), "faults": {name: p.stats() for name, p in self.proxies.items()}}

        def describe(self) -> dict:
            p = self.proxies
            return {
                "env": {
                    "GA_SEARCH_PROVIDERS": "searxng",
                    "GA_SEARXNG_URL": p["search"].url,
                    "GA_FETCH_ALLOW_PRIVATE": "127.0.0.0/8",
                    "GA_FETCH_ALLOWED_PORTS": str(p["web"].port),
                    "GA_LLM_BASE_URL": p["llm"].url + "/v1",
                    "GA_LLM_API_KEY": "sk-bench",
                },
                "direct": {"searxng": self.searxng.url, "llm": self.llm.url, "web_port": self.web.port},
            }

    up = FaultyUpstreams(Workload.from_json(json.dumps(spec["workload"])))
    up.start()
    print(json.dumps(up.describe()), flush=True)
    try:
        for line in sys.stdin:
            cmd, _, arg = line.strip().partition(" ")
            if cmd == "stats":
                print(json.dumps(up.stats()), flush=True)
            elif cmd == "set":  # set <proxy> <json>: change one proxy's faults at run time
                name, _, changes = arg.partition(" ")
                print(json.dumps(dataclasses.asdict(up.proxies[name].set(**json.loads(changes)))), flush=True)
            elif cmd == "quit":
                break
    finally:
        up.stop()


class FaultyUpstreamsProcess(UpstreamsProcess):
    def __init__(self, workload: Workload, faults: dict):
        spec = {"workload": json.loads(workload.to_json()), "faults": faults}
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "bench.soak", "--serve", json.dumps(spec)],
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"upstreams failed to start (exit {self.proc.wait()})")
        self.info: dict = json.loads(line)


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
        self._halt = threading.Event()

    def sample(self) -> None:
        t = round(time.monotonic() - self.t0, 2)
        self.samples.append((t, round(self.svc.memory_mb("VmRSS"), 1)))
        self.per_process.append((t, _rss_by_pid(self.svc)))

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


def slope_mb_per_min(points: list[tuple[float, float]]) -> float | None:
    if len(points) < 3:
        return None
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    var = sum((t - mx) ** 2 for t, _ in points)
    if var == 0:
        return None
    return sum((t - mx) * (v - my) for t, v in points) / var * 60.0


# --- analysis --------------------------------------------------------------------------------


def analyse(records: list[dict], wall_s: float, deadline_s: float, rss: dict) -> dict:
    statuses = Counter(str(r["status"]) for r in records)
    errors = Counter(r["service_error"] for r in records if r.get("service_error"))
    documented = Counter(f"{r['status']}:{r.get('code')}" for r in records if r["status"] in DOCUMENTED_5XX)
    answers = Counter(r["answer"] for r in records if r.get("answer"))
    ok = [r["latency_s"] for r in records if r["status"] == 200 and not r.get("service_error")]
    every = [r["latency_s"] for r in records if r["status"] != 0]
    server = [r["server_ms"] for r in records if r.get("server_ms") is not None]
    timeline = []
    for start in range(0, int(wall_s) + 1, 10):
        window = [r for r in records if start <= r["t"] < start + 10]
        if not window:
            continue
        lat = [r["latency_s"] for r in window if r["status"] == 200]
        timeline.append(
            {
                "t": start,
                "requests": len(window),
                "ok": len(lat),
                "s503": sum(r["status"] == 503 for r in window),
                "errors": sum(bool(r.get("service_error")) for r in window),
                "p50_s": round(pcts(lat)["p50"], 2) if lat else None,
                "p99_s": round(pcts(lat)["p99"], 2) if lat else None,
            }
        )
    return {
        "requests": len(records),
        "answered_200": len(ok),
        "throughput_rps": round(len(records) / wall_s, 2) if wall_s else 0.0,
        "answers_per_s": round(len(ok) / wall_s, 2) if wall_s else 0.0,
        "statuses": dict(statuses),
        "documented_5xx": dict(documented),
        "answer_statuses": dict(answers.most_common()),
        "service_errors": sum(errors.values()),
        "service_error_kinds": dict(errors),
        "service_error_examples": [r for r in records if r.get("service_error")][:10],
        "latency_200_s": {k: round(v, 3) for k, v in pcts(ok).items()} if ok else None,
        "latency_all_s": {k: round(v, 3) for k, v in pcts(every).items()} if every else None,
        "deadline_s": deadline_s,
        "over_deadline_200": sum(v > deadline_s for v in ok),
        "over_deadline_plus_admission_200": sum(v > deadline_s + ADMISSION_WAIT_S for v in ok),
        "server_total_ms_200": {k: round(v) for k, v in pcts(server).items()} if server else None,
        "slowest_200": sorted(
            (
                {k: r.get(k) for k in ("t", "latency_s", "server_ms", "bypass", "answer")}
                for r in records
                if r["status"] == 200
            ),
            key=lambda r: -r["latency_s"],
        )[:10],
        "bypass_share": round(sum(r["bypass"] for r in records) / len(records), 3) if records else None,
        "timeline_10s": timeline,
        "rss": rss,
    }


def summarize_log(path: Path, limit: int = 12) -> dict:
    """Count the service's WARNING+ log lines by (level, logger, first words of the message)."""
    kinds: Counter[str] = Counter()
    other = 0
    examples: dict[str, str] = {}
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return {}
    for line in lines:
        try:
            entry = json.loads(line)
            msg = str(entry.get("msg", ""))
            key = f"{entry.get('level')} {entry.get('logger')}: {' '.join(msg.split()[:6])[:90]}"
            examples.setdefault(key, (msg + (" | " + entry["exc"].splitlines()[-1] if entry.get("exc") else ""))[:400])
        except (ValueError, AttributeError):
            other += 1
            key = "non-json: " + " ".join(line.split()[:6])[:90]
            examples.setdefault(key, line[:400])
        kinds[key] += 1
    top = kinds.most_common(limit)
    return {
        "lines": len(lines),
        "non_json_lines": other,
        "top": [{"count": n, "kind": k, "example": examples[k]} for k, n in top],
    }


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
                    svc.url + "/v1/chat/completions",
                    workload,
                    clients,
                    seconds,
                    timeout_s,
                    ramp_s=min(5.0, seconds / 10),
                    bypass_share=bypass_share,
                )
            )
            sampler.stop()
            sampler.sample()
            time.sleep(2.0 if not smoke else 0.5)
            sampler.sample()  # settled after the load
            alive = svc.proc.poll() is None
            peak = svc.memory_mb("VmHWM")
            upstream = up.stats()
    samples = sampler.samples
    second_half = [(t, v) for t, v in samples if seconds / 2 <= t <= seconds]
    slope = slope_mb_per_min(second_half)
    rss = {
        "samples": samples,
        "per_process": sampler.per_process,
        "start_mb": samples[0][1] if samples else None,
        "end_of_load_mb": samples[-2][1] if len(samples) >= 2 else None,
        "after_load_mb": samples[-1][1] if samples else None,
        "peak_hwm_sum_mb": round(peak, 1),
        "slope_second_half_mb_per_min": None if slope is None else round(slope, 2),
        "slope_points": len(second_half),
    }
    result = analyse(records, wall_s, deadline_s, rss)
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


# --- markdown --------------------------------------------------------------------------------


def render(res: dict, command: str) -> str:
    c = res["config"]
    lat = c["latencies_s"]
    l200 = res["latency_200_s"] or {}
    rss = res["rss"]
    fi = res["faults_injected"]

    def fault_row(name: str) -> str:
        s = fi.get(name, {})
        return (
            f"| {name} | {s.get('connections', 0)} | {s.get('exchanges', 0)} | {s.get('spikes', 0)} | "
            f"{s.get('resets', 0)} | {s.get('slow_writes', 0)} | {s.get('slow_reads', 0)} | "
            f"{s.get('refuse_windows', 0)} | {s.get('upstream_unreachable', 0)} |"
        )

    def ms(v: float | None) -> str:
        return "n/a" if v is None else f"{v * 1000:.0f}"

    errors = res["service_error_kinds"]
    lines = [
        SECTION,
        "",
        f"Reproduce: `{command}` (run {res['started']}, {res['wall_s']:.0f} s of load; `--smoke` is the 10-client "
        "test's version). Written by bench/soak.py (`--update-doc`), not by `scripts/bench`, which keeps it; raw "
        "results in `bench/results/soak-*.json`.",
        "",
        f"{c['clients']} concurrent clients for {c['seconds']:.0f} s against the service (`python -m uvicorn "
        f"app.main:app`, {c['workers']} worker(s), GA_DEADLINE_MS={c['deadline_ms']}), each sending one distinct "
        f"question after another (the latency figure's workload: six real aeb pages per answer, LLM planner and "
        f"composer), `grounding.cache: bypass` on {c.get('bypass_share', 0.5):.0%} of the requests (interleaved), "
        f"`use` on the rest (in-process cache budget {c.get('memory_cache_max_mb', 256)} MB per worker); a 503 is "
        "retried after its "
        "Retry-After. Simulated upstreams: plan "
        f"{lat['plan_s'] * 1000:.0f} ms, search {lat['search_s'] * 1000:.0f} ms, pages "
        f"{lat['fetch_min_s'] * 1000:.0f}–{lat['fetch_max_s'] * 1000:.0f} ms, compose {lat['compose_s'] * 1000:.0f} ms, "
        "each behind its own fault-injecting TCP proxy (simulators/fault_proxy.py; the web's proxy listens on every "
        "site's address). Faults drawn per request/response exchange: latency spikes, RST mid-response, trickled "
        "responses (and requests, to the web), and refusal windows (connect() refused):",
        "",
        "| upstream | spike prob (ms) | reset prob (after bytes) | slow write prob | slow read prob | refused |",
        "|---|---|---|---|---|---|",
    ]
    for name, f in c["faults"].items():
        lines.append(
            f"| {name} | {f['spike_prob']} ({f['spike_ms'][0]:.0f}–{f['spike_ms'][1]:.0f}) | {f['reset_prob']} "
            f"({f['reset_after_bytes'][0]}–{f['reset_after_bytes'][1]}) | {f['slow_write_prob']} "
            f"({f['trickle_bytes']} B / {f['trickle_interval_ms']:.0f} ms) | {f.get('slow_read_prob', 0)} | "
            f"{f['refuse_for_s']} s every {f['refuse_every_s']} s |"
        )
    lines += [
        "",
        "Faults injected (proxy counters):",
        "",
        "| upstream | connections | exchanges | spikes | resets | slow writes | slow reads | refusal windows | "
        "upstream unreachable |",
        "|---|---|---|---|---|---|---|---|---|",
        *(fault_row(n) for n in ("search", "llm", "web")),
        "",
        "| requests | answered 200 | answers/s | 503 (overloaded, documented) | other 502/504 | **service errors** | "
        "200 p50 ms | p95 ms | p99 ms | deadline ms | 200s over the deadline |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        f"| {res['requests']} | {res['answered_200']} | {res['answers_per_s']} | {res['statuses'].get('503', 0)} | "
        f"{res['statuses'].get('502', 0) + res['statuses'].get('504', 0)} | **{res['service_errors']}** | "
        f"{ms(l200.get('p50'))} | {ms(l200.get('p95'))} | {ms(l200.get('p99'))} | {c['deadline_ms']} | "
        f"{res['over_deadline_200']} ({res['over_deadline_plus_admission_200']} over deadline + "
        f"{ADMISSION_WAIT_S:.0f} s admission wait) |",
        "",
        f"Service errors by kind: {errors or 'none'}. Status codes: {res['statuses']}; documented 5xx by code: "
        f"{res['documented_5xx'] or 'none'}. Answers (status:abstention reason): {res['answer_statuses']}.",
        "",
        f"Memory (VmRSS summed over the service's process tree, sampled every "
        f"{c.get('sample_s', 5)} s): {rss['start_mb']:.0f} MB after start-up, {rss['end_of_load_mb']:.0f} MB at the "
        f"end of the load, {rss['after_load_mb']:.0f} MB once idle; peak (VmHWM, summed) {rss['peak_hwm_sum_mb']:.0f} "
        f"MB. Least-squares slope over the second half of the load ({rss['slope_points']} samples): "
        f"**{_fmt(rss['slope_second_half_mb_per_min'])} MB/min**.",
        "",
        "Per 10 s of the run (requests started in the window):",
        "",
        "| t s | requests | 200 | 503 | service errors | 200 p50 s | 200 p99 s | RSS MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for w in res["timeline_10s"]:
        near = [v for t, v in rss["samples"] if w["t"] <= t < w["t"] + 10]
        lines.append(
            f"| {w['t']} | {w['requests']} | {w['ok']} | {w['s503']} | {w['errors']} | {_fmt(w['p50_s'])} | "
            f"{_fmt(w['p99_s'])} | {near[-1] if near else ''} |"
        )
    log = res.get("service_log") or {}
    if log.get("top"):
        lines += ["", f"Service log (WARNING and above, {log['lines']} lines), most frequent kinds:", ""]
        lines += [f"- {e['count']} × `{e['kind']}`" for e in log["top"][:8]]
    return "\n".join(lines) + "\n"


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def update_doc(section: str, doc: Path = DOC) -> None:
    """Replace the "Soak under faults" section (up to the next "## " heading) or append it at the end,
    below bench/run.py's marker, where a regeneration of the figures keeps it."""
    text = doc.read_text() if doc.exists() else ""
    if SECTION in text:
        start = text.index(SECTION)
        nxt = text.find("\n## ", start + len(SECTION))
        rest = text[nxt + 1 :] if nxt != -1 else ""
        text = text[:start].rstrip() + "\n\n" + section.rstrip() + "\n" + ("\n" + rest if rest else "")
    else:
        text = text.rstrip() + "\n\n" + section.rstrip() + "\n"
    doc.write_text(text)


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
    ap.add_argument("--serve", help=argparse.SUPPRESS)  # the upstreams process
    args = ap.parse_args(argv)
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
        f"{_fmt(res['rss']['slope_second_half_mb_per_min'])} MB/min → {path}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
