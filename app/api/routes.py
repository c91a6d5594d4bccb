"""HTTP routes: they only adapt — parse, call the service once, pick JSON or SSE by return type."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Depends, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import ValidationError

from app.api.chat import ChatResult, serve_chat
from app.api.context import serve_context
from app.api.deps import api_call, get_state, request_id, require_auth
from app.api.protocol import (
    ChatCompletionRequest,
    ChatCompletionResponse,
    ContextRequest,
    ContextResponse,
    ErrorResponse,
    ModelList,
)
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
                            "contentSchema": {"$ref": "#/components/schemas/ChatCompletionChunk"},
                        }
                    },
                }
            }
        },
    },
}


async def _answer(body: ChatCompletionRequest, state: ServiceState, rid: str, route: str) -> Response:
    result = await serve_chat(body, state, rid, route)
    if isinstance(result, ChatResult):
        return Response(orjson.dumps(result.body), media_type="application/json", headers=result.headers)
    return StreamingResponse(
        result.chunks, media_type="text/event-stream", headers={**result.headers, "Cache-Control": "no-cache"}
    )


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
    return await _answer(body, call.state, call.request_id, route)


@router.post(
    "/v1/grounded-answers",
    response_model=ChatCompletionResponse,
    responses=CHAT_RESPONSES,
    openapi_extra=CHAT_BODY,
    summary="Answer from web evidence, with citations, or abstain",
)
async def grounded_answers(request: Request) -> Response:
    return await _chat(request, "grounded-answers")


@router.post(
    "/v1/chat/completions",
    response_model=ChatCompletionResponse,
    responses=CHAT_RESPONSES,
    openapi_extra=CHAT_BODY,
    summary="Same handler, for OpenAI clients (change base_url)",
)
async def chat_completions(request: Request) -> Response:
    return await _chat(request, "chat-completions")


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
async def trace(trace_id: str, state: ServiceState = Depends(get_state)) -> Response:
    trace = await load_trace(trace_id, state)
    if trace is None:
        raise NotFound(f"no trace for request {trace_id!r} (expired or never recorded)", param="trace_id")
    return Response(orjson.dumps(trace), media_type="application/json")


@router.get("/healthz")
async def healthz() -> dict[str, Any]:
    return {"status": "ok"}


@router.get("/readyz")
async def readyz(state: ServiceState = Depends(get_state)) -> JSONResponse:
    checks = {
        "search_providers": [p.name for p in state.search],
        "llm": state.settings.llm_enabled,
        "cache": state.cache.name,
    }
    cache_ok = await state.cache.ping()
    checks["cache_ok"] = cache_ok
    # Redis down degrades (no cache) but does not make the service unready.
    ready = bool(state.search)
    return JSONResponse(
        {"status": "ready" if ready else "not_ready", "checks": checks}, status_code=200 if ready else 503
    )


@router.get("/metrics")
async def metrics_endpoint() -> Response:
    body, content_type = render_metrics()
    return Response(body, media_type=content_type)
