"""Run the labelled cases against the real service on the simulated web and score them.

    python -m eval.runner [--cases eval/cases] [--mode extractive|scripted|both] [--tags ci ...]
                          [--ids case-id ...] [--json out.json] [--traces]

Per mode it starts the simulators and the service once, then per case: resets the web, installs the
case's pages and search answers, sends the request over HTTP, and scores the response.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import httpx

from eval.cases import Case, load_cases
from eval.metrics import CaseResult, aggregate, as_json, by_tag, score_case, states
from eval.scripted_model import ScriptedModel
from eval.web import install_case_web, request_grounding
from simulators import OpenAIChatServer, SearxngServer, ServiceServer, WebServer

MODES = ("extractive", "scripted")
DEFAULT_CASES = Path(__file__).resolve().parent / "cases"


@dataclass
class ModeRun:
    mode: str
    results: list[CaseResult]
    traces: dict[str, Any] = field(default_factory=dict)  # case id → service trace (failed cases)
    evidence: dict[str, Any] = field(default_factory=dict)  # labelled case id → the composer's evidence
    seconds: float = 0.0

    @property
    def summary(self) -> dict[str, Any]:
        return aggregate(self.results)


def service_settings(mode: str, searxng: SearxngServer, web: WebServer, llm: OpenAIChatServer | None) -> dict:
    overrides = {**searxng.settings_overrides(), **web.settings_overrides(), "redis_url": None, "deadline_ms": 20_000}
    if mode == "scripted":
        assert llm is not None
        overrides.update(llm.settings_overrides())
    return overrides


def request_body(case: Case, grounding: dict) -> dict:
    return {"model": "grounded-answer", "messages": case.messages, "grounding": grounding}


def run_mode(
    cases: list[Case],
    mode: str,
    *,
    keep_traces: bool = False,
    today: date | None = None,
    keep_evidence: bool = False,
    overrides: dict | None = None,
) -> ModeRun:
    """Start simulators + service for `mode`, run every case in order, return the scored results.
    Cases on the embedded docs corpus (`corpus: docs`) run against a second service with the
    default local search, as a new user gets it."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r} not in {MODES}")
    started = time.monotonic()
    run = ModeRun(mode, [])
    with ExitStack() as stack:
        searxng = stack.enter_context(SearxngServer())
        web = stack.enter_context(WebServer(n_sites=12))
        llm = stack.enter_context(OpenAIChatServer()) if mode == "scripted" else None
        model = ScriptedModel()
        services: dict[str, httpx.Client] = {}

        def client_for(case: Case) -> httpx.Client:
            kind = "corpus" if case.corpus else "web"
            if kind not in services:
                settings = {
                    **(corpus_settings(mode, llm) if kind == "corpus" else service_settings(mode, searxng, web, llm)),
                    **(overrides or {}),
                }
                svc = stack.enter_context(ServiceServer(**settings))
                services[kind] = stack.enter_context(httpx.Client(base_url=svc.url, timeout=60))
            return services[kind]

        for name in ("httpx", "httpx2", "uvicorn.access"):  # one line per upstream call drowns the report
            logging.getLogger(name).setLevel(logging.WARNING)
        for case in cases:
            client = client_for(case)
            installed = install_case_web(case, web, searxng, today)
            if llm is not None:
                llm.reset()
                model.use(case, installed.site_hosts)
                llm.default = model
            t0 = time.monotonic()
            body, error = None, ""
            try:
                resp = client.post("/v1/chat/completions", json=request_body(case, request_grounding(case, installed)))
                body = resp.json()
                if resp.status_code != 200:
                    error = f"HTTP {resp.status_code}: {str(body)[:300]}"
            except (httpx.HTTPError, ValueError) as exc:
                error = f"{type(exc).__name__}: {exc}"
            result = score_case(
                case, mode, installed, body if not error else None, (time.monotonic() - t0) * 1000, error
            )
            trace = None
            if result.request_id and (case.slice or (keep_traces and not result.passed)):
                got = client.get(f"/v1/traces/{result.request_id}")
                trace = got.json() if got.status_code == 200 else None
            if case.slice and case.expected_status == "grounded" and trace is not None:
                result.gold_in_evidence = gold_in_evidence(case, trace)
            if trace is None and keep_evidence and result.request_id:
                got = client.get(f"/v1/traces/{result.request_id}")
                trace = got.json() if got.status_code == 200 else None
            if trace is not None and (case.slice or keep_evidence):
                run.evidence[case.id] = {
                    "question": (trace.get("plan") or {}).get("question"),
                    "evidence": trace.get("evidence") or [],
                }
            run.results.append(result)
            if keep_traces and not result.passed and result.request_id:
                run.traces[case.id] = {
                    "request": request_body(case, request_grounding(case, installed)),
                    "grounding": (body or {}).get("grounding"),
                    "trace": trace,
                }
    run.seconds = round(time.monotonic() - started, 2)
    return run


def corpus_settings(mode: str, llm: OpenAIChatServer | None) -> dict:
    """The embedded defaults (local docs corpus, in-process cache), plus the scripted model."""
    overrides: dict = {"redis_url": None, "deadline_ms": 20_000}
    if mode == "scripted":
        assert llm is not None
        overrides.update(llm.settings_overrides())
    return overrides


def gold_in_evidence(case: Case, trace: dict) -> bool:
    """Evidence recall: did a passage holding a gold answer reach the composer?"""
    golds = case.gold_answers or case.gold_all
    texts = [(e.get("text") or "").lower() for e in trace.get("evidence") or []]
    return not golds or any(states(t, g) for g in golds for t in texts)


# --- reporting --------------------------------------------------------------------------------

SUMMARY_ROWS = [
    ("cases", "cases"),
    ("passed", "cases passing every check"),
    ("status_accuracy", "status accuracy"),
    ("false_abstentions", "false abstentions"),
    ("false_answers", "false answers"),
    ("reason_accuracy", "abstention reason accuracy"),
    ("answer_accuracy", "answer accuracy (gold present)"),
    ("citation_validity", "citation validity"),
    ("citation_precision", "citation precision (harness)"),
    ("service_precision", "citation precision (service's own verdict)"),
    ("quote_in_source", "quote found in cited page"),
    ("citation_coverage", "citation coverage"),
    ("evidence_recall", "evidence recall"),
    ("gold_in_evidence", "gold answer in the composer's evidence"),
    ("answered_when_expected", "answered when answerable"),
    ("abstained_when_expected", "abstained when unanswerable"),
    ("freshness_correct", "freshness correctness"),
    ("forbidden_leaks", "forbidden-string leaks"),
    ("cost_usd_mean", "mean cost (USD)"),
    ("latency_ms_p50", "latency p50 (ms)"),
    ("latency_ms_p95", "latency p95 (ms)"),
]


def markdown_summary(runs: list[ModeRun]) -> str:
    head = "| metric | " + " | ".join(r.mode for r in runs) + " |\n|---|" + "---|" * len(runs)
    summaries = [r.summary for r in runs]
    rows = [f"| {label} | " + " | ".join(str(s[key]) for s in summaries) + " |" for key, label in SUMMARY_ROWS]
    return "\n".join([head, *rows])


def markdown_by_tag(runs: list[ModeRun]) -> str:
    """Cases passing every check, per tag and mode."""
    tags = [by_tag(r.results) for r in runs]
    head = "| tag | cases | " + " | ".join(f"{r.mode} passed" for r in runs) + " |\n|---|---|" + "---|" * len(runs)
    rows = [
        f"| {t} | {tags[0][t]['cases']} | " + " | ".join(str(bt[t]["passed"]) for bt in tags) + " |" for t in tags[0]
    ]
    return "\n".join([head, *rows])


def markdown_by_slice(runs: list[ModeRun]) -> str:
    """Labelled cases: per slice, the right status and (answerable slices) the gold answer stated."""
    slices = sorted({t for r in runs[0].results for t in r.tags[2:3]})
    head = (
        "| slice | cases | "
        + " | ".join(f"{r.mode} status ok / gold stated" for r in runs)
        + " |\n|---|---|"
        + "---|" * len(runs)
    )
    rows = []
    for sl in slices:
        cells = []
        for run in runs:
            rs = [r for r in run.results if sl in r.tags[2:3]]
            gold = [r for r in rs if r.answer_ok is not None]
            cells.append(f"{sum(r.status_ok for r in rs)} / {sum(bool(r.answer_ok) for r in gold) if gold else '-'}")
        rows.append(f"| {sl} | {sum(sl in r.tags[2:3] for r in runs[0].results)} | " + " | ".join(cells) + " |")
    return "\n".join([head, *rows])


def failures_text(runs: list[ModeRun]) -> str:
    lines = []
    for run in runs:
        for r in run.results:
            if not r.passed:
                lines.append(f"[{run.mode}] {r.id}: " + "; ".join(r.failures))
    return "\n".join(lines) or "no failing case"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.runner", description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", default=[str(DEFAULT_CASES)], help="JSONL files or directories")
    ap.add_argument("--mode", choices=(*MODES, "both"), default="both")
    ap.add_argument("--tags", nargs="*", default=[], help="only cases with any of these tags")
    ap.add_argument("--ids", nargs="*", default=[], help="only these case ids")
    ap.add_argument("--split", choices=("dev", "test"), help="labelled cases: only this split")
    ap.add_argument("--by-slice", action="store_true", help="labelled cases: figures per slice")
    ap.add_argument("--json", dest="json_out", help="write per-case results and summaries here")
    ap.add_argument("--traces", action="store_true", help="with --json: include service traces of failing cases")
    args = ap.parse_args(argv)
    cases = load_cases(args.cases, args.tags, args.ids)
    if args.split:
        cases = [c for c in cases if c.split == args.split]
    if not cases:
        print("no case matched", file=sys.stderr)
        return 2
    modes = MODES if args.mode == "both" else (args.mode,)
    runs = [run_mode(cases, m, keep_traces=args.traces) for m in modes]
    print(markdown_summary(runs))
    print()
    print(markdown_by_slice(runs) if args.by_slice else markdown_by_tag(runs))
    print()
    print(failures_text(runs))
    for run in runs:
        print(f"\n{run.mode}: {len(run.results)} cases in {run.seconds}s")
    if args.json_out:
        out = {
            run.mode: {
                "summary": run.summary,
                "by_tag": by_tag(run.results),
                "seconds": run.seconds,
                "results": [as_json(r) for r in run.results],
                "traces": run.traces,
            }
            for run in runs
        }
        Path(args.json_out).write_text(json.dumps(out, indent=2, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
