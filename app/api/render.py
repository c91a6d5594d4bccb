"""Render: a pipeline result → the wire (the chat.completion body, the X-Grounding-* headers, the
stored trace). What these dicts hold is what app/api/protocol.py's response models describe."""

from __future__ import annotations

import time
from typing import Any

from app.domain.types import Claim, Evidence
from app.pipeline.result import PipelineResult


def _source_list(result: PipelineResult) -> list[dict[str, Any]]:
    cited_no = {e.url: i for i, e in enumerate(result.cited, 1)}
    seen: dict[str, dict[str, Any]] = {}
    for ev in result.evidence:
        if ev.url in seen:
            continue
        seen[ev.url] = {
            "id": cited_no.get(ev.url),
            "span_id": ev.span_id,
            "url": ev.url,
            "title": ev.title,
            "domain": ev.domain,
            "published_at": ev.published_at.isoformat() if ev.published_at else None,
            "date_source": ev.date_source,
            "fetched_at": ev.fetched_at.isoformat() if ev.fetched_at else None,
            "score": ev.score,
            "primary": ev.primary,
            "also_reported_by": ev.also_reported_by,
            "via": ev.via,
        }
    return list(seen.values())


def _claim(c: Claim) -> dict[str, Any]:
    return {
        "text": c.text,
        "source_ids": c.markers,
        "span_ids": c.span_ids,
        "quote": c.quote,
        "supported": c.supported,
        "support_score": c.support,
        "factual": c.factual,
        "judged": c.judged,
    }


def build_body(result: PipelineResult, model: str, request_id: str) -> dict[str, Any]:
    ctx = result.ctx
    content = result.content
    annotations = []
    # An abstention's content is the non-answer: its draft's claims stay in grounding, unannotated.
    for claim in result.claims if result.abstention is None else []:
        for n in claim.markers:
            ev: Evidence = result.cited[n - 1]
            annotations.append(
                {
                    "type": "url_citation",
                    "url_citation": {
                        "url": ev.url,
                        "title": ev.title,
                        "start_index": claim.start,
                        "end_index": claim.end,
                    },
                }
            )
    ab = result.abstention
    prompt, completion = ctx.cost.prompt_tokens, ctx.cost.completion_tokens
    if completion == 0 and content:
        completion = ctx.tokens.count(content) if ctx.tokens else len(content.split())
    return {
        "id": "chatcmpl-" + request_id.removeprefix("req_"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "annotations": annotations, "refusal": None},
                "finish_reason": result.finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        "citations": [e.url for e in result.cited],
        "grounding": {
            "status": result.status.value,
            "composer": result.composer,
            "route": {"needs_search": result.route.needs_search, "reason": result.route.reason, "by": result.route.by},
            "queries": result.plan.queries if result.plan else [],
            "freshness_days": result.plan.freshness_days if result.plan else None,
            "sources": _source_list(result),
            "claims": [_claim(c) for c in result.claims],
            "dropped_claims": [_claim(c) for c in result.dropped_claims],
            "conflicts": [
                {"attribute": c.attribute, "values": c.values, "policy": ctx.options.on_conflict}
                for c in result.conflicts
            ],
            "abstention": None
            if ab is None
            else {
                "reason": ab.reason.value,
                "message": ab.message,
                "failed_checks": ab.failed_checks,
                "queries_run": ab.queries_run,
                "links_found": ab.links_found,
            },
            "groundedness": result.groundedness,
            "filtered": result.search.filtered if result.search else {},
            "selection": [
                {"url": d.url, "decision": d.decision, "reason": d.reason}
                for d in (result.selection.decisions if result.selection else [])
                if d.decision != "kept"
            ],
            "search_errors": result.search.errors if result.search else [],
            "fetches": [
                {"url": p.requested_url, "final_url": p.url, "outcome": p.reason.value, "status": p.status}
                for p in result.pages
            ],
            "cost": ctx.cost.as_dict(),
            "cache": dict(ctx.cache),
            "timings_ms": {**ctx.timings_ms, "total": round((time.monotonic() - ctx.started) * 1000, 3)},
            "ignored_params": ctx.ignored_params,
            "request_id": request_id,
        },
    }


def headers_for(body: dict[str, Any], request_id: str) -> dict[str, str]:
    g = body["grounding"]
    cost = g["cost"]
    return {
        "X-Request-Id": request_id,
        "X-Grounding-Status": g["status"],
        "X-Grounding-Cost-USD": f"{cost['usd']:.6f}",
        "X-Grounding-Prompt-Tokens": str(cost["prompt_tokens"]),
        "X-Grounding-Completion-Tokens": str(cost["completion_tokens"]),
        "X-Grounding-Searches": str(cost["search_calls"]),
        "X-Grounding-Fetches": str(cost["fetches"]),
        "X-Grounding-Cache": ",".join(f"{k}={v}" for k, v in sorted(g["cache"].items())) or "none",
    }


def build_trace(result: PipelineResult, body: dict[str, Any]) -> dict[str, Any]:
    """Everything needed to explain the answer: plan, raw results, fetches, decisions, verdicts."""
    search = result.search
    return {
        "request_id": body["grounding"]["request_id"],
        "route": body["grounding"]["route"],
        "plan": {
            "queries": result.plan.queries,
            "freshness_days": result.plan.freshness_days,
            "by": result.plan.by,
            "question": result.plan.question,
        }
        if result.plan
        else None,
        "search": [
            {
                "provider": r.provider,
                "query": r.query,
                "unresponsive_engines": r.unresponsive_engines,
                "elapsed_ms": round(r.elapsed_ms, 2),
                "hits": [{"url": h.url, "title": h.title, "rank": h.rank} for h in r.hits],
            }
            for r in (search.results if search else [])
        ],
        "search_errors": search.errors if search else [],
        "candidates": [h.url for h in (search.candidates if search else [])],
        "fetches": body["grounding"]["fetches"],
        "selection": [
            {"url": d.url, "decision": d.decision, "reason": d.reason}
            for d in (result.selection.decisions if result.selection else [])
        ],
        "evidence": [
            {
                "span_id": e.span_id,
                "url": e.url,
                "title": e.title,
                "section": e.section,
                "kind": e.kind,
                "score": e.score,
                "tokens": e.tokens,
                "text": e.text,
            }
            for e in result.evidence
        ],
        "evidence_tokens": result.selection.prompt_tokens if result.selection else 0,
        "conflicts": body["grounding"]["conflicts"],
        "claims": body["grounding"]["claims"],
        "dropped_claims": body["grounding"]["dropped_claims"],
        "status": body["grounding"]["status"],
        "abstention": body["grounding"]["abstention"],
        "answerability": (
            {"score": result.answerability.score, "reasons": result.answerability.reasons}
            if result.answerability
            else None
        ),
        "timings_ms": body["grounding"]["timings_ms"],
        "cost": body["grounding"]["cost"],
    }
