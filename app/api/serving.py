"""Serving: turn one chat request into a pipeline run and its result into a chat.completion (JSON)
or a chat.completion.chunk stream (SSE)."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import AsyncIterator

import orjson

from app import metrics
from app.api.protocol import IGNORABLE_PARAMS, ChatCompletionRequest
from app.pipeline.context import Options
from app.cache import answer_cache
from app.pipeline.orchestrator import new_context, run_pipeline
from app.pipeline.plan import default_freshness
from app.pipeline.result import PipelineResult
from app.domain.types import Claim, Evidence
from app.state import ServiceState

SAMPLING_PARAMS = ("temperature", "top_p", "seed", "stop")


@dataclass
class Completion:
    body: dict
    headers: dict[str, str]


@dataclass
class CompletionStream:
    chunks: AsyncIterator[bytes]
    headers: dict[str, str]


async def serve_chat(req: ChatCompletionRequest, state: ServiceState, request_id: str, route: str) -> Completion | CompletionStream:
    settings = state.settings
    options = Options.resolve(
        req.grounding, settings, temperature=req.temperature, top_p=req.top_p, seed=req.seed,
        stop=[req.stop] if isinstance(req.stop, str) else req.stop, max_tokens=req.max_completion_tokens or req.max_tokens)
    ctx = new_context(request_id, options, settings, state.tokens)
    ctx.ignored_params = sorted(set(req.ignored_extras()) | {p for p in IGNORABLE_PARAMS if p in (req.model_extra or {})})
    turns = [(m.role, m.text()) for m in req.messages if m.role in ("user", "assistant", "system", "developer")]
    model = req.model or settings.public_model_name

    async def answer() -> tuple[dict, dict[str, str]]:
        result = await run_pipeline(turns, ctx, state)
        if result.composer.startswith("extractive"):
            ctx.ignored_params = sorted(set(ctx.ignored_params) | {p for p in SAMPLING_PARAMS if getattr(req, p) is not None})
        body = build_body(result, model, request_id)
        await state.cache.set(f"trace:{request_id}", orjson.dumps(build_trace(result, body)), settings.trace_ttl_s)
        return body, _versions(result)

    metrics.IN_FLIGHT.inc()
    try:
        body = await _answer_with_cache(answer, turns, ctx, state, request_id)
    finally:
        metrics.IN_FLIGHT.dec()
    body["model"] = model
    headers = headers_for(body, request_id)
    metrics.labelled(metrics.REQUESTS, route, "200", body["grounding"]["status"]).inc()
    if req.stream:
        include_usage = bool((req.stream_options or {}).get("include_usage"))
        return CompletionStream(stream_chunks(body, include_usage), headers)
    return Completion(body, headers)


def _source_list(result: PipelineResult) -> list[dict]:
    cited_no = {e.url: i for i, e in enumerate(result.cited, 1)}
    seen: dict[str, dict] = {}
    for ev in result.evidence:
        if ev.url in seen:
            continue
        seen[ev.url] = {
            "id": cited_no.get(ev.url), "span_id": ev.span_id, "url": ev.url, "title": ev.title, "domain": ev.domain,
            "published_at": ev.published_at.isoformat() if ev.published_at else None, "date_source": ev.date_source,
            "fetched_at": ev.fetched_at.isoformat() if ev.fetched_at else None, "score": ev.score,
            "primary": ev.primary, "also_reported_by": ev.also_reported_by, "via": ev.via,
        }
    return list(seen.values())


def _claim(c: Claim) -> dict:
    return {"text": c.text, "source_ids": c.markers, "span_ids": c.span_ids, "quote": c.quote,
            "supported": c.supported, "support_score": c.support, "factual": c.factual, "judged": c.judged}


def build_body(result: PipelineResult, model: str, request_id: str) -> dict:
    ctx = result.ctx
    content = result.content
    annotations = []
    # An abstention's content is the non-answer: its draft's claims stay in grounding, unannotated.
    for claim in (result.claims if result.abstention is None else []):
        for n in claim.markers:
            ev: Evidence = result.cited[n - 1]
            annotations.append({"type": "url_citation", "url_citation": {
                "url": ev.url, "title": ev.title, "start_index": claim.start, "end_index": claim.end}})
    ab = result.abstention
    prompt, completion = ctx.cost.prompt_tokens, ctx.cost.completion_tokens
    if completion == 0 and content:
        completion = ctx.tokens.count(content) if ctx.tokens else len(content.split())
    return {
        "id": "chatcmpl-" + request_id.removeprefix("req_"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "annotations": annotations,
                                             "refusal": None},
                     "finish_reason": result.finish_reason, "logprobs": None}],
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
            "conflicts": [{"attribute": c.attribute, "values": c.values, "policy": ctx.options.on_conflict}
                          for c in result.conflicts],
            "abstention": None if ab is None else {
                "reason": ab.reason.value, "message": ab.message, "failed_checks": ab.failed_checks,
                "queries_run": ab.queries_run, "links_found": ab.links_found},
            "groundedness": result.groundedness,
            "filtered": result.search.filtered if result.search else {},
            "selection": [{"url": d.url, "decision": d.decision, "reason": d.reason}
                          for d in (result.selection.decisions if result.selection else []) if d.decision != "kept"],
            "search_errors": result.search.errors if result.search else [],
            "fetches": [{"url": p.requested_url, "final_url": p.url, "outcome": p.reason.value, "status": p.status}
                        for p in result.pages],
            "cost": ctx.cost.as_dict(),
            "cache": dict(ctx.cache),
            "timings_ms": {**ctx.timings_ms, "total": round((time.monotonic() - ctx.started) * 1000, 3)},
            "ignored_params": ctx.ignored_params,
            "request_id": request_id,
        },
    }


async def _answer_with_cache(answer, turns, ctx, state: ServiceState, request_id: str) -> dict:
    """Serve from the answer cache when the freshness class allows and the evidence is unchanged;
    concurrent identical questions run the pipeline once."""
    opts, settings = ctx.options, state.settings
    window = opts.freshness_days or default_freshness(turns[-1][1], settings.default_freshness_days)
    if opts.cache == "bypass" or not answer_cache.cacheable(window):
        body, _ = await answer()
        return body
    key = answer_cache.answer_key(turns, opts, settings)
    created = int(time.time())
    if opts.cache == "use" and (raw := await state.cache.get(key)):
        entry = answer_cache.decode_answer(raw)
        if entry and await answer_cache.still_valid(entry[1], state.cache):
            metrics.labelled(metrics.CACHE_LOOKUPS, "answer", "hit").inc()
            await _link_trace(entry[0]["grounding"]["request_id"], request_id, state)
            return answer_cache.restamp(entry[0], request_id=request_id, created=created, how="hit")
    (body, versions), how = await state.flights.cached(
        key, state.cache, layer="answer", compute=answer, read=False, wait_s=ctx.remaining(),
        encode=lambda v: answer_cache.encode_answer(*v) if v[0]["grounding"]["status"] == "grounded" else None,
        decode=answer_cache.decode_answer, ttl_s=settings.search_cache_ttl(window))
    if how == "coalesced":
        await _link_trace(body["grounding"]["request_id"], request_id, state)
        return answer_cache.restamp(body, request_id=request_id, created=created, how="coalesced")
    body["grounding"]["cache"]["answer"] = "miss"
    return body


async def _link_trace(original_id: str, request_id: str, state: ServiceState) -> None:
    """A cached answer's trace is the trace of the run that produced it: store a pointer (cheap on
    the hit path); GET /v1/traces follows it."""
    pointer = {"request_id": request_id, "served_from": "answer_cache", "original_request_id": original_id}
    await state.cache.set(f"trace:{request_id}", orjson.dumps(pointer), state.settings.trace_ttl_s)


async def load_trace(request_id: str, state: ServiceState) -> dict | None:
    raw = await state.cache.get(f"trace:{request_id}")
    if raw is None:
        return None
    trace = orjson.loads(raw)
    if trace.get("served_from") == "answer_cache":
        original = await state.cache.get(f"trace:{trace['original_request_id']}")
        trace = {**(orjson.loads(original) if original else {}), **trace}
    return trace


def _versions(result: PipelineResult) -> dict[str, str]:
    """Content hashes of the fetched (cacheable) pages the evidence came from."""
    fetched = {p.url for p in result.pages if p.reason.value in ("ok", "not_modified", "cached")}
    return {d_url: h for d_url, h in result.evidence_versions.items() if d_url in fetched}


def headers_for(body: dict, request_id: str) -> dict[str, str]:
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


async def stream_chunks(body: dict, include_usage: bool) -> AsyncIterator[bytes]:
    """Stream after verification: the content is final, sent sentence by sentence; the last
    chunk carries citations and grounding."""
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}

    def event(payload: dict) -> bytes:
        return b"data: " + orjson.dumps(payload) + b"\n\n"

    message = body["choices"][0]["message"]
    yield event({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})
    content = message["content"]
    pieces = _pieces(content)
    for piece in pieces:
        yield event({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    final = {**base, "choices": [{"index": 0, "delta": {"annotations": message["annotations"]} if message["annotations"] else {},
                                  "finish_reason": body["choices"][0]["finish_reason"]}],
             "citations": body["citations"], "grounding": body["grounding"]}
    yield event(final)
    if include_usage:
        yield event({**base, "choices": [], "usage": body["usage"]})
    yield b"data: [DONE]\n\n"


def _pieces(content: str) -> list[str]:
    """Sentence-sized pieces whose concatenation is exactly `content`."""
    parts = re.split(r"(?<=[.!?]) ", content)
    return [p + " " for p in parts[:-1]] + [parts[-1]] if content else []


def build_trace(result: PipelineResult, body: dict) -> dict:
    """Everything needed to explain the answer: plan, raw results, fetches, decisions, verdicts."""
    search = result.search
    return {
        "request_id": body["grounding"]["request_id"],
        "route": body["grounding"]["route"],
        "plan": {"queries": result.plan.queries, "freshness_days": result.plan.freshness_days, "by": result.plan.by,
                 "question": result.plan.question} if result.plan else None,
        "search": [{"provider": r.provider, "query": r.query, "unresponsive_engines": r.unresponsive_engines,
                    "elapsed_ms": round(r.elapsed_ms, 2),
                    "hits": [{"url": h.url, "title": h.title, "rank": h.rank} for h in r.hits]}
                   for r in (search.results if search else [])],
        "search_errors": search.errors if search else [],
        "candidates": [h.url for h in (search.candidates if search else [])],
        "fetches": body["grounding"]["fetches"],
        "selection": [{"url": d.url, "decision": d.decision, "reason": d.reason}
                      for d in (result.selection.decisions if result.selection else [])],
        "evidence": [{"span_id": e.span_id, "url": e.url, "title": e.title, "section": e.section, "kind": e.kind,
                      "score": e.score, "tokens": e.tokens, "text": e.text}
                     for e in result.evidence],
        "evidence_tokens": result.selection.prompt_tokens if result.selection else 0,
        "conflicts": body["grounding"]["conflicts"],
        "claims": body["grounding"]["claims"],
        "dropped_claims": body["grounding"]["dropped_claims"],
        "status": body["grounding"]["status"],
        "abstention": body["grounding"]["abstention"],
        "answerability": ({"score": result.answerability.score, "reasons": result.answerability.reasons}
                          if result.answerability else None),
        "timings_ms": body["grounding"]["timings_ms"],
        "cost": body["grounding"]["cost"],
    }


async def serve_context(req, state: ServiceState, request_id: str) -> dict:
    from app.api.protocol import GroundingOptions
    from app.pipeline.orchestrator import gather_context

    g = GroundingOptions(include_domains=req.include_domains, exclude_domains=req.exclude_domains,
                         freshness_days=req.freshness_days, max_fetches=req.depth, max_evidence=30,
                         token_budget=req.token_budget, cache=req.cache)
    ctx = new_context(request_id, Options.resolve(g, state.settings), state.settings, state.tokens)
    the_plan, selection = await gather_context(req.query, ctx, state)
    blocks = [{"text": e.text, "url": e.url, "title": e.title,
               "published_at": e.published_at.isoformat() if e.published_at else None,
               "score": e.score, "tokens": e.tokens, "also_reported_by": e.also_reported_by}
              for e in selection.evidence]
    return {"blocks": blocks, "total_tokens": sum(b["tokens"] for b in blocks), "request_id": request_id,
            "queries": the_plan.queries, "cost": ctx.cost.as_dict()}
