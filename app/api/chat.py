"""Chat serving: one chat request → one pipeline run (through the answer cache and single flight)
→ a JSON body or an SSE stream."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from app import metrics
from app.api.limits import enforce_chat_limits
from app.api.protocol import IGNORABLE_PARAMS, ChatCompletionRequest
from app.api.render import build_body, build_trace, headers_for
from app.api.sse import stream_chunks
from app.api.traces import link_trace, store_trace
from app.cache import answer_cache
from app.pipeline.context import Options, RunContext
from app.pipeline.orchestrator import new_context, run_pipeline
from app.pipeline.plan import default_freshness
from app.pipeline.result import PipelineResult
from app.state import ServiceState

SAMPLING_PARAMS = ("temperature", "top_p", "seed", "stop")
# Citation markers of an earlier answer ([1], [2, 3], [1-2], [S4]): they pointed at that answer's
# sources, so they are removed before the conversation reaches the pipeline and never become evidence.
_MARKERS = re.compile(r"\s*\[(?:S?\d+(?:\s*[,\u2013-]\s*S?\d+)*)\]")


def conversation(req: ChatCompletionRequest) -> list[tuple[str, str]]:
    """(role, text) turns, oldest first; earlier assistant answers without their citation markers."""
    return [
        (m.role, _MARKERS.sub("", m.text()) if m.role == "assistant" else m.text())
        for m in req.messages
        if m.role in ("user", "assistant", "system", "developer")
    ]


@dataclass
class ChatResult:
    """A complete answer, sent as one JSON body."""

    body: dict[str, Any]
    headers: dict[str, str]


@dataclass
class ChatStream:
    """An answer sent as server-sent events."""

    chunks: AsyncIterator[bytes]
    headers: dict[str, str]


async def serve_chat(
    req: ChatCompletionRequest, state: ServiceState, request_id: str, route: str
) -> ChatResult | ChatStream:
    settings = state.settings
    enforce_chat_limits(req, settings)
    options = Options.resolve(
        req.grounding,
        settings,
        temperature=req.temperature,
        top_p=req.top_p,
        seed=req.seed,
        stop=[req.stop] if isinstance(req.stop, str) else req.stop,
        max_tokens=req.max_completion_tokens or req.max_tokens,
    )
    ctx = new_context(request_id, options, settings, state.tokens)
    ctx.ignored_params = sorted(
        set(req.ignored_extras()) | {p for p in IGNORABLE_PARAMS if p in (req.model_extra or {})}
    )
    turns = conversation(req)
    model = req.model or settings.public_model_name

    async def answer() -> tuple[dict[str, Any], dict[str, str]]:
        result = await run_pipeline(turns, ctx, state)
        if result.composer.startswith("extractive"):
            ctx.ignored_params = sorted(
                set(ctx.ignored_params) | {p for p in SAMPLING_PARAMS if getattr(req, p) is not None}
            )
        body = build_body(result, model, request_id, turns)
        await store_trace(request_id, build_trace(result, body), state)
        return body, _versions(result)

    metrics.IN_FLIGHT.inc()
    try:
        body = await _answer_with_cache(answer, turns, ctx, state, request_id)
    finally:
        metrics.IN_FLIGHT.dec()
    body["model"] = model
    # This request's parameters, also when the answer is another request's (cache hit, coalesced).
    ignored = set(ctx.ignored_params)
    if body["grounding"]["composer"].startswith("extractive"):
        ignored |= {p for p in SAMPLING_PARAMS if getattr(req, p) is not None}
    body["grounding"]["ignored_params"] = sorted(ignored)
    headers = headers_for(body, request_id)
    metrics.labelled(metrics.REQUESTS, route, "200", body["grounding"]["status"]).inc()
    if req.stream:
        include_usage = bool((req.stream_options or {}).get("include_usage"))
        return ChatStream(stream_chunks(body, include_usage), headers)
    return ChatResult(body, headers)


async def _answer_with_cache(
    answer: Callable[[], Awaitable[tuple[dict[str, Any], dict[str, str]]]],
    turns: list[tuple[str, str]],
    ctx: RunContext,
    state: ServiceState,
    request_id: str,
) -> dict[str, Any]:
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
            await link_trace(entry[0]["grounding"]["request_id"], request_id, state)
            return answer_cache.restamp(entry[0], request_id=request_id, created=created, how="hit")
    (body, versions), how = await state.flights.cached(
        key,
        state.cache,
        layer="answer",
        compute=answer,
        read=False,
        wait_s=ctx.remaining(),
        encode=lambda v: answer_cache.encode_answer(*v) if v[0]["grounding"]["status"] == "grounded" else None,
        decode=answer_cache.decode_answer,
        ttl_s=settings.search_cache_ttl(window),
    )
    if how == "coalesced":
        await link_trace(body["grounding"]["request_id"], request_id, state)
        return answer_cache.restamp(body, request_id=request_id, created=created, how="coalesced")
    body["grounding"]["cache"]["answer"] = "miss"
    return body


def _versions(result: PipelineResult) -> dict[str, str]:
    """Content hashes of the fetched (cacheable) pages the evidence came from."""
    fetched = {p.url for p in result.pages if p.reason.value in ("ok", "not_modified", "cached")}
    return {d_url: h for d_url, h in result.evidence_versions.items() if d_url in fetched}
