"""The soak's report (bench/soak.py): statistics over the requests' records (analyse, the RSS slope),
the service's log summarised, the markdown section (render) and its place in docs/BENCHMARKS.md
(update_doc).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from bench.common import REPO_ROOT
from bench.stats import pcts

DOC = REPO_ROOT / "docs" / "BENCHMARKS.md"
SECTION = "## Soak under faults"
ADMISSION_WAIT_S = 2.0  # GA_ADMISSION_WAIT_S default: a request may wait this long before its deadline starts
DOCUMENTED_5XX = {502, 503, 504}


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
        f"`use` on the rest ({_cache_where(c)}); a 503 is "
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
        _server_side(res.get("server_durations") or {}, c["deadline_ms"] / 1000),
        "",
        f"Memory (VmRSS summed over the service's process tree, sampled every "
        f"{c.get('sample_s', 5)} s): {rss['start_mb']:.0f} MB after start-up, {rss['end_of_load_mb']:.0f} MB at the "
        f"end of the load, {rss['after_load_mb']:.0f} MB once idle; peak (VmHWM, summed) {rss['peak_hwm_sum_mb']:.0f} "
        f"MB. Least-squares slope over the second half of the load ({rss['slope_points']} samples): "
        f"**{fmt(rss['slope_second_half_mb_per_min'])} MB/min**.",
        "",
        f"What the in-process stores hold at the end (grounded_memory_store_bytes, MB, summed over workers): "
        f"{rss.get('stores_end_mb') or 'not sampled'}; slope of RSS minus that over the second half: "
        f"**{fmt(rss.get('slope_unaccounted_second_half_mb_per_min'))} MB/min** (memory no budget accounts for); "
        f"RSS slope over the last quarter of the load: {fmt(rss.get('slope_last_quarter_mb_per_min'))} MB/min.",
        "",
        "Per 10 s of the run (requests started in the window):",
        "",
        "| t s | requests | 200 | 503 | service errors | 200 p50 s | 200 p99 s | RSS MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for w in res["timeline_10s"]:
        near = [v for t, v in rss["samples"] if w["t"] <= t < w["t"] + 10]
        lines.append(
            f"| {w['t']} | {w['requests']} | {w['ok']} | {w['s503']} | {w['errors']} | {fmt(w['p50_s'])} | "
            f"{fmt(w['p99_s'])} | {near[-1] if near else ''} |"
        )
    log = res.get("service_log") or {}
    if log.get("top"):
        lines += ["", f"Service log (WARNING and above, {log['lines']} lines), most frequent kinds:", ""]
        lines += [f"- {e['count']} × `{e['kind']}`" for e in log["top"][:8]]
    return "\n".join(lines) + "\n"


def fmt(v: float | None) -> str:
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


def _cache_where(config: dict) -> str:
    """Where the `use` half's cache lives, and the run's extra settings, as the section states them."""
    env = config.get("service_env") or {}
    where = (
        "the cache in Redis, only the memos in-process"
        if env.get("GA_REDIS_URL")
        else f"in-process cache budget {config.get('memory_cache_max_mb', 256)} MB per worker"
    )
    shown = {k: ("redis://…" if k == "GA_REDIS_URL" else v) for k, v in env.items()}
    return where + ("; service settings " + ", ".join(f"{k}={v}" for k, v in shown.items()) if shown else "")


def _server_side(durations: dict[str, float], deadline_s: float) -> str:
    """The service's own latency of the answer route (every status), against the client's above."""
    total = durations.get("count")
    if not total:
        return "The service's own request durations were not read."
    bounds = sorted((float(k), v) for k, v in durations.items() if k not in ("count", "+Inf"))
    within = max((v for b, v in bounds if b <= deadline_s), default=0.0)
    beyond = [f"{total - v:.0f} over {b:g} s" for b, v in bounds if b > deadline_s]
    return (
        f"The service's own view (grounded_request_duration_seconds of the answer route, from the outermost "
        f"middleware, before the admission queue, to the last body byte; summed over workers; the admission "
        f"queue's 503s are answered before routing and are not in it): "
        f"{total:.0f} requests, {total - within:.0f} over the {deadline_s:g} s deadline"
        + (f" ({', '.join(beyond)})" if beyond else "")
        + ". A client latency beyond this was spent before the app read the request (the listening socket's "
        "queue, an event loop busy with other work) or in the load generator."
    )
