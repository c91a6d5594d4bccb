"""HTTP routes: they only adapt — parse, call the service once, pick JSON or SSE by return type."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
from fastapi import APIRouter, Depends, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import ValidationError
from starlette.types import Receive, Scope, Send

from app.api.chat import CHAT_COMPLETIONS_PATH, CHAT_ROUTES, GROUNDED_ANSWERS_PATH, ChatResult, serve_chat
from app.api.context import serve_context
from app.api.deps import api_call, get_state, request_id, require_auth
from app.api.hit_path import STATE_RECIPE
from app.api.protocol import (
    ChatCompletionRequest,
    ChatCompletionResponse,
    ContextRequest,
    ContextResponse,
    ErrorResponse,
    ModelList,
    ResponseObject,
    ResponsesRequest,
)
from app.api.responses import ResponseResult, get_response, key_scope, serve_response
from app.api.traces import load_trace
from app.errors import NotFound
from app.metrics_export import render_metrics
from app.state import ServiceState

router = APIRouter()
Responses = dict[int | str, dict[str, Any]]
ERROR_RESPONSES: Responses = {
    400: {"model": ErrorResponse, "description": "Invalid request (OpenAI error shape)"},
    401: {"model": ErrorResponse, "description": "Missing or invalid API key"},
}
# FastAPI would document a 422 for a route with parameters; validation errors leave as 400, and
# "4XX" (OpenAI's shape too) takes the 422's place.
OTHER_4XX: Responses = {"4XX": {"model": ErrorResponse, "description": "Other client errors (OpenAI error shape)"}}
# With `stream: true` the 200 is a text/event-stream of chat.completion.chunk events, then
# `data: [DONE]`; app/api/openapi.py publishes the ChatCompletionChunk schema in the components.
CHAT_RESPONSES: Responses = {
    **ERROR_RESPONSES,
    200: {
        "description": "A chat.completion; with stream: true, server-sent chat.completion.chunk events ending with "
        "`data: [DONE]`",
        "content": {
            "text/event-stream": {
                "itemSchema": {
                    "type": "object",
                    "required": ["data"],
                    "properties": {
                        "data": {
                            "type": "string",
                            "contentMediaType": "application/json",
                            # An error after the first byte is one error event (then [DONE]).
                            "contentSchema": {
                                "anyOf": [
                                    {"$ref": "#/components/schemas/ChatCompletionChunk"},
                                    {"$ref": "#/components/schemas/ErrorResponse"},
                                ]
                            },
                        }
                    },
                }
            }
        },
    },
}


async def _answer(
    body: ChatCompletionRequest, state: ServiceState, rid: str, route: str, scope_state: dict[str, Any]
) -> Response:
    result = await serve_chat(body, state, rid, route)
    if isinstance(result, ChatResult):
        if result.recipe is not None:  # a repeat of this request body is served before routing
            scope_state[STATE_RECIPE] = result.recipe
        return result.response()
    return ClosingStreamingResponse(
        result.chunks, media_type="text/event-stream", headers={**result.headers, "Cache-Control": "no-cache"}
    )


class ClosingStreamingResponse(StreamingResponse):
    """A stream whose generator is closed when the response ends, however it ends: a client that
    disconnects while a sentence is on its way leaves the generator suspended, and its upstream
    model stream must be closed now, not when the generator is garbage-collected."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            close = getattr(self.body_iterator, "aclose", None)
            if close is not None:
                with anyio.CancelScope(shield=True):
                    await close()


# The chat body is parsed here rather than as a FastAPI body parameter: pydantic's JSON validator
# on the raw bytes costs a fraction of FastAPI's body and dependency machinery on the answer path
# (measured with an in-process ASGI loop on answer-cache hits). The schema is still documented.
CHAT_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ChatCompletionRequest"}}},
    }
}


async def _chat(request: Request, route: str) -> Response:
    call = await api_call(request)
    try:
        body = ChatCompletionRequest.model_validate_json(await request.body())
    except ValidationError as exc:
        raise RequestValidationError(exc.errors()) from None
    return await _answer(body, call.state, call.request_id, route, request.scope.setdefault("state", {}))


@router.post(
    GROUNDED_ANSWERS_PATH,
    response_model=ChatCompletionResponse,
    responses=CHAT_RESPONSES,
    openapi_extra=CHAT_BODY,
    summary="Answer from web evidence, with citations, or abstain",
)
async def grounded_answers(request: Request) -> Response:
    return await _chat(request, CHAT_ROUTES[GROUNDED_ANSWERS_PATH])


@router.post(
    CHAT_COMPLETIONS_PATH,
    response_model=ChatCompletionResponse,
    responses=CHAT_RESPONSES,
    openapi_extra=CHAT_BODY,
    summary="Same handler, for OpenAI clients (change base_url)",
)
async def chat_completions(request: Request) -> Response:
    return await _chat(request, CHAT_ROUTES[CHAT_COMPLETIONS_PATH])


# With `stream: true` the 200 is a text/event-stream of Responses events (`event: <type>` and
# `data: <json>`); app/api/openapi.py publishes the ResponseStreamEvent schema in the components.
RESPONSES_RESPONSES: Responses = {
    **ERROR_RESPONSES,
    404: {"model": ErrorResponse, "description": "previous_response_id not found for this API key"},
    200: {
        "description": "A response; with stream: true, server-sent Responses events (response.created … "
        "response.completed, response.incomplete or response.failed)",
        "content": {
            "text/event-stream": {
                "itemSchema": {
                    "type": "object",
                    "required": ["event", "data"],
                    "properties": {
                        "event": {"type": "string"},
                        "data": {
                            "type": "string",
                            "contentMediaType": "application/json",
                            "contentSchema": {"$ref": "#/components/schemas/ResponseStreamEvent"},
                        },
                    },
                }
            }
        },
    },
}
RESPONSES_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ResponsesRequest"}}},
    }
}


def _scope(request: Request) -> str:
    return key_scope(getattr(request.state, "caller", None), request.headers.get("authorization"))


@router.post(
    "/v1/responses",
    response_model=ResponseObject,
    responses=RESPONSES_RESPONSES,
    openapi_extra=RESPONSES_BODY,
    summary="The Responses API: the same grounded answer as a `response` (output_text with url_citation)",
)
async def responses(request: Request) -> Response:
    call = await api_call(request)
    try:
        body = ResponsesRequest.model_validate_json(await request.body())
    except ValidationError as exc:
        raise RequestValidationError(exc.errors()) from None
    result = await serve_response(body, call.state, call.request_id, _scope(request))
    if isinstance(result, ResponseResult):
        return Response(orjson.dumps(result.body), media_type="application/json", headers=result.headers)
    return ClosingStreamingResponse(
        result.events, media_type="text/event-stream", headers={**result.headers, "Cache-Control": "no-cache"}
    )


@router.get(
    "/v1/responses/{response_id}",
    response_model=ResponseObject,
    responses={
        401: ERROR_RESPONSES[401],
        404: {"model": ErrorResponse, "description": "No stored response with this id for this API key"},
        **OTHER_4XX,
    },
    summary="A stored response (store: true), for GA_RESPONSES_TTL_S, to the API key that made it",
)
async def retrieve_response(response_id: str, request: Request) -> Response:
    call = await api_call(request)
    body = await get_response(response_id, _scope(request), call.state)
    return Response(orjson.dumps(body), media_type="application/json")


@router.post(
    "/v1/context",
    response_model=ContextResponse,
    responses={**ERROR_RESPONSES, **OTHER_4XX},
    dependencies=[Depends(require_auth)],
    summary="Evidence blocks within a token budget, no composition",
)
async def context(
    body: ContextRequest, state: ServiceState = Depends(get_state), rid: str = Depends(request_id)
) -> Response:
    result = await serve_context(body, state, rid)
    return Response(orjson.dumps(result), media_type="application/json", headers={"X-Request-Id": rid})


@router.get(
    "/v1/models", response_model=ModelList, responses={401: ERROR_RESPONSES[401]}, dependencies=[Depends(require_auth)]
)
async def models(state: ServiceState = Depends(get_state)) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {"id": state.settings.public_model_name, "object": "model", "created": 0, "owned_by": "grounded-answers"}
        ],
    }


@router.get(
    "/v1/traces/{trace_id}",
    dependencies=[Depends(require_auth)],
    responses={
        401: ERROR_RESPONSES[401],
        404: {"model": ErrorResponse, "description": "No trace for this request id"},
        **OTHER_4XX,
    },
)
async def trace(trace_id: str, request: Request, state: ServiceState = Depends(get_state)) -> Response:
    trace = await load_trace(trace_id, state, request.state.caller)
    if trace is None:
        raise NotFound(f"no trace for request {trace_id!r} (expired or never recorded)", param="trace_id")
    return Response(orjson.dumps(trace), media_type="application/json")


SUPPORTED_ROUTES = (
    "POST /v1/chat/completions",
    "POST /v1/grounded-answers",
    "POST /v1/responses",
    "GET /v1/responses/{response_id}",
    "POST /v1/context",
    "GET /v1/models",
    "GET /v1/traces/{request_id}",
)


@router.api_route(
    "/v1/{path:path}",
    methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
    include_in_schema=False,
)
async def unsupported(path: str, request: Request) -> Response:
    """Any other OpenAI route (/v1/completions, /v1/embeddings, /v1/images/…, /v1/audio/…, /v1/files,
    …): 404 in OpenAI's shape, naming what this service supports."""
    raise NotFound(
        f"{request.method} /v1/{path} is not supported by the grounded-answer service; "
        f"supported: {', '.join(SUPPORTED_ROUTES)}",
        param="path",
    )


@router.get("/healthz")
async def healthz() -> dict[str, Any]:
    return {"status": "ok"}


@router.get("/readyz")
async def readyz(state: ServiceState = Depends(get_state)) -> JSONResponse:
    """Ready when search providers are built and, with a model configured, its endpoint answers
    (GET {base}/models, cached GA_READYZ_MODEL_PROBE_TTL_S). 503 names the failing part in `failing`.
    Circuit-breaker states are listed; an open circuit or a down Redis degrades answers (fallbacks,
    abstentions) but does not make the service unready."""
    checks: dict[str, Any] = {
        "search_providers": [p.name for p in state.search],
        "llm": state.settings.llm_enabled,
        "cache": state.cache.name,
    }
    checks["cache_ok"] = await state.cache.ping()
    failing = [] if state.search else ["search_providers"]
    if state.model_probe is not None:
        model = await state.model_probe.check()
        checks["model"] = model
        if not model["ok"]:
            failing.append("model")
    else:
        checks["model"] = {"ok": True, "skipped": "no model configured (extractive composer)"}
    checks["circuits"] = state.breakers.snapshot()
    ready = not failing
    return JSONResponse(
        {"status": "ready" if ready else "not_ready", "failing": failing, "checks": checks},
        status_code=200 if ready else 503,
    )


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"description": "Prometheus text exposition", "content": {"text/plain": {"schema": {"type": "string"}}}}
    },
)
async def metrics_endpoint() -> Response:
    body, content_type = render_metrics()
    return Response(body, media_type=content_type)
