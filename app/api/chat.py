"""Chat serving: one chat request → one pipeline run (through the answer cache and single flight)
→ a JSON body or an SSE stream."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.responses import Response

from app import metrics
from app.api.limits import enforce_chat_limits
from app.api.protocol import IGNORABLE_PARAMS, ChatCompletionRequest
from app.api.quota import publish_cost
from app.api.render import build_body, build_trace, headers_for
from app.api.sse import chunk_base, content_chunk, error_events, role_chunk, stream_chunks, tail
from app.api.traces import link_trace, store_trace
from app.cache import answer_cache
from app.language.text import strip_markers
from app.pipeline.context import Options, RunContext
from app.pipeline.orchestrator import new_context, run_pipeline
from app.pipeline.plan import default_freshness
from app.pipeline.result import PipelineResult
from app.pipeline.stream import Release, stream_pipeline
from app.state import ServiceState

SAMPLING_PARAMS = ("temperature", "top_p", "seed", "stop")

GROUNDED_ANSWERS_PATH = "/v1/grounded-answers"
CHAT_COMPLETIONS_PATH = "/v1/chat/completions"
# The two chat paths (one handler) and the route names their metrics use; the routes and the hit path
# both read them from here.
CHAT_ROUTES = {GROUNDED_ANSWERS_PATH: "grounded-answers", CHAT_COMPLETIONS_PATH: "chat-completions"}


def conversation(req: ChatCompletionRequest) -> list[tuple[str, str]]:
    """(role, text) turns, oldest first; earlier assistant answers without their citation markers."""
    return [
        (m.role, strip_markers(m.text()) if m.role == "assistant" else m.text())
        for m in req.messages
        if m.role in ("user", "assistant", "system", "developer")
    ]


@dataclass(frozen=True, slots=True)
class HitRecipe:
    """What serving this request's JSON answer again takes once the answer is in the answer cache:
    the cache key and the request's own fields of the body. The same request body always gives the
    same recipe (settings are fixed per process), so the hit path (app/api/hit_path.py) keeps it by
    the body's digest and skips parsing, validation and routing on a repeat."""

    key: str
    model: str
    ignored: tuple[str, ...]  # parameters this request sent that no composer uses
    sampling: tuple[str, ...]  # sampling parameters sent: ignored too when the composer is extractive


@dataclass
class ChatResult:
    """A complete answer, sent as one JSON body; `recipe` when a repeat can be served from cache."""

    body: dict[str, Any]
    headers: dict[str, str]
    recipe: HitRecipe | None = None

    def response(self) -> Response:
        return Response(orjson.dumps(self.body), media_type="application/json", headers=self.headers)


@dataclass
class ChatStream:
    """An answer sent as server-sent events. `items` is the same answer before formatting (the
    released sentences as str, then the final chat.completion body as a dict), for the Responses
    API's stream; a caller reads either `chunks` or `items`, never both."""

    chunks: AsyncIterator[bytes]
    headers: dict[str, str]
    items: AsyncGenerator[str | dict[str, Any], None]


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
    ctx = new_context(request_id, options, settings, state.tokens, state.cpu)
    publish_cost(ctx.cost)  # the key's daily budget is charged from this ledger once the response is sent
    ctx.ignored_params = sorted(
        set(req.ignored_extras()) | {p for p in IGNORABLE_PARAMS if p in (req.model_extra or {})}
    )
    turns = conversation(req)
    model = req.model or settings.public_model_name

    async def render(result: PipelineResult) -> tuple[dict[str, Any], dict[str, str]]:
        if result.composer.startswith("extractive"):
            ctx.ignored_params = sorted(
                set(ctx.ignored_params) | {p for p in SAMPLING_PARAMS if getattr(req, p) is not None}
            )
        body = build_body(result, model, request_id, turns)
        await store_trace(request_id, build_trace(result, body), state)
        return body, _versions(result)

    async def answer() -> tuple[dict[str, Any], dict[str, str]]:
        return await render(await run_pipeline(turns, ctx, state))

    sampling = tuple(p for p in SAMPLING_PARAMS if getattr(req, p) is not None)
    ignored = tuple(ctx.ignored_params)

    def finish(body: dict[str, Any]) -> dict[str, Any]:
        # This request's parameters, also when the answer is another request's (cache hit, coalesced).
        return finish_body(body, model, ignored, sampling)

    include_usage = bool((req.stream_options or {}).get("include_usage"))
    keyed = _cache_key(turns, ctx, state)
    if req.stream:
        # Verified sentences as the model writes them, unless the answer cache has the whole answer.
        hit = await _cache_hit(keyed, ctx, state, request_id)
        if hit is None:
            return await _verified_stream(turns, ctx, state, _Finisher(render, finish, route, include_usage, model))
        body = hit
    else:
        metrics.IN_FLIGHT.inc()
        try:
            body = await _answer_with_cache(answer, keyed, ctx, state, request_id)
        finally:
            metrics.IN_FLIGHT.dec()
    body, headers = _respond(body, (model, ignored, sampling), route, request_id)
    if req.stream:
        return ChatStream(stream_chunks(body, include_usage), headers, _whole(body))
    recipe = None
    if keyed is not None and ctx.options.cache == "use" and body["grounding"]["status"] == "grounded":
        recipe = HitRecipe(keyed[0], model, ignored, sampling)  # only grounded answers are cached
    return ChatResult(body, headers, recipe)


def finish_body(
    body: dict[str, Any], model: str, ignored: tuple[str, ...], sampling: tuple[str, ...]
) -> dict[str, Any]:
    """The request's own fields of an answer body (the answer may be another request's)."""
    body["model"] = model
    extra = set(ignored)
    if body["grounding"]["composer"].startswith("extractive"):
        extra.update(sampling)
    body["grounding"]["ignored_params"] = sorted(extra)
    return body


async def serve_cached(recipe: HitRecipe, route: str, state: ServiceState, request_id: str) -> ChatResult | None:
    """The hit path's answer: the cached answer under `recipe.key` as this request's response, or
    None (not cached, expired, or its evidence changed) and the request takes the full route."""
    hit = await cached_answer(recipe.key, state, request_id)
    if hit is None:
        return None
    fields = (recipe.model, recipe.ignored, recipe.sampling)
    return ChatResult(*_respond(hit, fields, route, request_id), recipe)


def _respond(
    body: dict[str, Any], fields: tuple[str, tuple[str, ...], tuple[str, ...]], route: str, request_id: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """The end of every complete answer, the route's and the hit path's: the request's own fields
    (model, ignored and sampling parameters: finish_body), its count and its headers."""
    body = finish_body(body, *fields)
    metrics.labelled(metrics.REQUESTS, route, "200", body["grounding"]["status"]).inc()
    return body, headers_for(body, request_id)


async def _whole(body: dict[str, Any]) -> AsyncGenerator[str | dict[str, Any], None]:
    """An answer already final as stream items: nothing released early, then the body."""
    yield body


@dataclass(frozen=True)
class _Finisher:
    """What turns a streamed pipeline result into the final chunk's body."""

    render: Callable[[PipelineResult], Awaitable[tuple[dict[str, Any], dict[str, str]]]]
    finish: Callable[[dict[str, Any]], dict[str, Any]]
    route: str
    include_usage: bool
    model: str


async def _verified_stream(
    turns: list[tuple[str, str]], ctx: RunContext, state: ServiceState, fin: _Finisher
) -> ChatStream:
    """A stream of verified sentences as the model writes them. The response starts with the first
    one (or the whole answer when there is no model stream), so an error before it is an HTTP error."""
    metrics.IN_FLIGHT.inc()
    events = stream_pipeline(turns, ctx, state)
    try:
        first = await anext(events)
    except BaseException:
        metrics.IN_FLIGHT.dec()
        await events.aclose()
        raise
    if isinstance(first, PipelineResult):  # no model stream: the whole answer, sent at once
        try:
            await events.aclose()
            body = fin.finish(await _store(await fin.render(first), turns, ctx, state))
        finally:
            metrics.IN_FLIGHT.dec()
        metrics.labelled(metrics.REQUESTS, fin.route, "200", body["grounding"]["status"]).inc()
        return ChatStream(stream_chunks(body, fin.include_usage), headers_for(body, ctx.request_id), _whole(body))
    # The status the released sentence had; the final chunk's grounding is the answer's.
    headers = {"X-Request-Id": ctx.request_id, "X-Grounding-Status": "grounded"}
    items = _released(first, events, turns, ctx, state, fin)
    return ChatStream(_sse(items, ctx, fin), headers, items)


async def _released(
    first: Release,
    events: AsyncGenerator[Release | PipelineResult, None],
    turns: list[tuple[str, str]],
    ctx: RunContext,
    state: ServiceState,
    fin: _Finisher,
) -> AsyncGenerator[str | dict[str, Any], None]:
    """The released sentences, then the final body; raises what fails after the first one."""
    status = "error"
    try:
        item: Release | PipelineResult = first
        while isinstance(item, Release):
            yield item.text
            item = await anext(events)
        body = fin.finish(await _store(await fin.render(item), turns, ctx, state))
        status = body["grounding"]["status"]
        yield body
    finally:
        await events.aclose()
        metrics.IN_FLIGHT.dec()
        metrics.labelled(metrics.REQUESTS, fin.route, "200", status).inc()


async def _sse(
    items: AsyncGenerator[str | dict[str, Any], None], ctx: RunContext, fin: _Finisher
) -> AsyncIterator[bytes]:
    base = chunk_base("chatcmpl-" + ctx.request_id.removeprefix("req_"), int(time.time()), fin.model)
    sent = ""
    try:
        yield role_chunk(base)
        async for item in items:
            if isinstance(item, str):
                sent += item
                yield content_chunk(base, item)
            else:
                for chunk in tail(item, sent, fin.include_usage, base):
                    yield chunk
    except Exception as exc:  # after the first byte: an error event, then [DONE]
        yield error_events(exc)
    finally:
        await items.aclose()


def _cache_key(turns: list[tuple[str, str]], ctx: RunContext, state: ServiceState) -> tuple[str, int] | None:
    """The answer-cache key and freshness window, when the freshness class and options allow caching."""
    opts, settings = ctx.options, state.settings
    window = opts.freshness_days or default_freshness(turns[-1][1], settings.default_freshness_days)
    if opts.cache == "bypass" or not answer_cache.cacheable(window):
        return None
    return answer_cache.answer_key(turns, opts, settings), window


async def _cache_hit(
    keyed: tuple[str, int] | None, ctx: RunContext, state: ServiceState, request_id: str
) -> dict[str, Any] | None:
    """The cached answer under `keyed` (_cache_key's result), when the options read the cache."""
    if keyed is None or ctx.options.cache != "use":
        return None
    return await cached_answer(keyed[0], state, request_id)


async def cached_answer(key: str, state: ServiceState, request_id: str) -> dict[str, Any] | None:
    """The answer cached under `key` as this request's body, when there is one and its evidence
    pages are unchanged."""
    if not (raw := await state.cache.get(key)):
        return None
    entry = answer_cache.decode_answer(raw)
    if entry and await answer_cache.still_valid(entry[1], state.cache):
        metrics.labelled(metrics.CACHE_LOOKUPS, "answer", "hit").inc()
        await link_trace(entry[0]["grounding"]["request_id"], request_id, state)
        return answer_cache.restamp(entry[0], request_id=request_id, created=int(time.time()), how="hit")
    return None


async def _store(
    rendered: tuple[dict[str, Any], dict[str, str]], turns: list[tuple[str, str]], ctx: RunContext, state: ServiceState
) -> dict[str, Any]:
    """A streamed answer into the answer cache (grounded ones), as the single flight stores the others."""
    body, versions = rendered
    keyed = _cache_key(turns, ctx, state)
    if keyed is not None:
        if body["grounding"]["status"] == "grounded":
            await state.cache.set(
                keyed[0], answer_cache.encode_answer(body, versions), state.settings.search_cache_ttl(keyed[1])
            )
        body["grounding"]["cache"]["answer"] = "miss"
    return body


async def _answer_with_cache(
    answer: Callable[[], Awaitable[tuple[dict[str, Any], dict[str, str]]]],
    keyed: tuple[str, int] | None,
    ctx: RunContext,
    state: ServiceState,
    request_id: str,
) -> dict[str, Any]:
    """Serve from the answer cache (under `keyed`, _cache_key's result) when the freshness class
    allows and the evidence is unchanged; concurrent identical questions run the pipeline once."""
    if keyed is None:
        body, _ = await answer()
        return body
    key, window = keyed
    if (hit := await _cache_hit(keyed, ctx, state, request_id)) is not None:
        return hit
    (body, versions), how = await state.flights.cached(
        key,
        state.cache,
        layer="answer",
        compute=answer,
        read=False,
        wait_s=ctx.remaining(),
        encode=lambda v: answer_cache.encode_answer(*v) if v[0]["grounding"]["status"] == "grounded" else None,
        decode=answer_cache.decode_answer,
        ttl_s=state.settings.search_cache_ttl(window),
    )
    if how == "coalesced":
        await link_trace(body["grounding"]["request_id"], request_id, state)
        return answer_cache.restamp(body, request_id=request_id, created=int(time.time()), how="coalesced")
    body["grounding"]["cache"]["answer"] = "miss"
    return body


def _versions(result: PipelineResult) -> dict[str, str]:
    """Content hashes of the fetched (cacheable) pages the evidence came from."""
    fetched = {p.url for p in result.pages if p.reason.value in ("ok", "not_modified", "cached")}
    return {d_url: h for d_url, h in result.evidence_versions.items() if d_url in fetched}
