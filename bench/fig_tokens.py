"""Figure 5 — token efficiency: the composing prompt against stuffing every fetched page.

The chat simulator reports usage counted with tiktoken (o200k_base), as the real API does, so the
service's `grounding.cost.tokens[<composer model>].prompt` is the composing prompt's true size. The
trace (`GET /v1/traces/{id}`) gives `evidence_tokens`. The baseline counts, with the same encoding,
the extracted main text (app.extract.html) of every page the service fetched for that answer — and,
for scale, their raw HTML.
"""

from __future__ import annotations

import statistics

import httpx

from bench.config import BenchConfig
from bench.loadgen import closed_loop
from bench.procs import ServiceProcess, UpstreamsProcess
from bench.stats import pcts
from bench.workload import Workload, page_key

NAME = "tokens"
TITLE = "5. Token efficiency"
COMPOSER_MODEL = "gpt-4o"  # Settings.composer_model default; the simulator echoes the model asked


def run(cfg: BenchConfig) -> dict:
    from app.extract.html import extract_html
    from app.settings import Settings
    from app.tokens import TokenCounter

    settings = Settings()
    counter = TokenCounter(settings.tiktoken_cache_dir, settings.token_encoding)
    workload = Workload(n_requests=cfg.token_requests + 2, count_tokens=True)
    text_tokens: dict[str, int] = {}
    html_tokens: dict[str, int] = {}

    def page_tokens(pid: str) -> tuple[int, int]:
        if pid not in text_tokens:
            html = workload.page_html(pid)
            ext = extract_html(html, url=None)
            text_tokens[pid] = counter.count("\n\n".join(b.text for b in ext.blocks))
            html_tokens[pid] = counter.count(html.decode("utf-8", errors="replace"))
        return text_tokens[pid], html_tokens[pid]

    rows = []
    with UpstreamsProcess(workload) as up:
        with ServiceProcess({**up.info["env"], **up.info["llm_env"]}) as svc:
            url = svc.url + "/v1/chat/completions"
            jobs = [(i, workload.body(i)) for i in range(2, 2 + cfg.token_requests)]
            closed_loop(url, [(i, workload.body(i)) for i in range(2)], 1)
            samples, _ = closed_loop(url, jobs, 2)
            with httpx.Client(timeout=30, trust_env=False) as client:
                for s in samples:
                    g = s.grounding
                    compose = (g.get("cost", {}).get("tokens", {}).get(COMPOSER_MODEL) or {}).get("prompt")
                    if s.status != 200 or not compose:
                        continue
                    trace = client.get(f"{svc.url}/v1/traces/{g['request_id']}")
                    evidence = trace.json().get("evidence_tokens") if trace.status_code == 200 else None
                    pids = [
                        workload.pages_of(key[0])[key[1]]
                        for f in g.get("fetches", [])
                        if f.get("outcome") == "ok" and (key := page_key(f["url"]))
                    ]
                    stuffed = [page_tokens(p) for p in pids]
                    rows.append(
                        {
                            "compose_prompt": compose,
                            "evidence": evidence,
                            "pages": len(pids),
                            "stuffed_text": sum(t for t, _ in stuffed),
                            "stuffed_html": sum(h for _, h in stuffed),
                        }
                    )
    ratio = [r["compose_prompt"] / r["stuffed_text"] for r in rows if r["stuffed_text"]]
    return {
        "answers": len(rows),
        "rows": rows,
        "compose_prompt": pcts([r["compose_prompt"] for r in rows]),
        "evidence": pcts([r["evidence"] for r in rows if r["evidence"] is not None]),
        "stuffed_text": pcts([r["stuffed_text"] for r in rows]),
        "stuffed_html": pcts([r["stuffed_html"] for r in rows]),
        "ratio_median": statistics.median(ratio) if ratio else None,
    }


def render(res: dict) -> str:
    def row(name: str, key: str) -> str:
        p = res[key]
        return f"| {name} | {p['p50']:.0f} | {p['p95']:.0f} | {p['p99']:.0f} |"

    ratio = res["ratio_median"]
    return "\n".join(
        [
            f"{res['answers']} answers, zero-latency upstreams, LLM composer (usage counted with tiktoken o200k_base), "
            "six real aeb pages fetched per answer. Tokens per answer:",
            "",
            "| prompt | p50 | p95 | p99 |",
            "|---|---|---|---|",
            row("composing prompt (system + evidence spans + question)", "compose_prompt"),
            row("evidence spans only (trace `evidence_tokens`)", "evidence"),
            row("stuffing: extracted text of every fetched page", "stuffed_text"),
            row("stuffing: raw HTML of every fetched page", "stuffed_html"),
            "",
            f"Median composing prompt / stuffed extracted text: **{ratio:.3f}** ({1 / ratio:.1f}x fewer tokens)."
            if ratio
            else "No answers reached the composer.",
        ]
    )
