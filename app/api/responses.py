"""Responses API serving: POST /v1/responses maps onto the chat serving path (serve_chat, called
once), and the chat.completion it returns is rendered as a `response` object or as the Responses
event stream. Stored responses are kept per API key in the service's cache for GA_RESPONSES_TTL_S.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import ValidationError

from app.api.chat import ChatResult, ChatStream, serve_chat
from app.api.protocol import ChatCompletionRequest, ResponsesRequest
from app.api.sse import pieces
from app.errors import GroundingError, InvalidRequest, NotFound
from app.state import ServiceState

log = logging.getLogger(__name__)
ROUTE = "responses"


@dataclass
class ResponseResult:
    """A complete response, sent as one JSON body."""

    body: dict[str, Any]
    headers: dict[str, str]


@dataclass(frozen=True)
class _Call:
    """One Responses request on its way through the chat path."""

    req: ResponsesRequest
    chat: ChatCompletionRequest
    shell: dict[str, Any]  # the response object before the answer
    request_id: str
    scope: str
    state: ServiceState


@dataclass
class ResponseStream:
    """A response sent as Responses server-sent events."""

    events: AsyncIterator[bytes]
    headers: dict[str, str]


def key_scope(caller: str | None, authorization: str | None) -> str:
    """Whose responses these are: the authenticated caller's id when auth set one, else a hash of
    the bearer key (never the key itself), so one key never reads another key's responses."""
    if caller and caller != "anonymous":
        return caller
    header = authorization or ""
    token = header[7:].strip() if header.lower().startswith("bearer ") else ""
    return "key_" + hashlib.sha256(token.encode()).hexdigest()[:32] if token else "anonymous"


def _store_key(scope: str, response_id: str) -> str:
    return f"response:{scope}:{response_id}"


async def load_response(response_id: str, scope: str, state: ServiceState) -> dict[str, Any] | None:
    """A stored response made with this key, or None (unknown, expired, or another key's)."""
    raw = await state.cache.get(_store_key(scope, response_id))
    if raw is None:
        return None
    entry: dict[str, Any] = orjson.loads(raw)
    return entry


async def get_response(response_id: str, scope: str, state: ServiceState) -> dict[str, Any]:
    entry = await load_response(response_id, scope, state)
    if entry is None:
        raise NotFound(
            f"no response with id {response_id!r} (expired, not stored, or made with another API key)",
            param="response_id",
        )
    response: dict[str, Any] = entry["response"]
    return response


async def _chat_request(req: ResponsesRequest, scope: str, state: ServiceState) -> ChatCompletionRequest:
    """The Responses body as the chat body serve_chat takes (400 on anything it refuses)."""
    messages: list[dict[str, Any]] = []
    if req.previous_response_id:
        previous = await load_response(req.previous_response_id, scope, state)
        if previous is None:
            raise NotFound(
                f"previous response {req.previous_response_id!r} not found (expired, not stored, or another key's)",
                param="previous_response_id",
            )
        # As OpenAI does, the previous response's instructions are not carried over.
        messages += [m for m in previous["messages"] if m["role"] != "system"]
    if req.instructions:
        messages.insert(0, {"role": "system", "content": req.instructions})
    messages += [{"role": item.role, "content": item.text()} for item in req.items()]
    body: dict[str, Any] = {
        # Other parameters ride along: the chat request applies those it knows (seed, stop, n > 1
        # refused, ...) and names the rest in grounding.ignored_params.
        **(req.model_extra or {}),
        "model": req.model,
        "messages": messages,
        "temperature": req.temperature,
        "top_p": req.top_p,
        "max_completion_tokens": req.max_output_tokens,
        "user": req.user,
        "metadata": req.metadata,
        "grounding": req.grounding,
    }
    try:
        return ChatCompletionRequest.model_validate(body)
    except ValidationError as exc:  # a parameter the chat request knows, with a value it refuses
        first = exc.errors()[0]
        param = ".".join(str(p) for p in first["loc"]) or None
        raise InvalidRequest(f"{param}: {first['msg']}", param=param) from None


def _response_id() -> str:
    return "resp_" + secrets.token_hex(24)


def _shell(req: ResponsesRequest, response_id: str, model: str, created: int) -> dict[str, Any]:
    """The response object before the answer: in_progress, empty output, usage and grounding null."""
    return {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "status": "in_progress",
        "error": None,
        "incomplete_details": None,
        "instructions": req.instructions,
        "max_output_tokens": req.max_output_tokens,
        "model": model,
        "output": [],
        "parallel_tool_calls": False,
        "previous_response_id": req.previous_response_id,
        "temperature": req.temperature,
        "top_p": req.top_p,
        "tool_choice": "none",
        "tools": [],
        "text": {"format": {"type": "text"}},
        "truncation": "disabled",
        "store": req.store,
        "metadata": req.metadata or {},
        "user": req.user,
        "usage": None,
        "grounding": None,
    }


def render_response(shell: dict[str, Any], chat: dict[str, Any], message_id: str) -> dict[str, Any]:
    """A chat.completion body → the `response` object (same answer, annotations and grounding)."""
    choice = chat["choices"][0]
    message = choice["message"]
    incomplete = choice["finish_reason"] == "length"
    annotations = [{"type": "url_citation", **a["url_citation"]} for a in message["annotations"]]
    usage = chat["usage"]
    return {
        **shell,
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "model": chat["model"],
        "output": [
            {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "status": "incomplete" if incomplete else "completed",
                "content": [
                    {"type": "output_text", "text": message["content"], "annotations": annotations, "logprobs": []}
                ],
            }
        ],
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": usage["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage["total_tokens"],
        },
        "grounding": chat["grounding"],
    }


async def _answer(call: _Call) -> tuple[dict[str, Any], dict[str, str]]:
    """serve_chat once, rendered as a response, stored when asked (with its conversation, for
    previous_response_id)."""
    result = await serve_chat(call.chat, call.state, call.request_id, ROUTE)
    assert isinstance(result, ChatResult), "the chat request is never a stream"
    response = render_response(call.shell, result.body, "msg_" + secrets.token_hex(24))
    await _keep(call, response)
    return response, result.headers


async def _keep(call: _Call, response: dict[str, Any]) -> None:
    """Store the response when asked (with its conversation, for previous_response_id)."""
    if not call.req.store:
        return
    settings = call.state.settings
    messages = [{"role": m.role, "content": m.text()} for m in call.chat.messages]
    messages.append({"role": "assistant", "content": response["output"][0]["content"][0]["text"]})
    entry = orjson.dumps({"response": response, "messages": messages})
    if len(entry) <= settings.responses_max_bytes:
        await call.state.cache.set(_store_key(call.scope, response["id"]), entry, settings.responses_ttl_s)


async def serve_response(
    req: ResponsesRequest, state: ServiceState, request_id: str, scope: str
) -> ResponseResult | ResponseStream:
    chat_req = await _chat_request(req, scope, state)  # a refused body is a 400 before any event
    model = req.model or state.settings.public_model_name
    shell = _shell(req, _response_id(), model, int(time.time()))
    call = _Call(req, chat_req, shell, request_id, scope, state)
    if not req.stream:
        response, headers = await _answer(call)
        return ResponseResult(response, headers)
    return ResponseStream(_events(call), {"X-Request-Id": request_id})


async def _events(call: _Call) -> AsyncIterator[bytes]:
    """response.created and response.in_progress at once; then the answer's text deltas as the
    verified chat stream releases its sentences (app/api/chat.py, app/pipeline/stream.py), the
    annotations once the answer is final, response.completed (response.incomplete when cut at
    max_output_tokens, or with reason content_filter when the finished answer failed a check after
    its first sentences were sent; response.failed when the answer could not be made)."""
    seq = 0
    public = call.shell
    message_id = "msg_" + secrets.token_hex(24)
    where = {"item_id": message_id, "output_index": 0}

    def event(payload: dict[str, Any]) -> bytes:
        nonlocal seq
        kind: str = payload["type"]
        data = {"type": kind, "sequence_number": seq, **payload}
        seq += 1
        return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"

    def opening() -> list[bytes]:
        item = {"id": message_id, "type": "message", "role": "assistant", "status": "in_progress", "content": []}
        part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        return [
            event({"type": "response.output_item.added", "output_index": 0, "item": item}),
            event({"type": "response.content_part.added", **where, "content_index": 0, "part": part}),
        ]

    def delta(text: str) -> bytes:
        return event({"type": "response.output_text.delta", **where, "content_index": 0, "delta": text, "logprobs": []})

    yield event({"type": "response.created", "response": public})
    yield event({"type": "response.in_progress", "response": public})
    sent, opened, chat_body = "", False, None
    try:
        result = await serve_chat(call.chat.model_copy(update={"stream": True}), call.state, call.request_id, ROUTE)
        assert isinstance(result, ChatStream), "a streamed chat request answers with a stream"
        try:
            async for item in result.items:
                if isinstance(item, dict):
                    chat_body = item
                    continue
                if not opened:
                    for opened_event in opening():
                        yield opened_event
                    opened = True
                sent += item
                yield delta(item)
        finally:
            await result.items.aclose()  # a client gone mid-answer: the model's stream closes now
    except Exception as exc:
        if isinstance(exc, GroundingError):
            log.warning("response %s failed: %s", public["id"], exc.message)
            message = exc.message
        else:
            log.exception("response %s failed", public["id"])
            message = "internal error; the request id in X-Request-Id identifies it in the logs"
        failed = {**public, "status": "failed", "error": {"code": "server_error", "message": message}}
        yield event({"type": "response.failed", "response": failed})
        return
    assert chat_body is not None, "the chat stream ends with its body"
    response = render_response(call.shell, chat_body, message_id)
    item = response["output"][0]
    part = item["content"][0]
    if part["text"].startswith(sent):
        rest = part["text"][len(sent) :]
    else:  # the sentences sent are withdrawn: the answer is the abstention grounding describes
        rest = ""
        response.update(status="incomplete", incomplete_details={"reason": "content_filter"})
        item["status"] = "incomplete"
    await _keep(call, response)
    if not opened:
        for opened_event in opening():
            yield opened_event
    for piece in pieces(rest):
        yield delta(piece)
    for i, annotation in enumerate(part["annotations"]):
        yield event(
            {
                "type": "response.output_text.annotation.added",
                **where,
                "content_index": 0,
                "annotation_index": i,
                "annotation": annotation,
            }
        )
    yield event(
        {"type": "response.output_text.done", **where, "content_index": 0, "text": part["text"], "logprobs": []}
    )
    yield event({"type": "response.content_part.done", **where, "content_index": 0, "part": part})
    yield event({"type": "response.output_item.done", "output_index": 0, "item": item})
    final = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
    yield event({"type": final, "response": response})
