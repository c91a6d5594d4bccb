"""An OpenAI-compatible chat server with scripted replies.

Endpoints: POST /v1/chat/completions (and /chat/completions), GET /v1/models (and /models).

    llm.script("first reply", {"content": {"queries": ["a"]}}, lambda body: "third")
    llm.default = "used when the queue is empty"        # else: a 500 that names the problem
    llm.fail(429, times=2)                               # OpenAI's error body, status 429
    llm.requests.all()[0].body["messages"]              # what the client sent

A reply is a string, a dict, or a callable(body) returning either. Dict keys: content (str, or any
JSON value: dumped), usage (partial dict: overrides the counted numbers), status + error (an error
answer: error is a message or a full error dict), delay_s, chunk_delay_s, finish_reason, model,
headers, chunks (explicit stream pieces), cut_after (stream: drop the connection after N pieces),
raw (a body sent as is, with status (default 200) and media_type: e.g. invalid JSON).
`models_status` makes GET /models answer an error; `models_calls` counts its requests. `streams`
logs each streamed reply (StreamLog: pieces sent, finished, closed_by_client — a client that hangs
up stops the stream, so `sent` counts what was generated).
Token counts are rough: whitespace-separated words.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ._record import Recorder
from ._threaded import ThreadedUvicorn, bind_socket

Reply = str | dict | Callable[[dict], Any]

ERROR_DEFAULTS = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests."),
    500: ("server_error", None, "The server had an error while processing your request."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}


class _AsciiJSON(JSONResponse):
    """JSON with non-ASCII as \\u escapes (the same JSON to any parser, as the streamed chunks are):
    a scripted reply may hold an unpaired surrogate, which only a JSON escape can carry."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, separators=(",", ":")).encode("ascii")


@dataclass
class StreamLog:
    """One streamed reply as the server wrote it: `server.streams[-1].sent` pieces so far."""

    total: int  # content pieces scripted
    sent: int = 0
    finished: bool = False  # the last content piece went out
    closed_by_client: bool = False  # the client hung up before the end (nothing more was sent)


@dataclass
class ChatRequest:
    path: str
    body: dict
    headers: dict[str, str]  # lower-cased names
    at: float = field(default_factory=time.time)

    @property
    def messages(self) -> list[dict]:
        return self.body.get("messages", [])

    @property
    def prompt_text(self) -> str:
        """All message contents joined: handy for `assert "S1" in req.prompt_text`."""
        return "\n".join(_content_text(m.get("content")) for m in self.messages)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def count_tokens(text: str) -> int:
    return len(text.split())


def error_body(
    status: int,
    message: str | None = None,
    *,
    type: str | None = None,
    code: str | None = None,
    param: str | None = None,
) -> dict:
    d_type, d_code, d_msg = ERROR_DEFAULTS.get(status, ("server_error", None, "Error."))
    return {
        "error": {
            "message": message or d_msg,
            "type": type or d_type,
            "param": param,
            "code": code if code is not None else d_code,
        }
    }


class OpenAIChatServer(ThreadedUvicorn):
    def __init__(self, host: str = "127.0.0.1") -> None:
        self._lock = threading.Lock()
        self.requests: Recorder[ChatRequest] = Recorder()
        self.reset()
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/models", self._models, methods=["GET"]),
            ]
        )
        super().__init__(app, [bind_socket(host)], name="openai-chat")

    # --- scripting -----------------------------------------------------------------------------

    def reset(self) -> None:
        with self._lock:
            self._queue: list[Reply] = []
            self.default: Reply | None = None
            self.latency_s = 0.0
            self.chunk_delay_s = 0.0
            self.models = ["gpt-4o", "gpt-4o-mini"]
            self.models_status = 200  # GET /models answers this (an error body when not 200)
            self.models_calls = 0  # GET /models requests received
            self.unscripted = 0  # requests that found neither a queued reply nor a default
            self.streams: list[StreamLog] = []  # streamed replies, in order
        self.requests.clear()

    def script(self, *replies: Reply) -> None:
        """Queue replies; each request takes the next one (then `default`)."""
        with self._lock:
            self._queue.extend(replies)

    def fail(self, status: int, times: int = 1, message: str | None = None, **kw: Any) -> None:
        err = error_body(status, message, **kw)["error"]
        self.script(*[{"status": status, "error": err}] * times)

    def settings_overrides(self) -> dict[str, Any]:
        """Settings overrides that make the service use this server as its LLM."""
        return {"llm_base_url": self.url + "/v1", "llm_api_key": "sk-test", "llm_max_retries": 0}

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def bodies(self) -> list[dict]:
        return [r.body for r in self.requests.all()]

    # --- endpoints -----------------------------------------------------------------------------

    async def _models(self, request: Request) -> Response:
        with self._lock:
            self.models_calls += 1
            status = self.models_status
        if status != 200:
            return JSONResponse(error_body(status), status)
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {"id": m, "object": "model", "created": 1_700_000_000, "owned_by": "test"} for m in self.models
                ],
            }
        )

    async def _chat(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        self.requests.append(ChatRequest(request.url.path, body, {k.lower(): v for k, v in request.headers.items()}))
        with self._lock:
            reply = self._queue.pop(0) if self._queue else self.default
            latency, chunk_delay = self.latency_s, self.chunk_delay_s
            if reply is None:
                self.unscripted += 1
        if "_unparsed" in body:
            return JSONResponse(error_body(400, "We could not parse the JSON body."), 400)
        if reply is None:
            return JSONResponse(error_body(500, "test LLM server: no scripted reply left"), 500)
        if callable(reply):
            reply = reply(body)
            if asyncio.iscoroutine(reply):
                reply = await reply
        spec = {"content": reply} if isinstance(reply, str) else dict(reply)
        delay = latency + float(spec.get("delay_s", 0.0))
        if delay:
            await asyncio.sleep(delay)
        if "raw" in spec:  # a body sent as is (e.g. b"{not json" with status 200: invalid JSON)
            raw_body = spec["raw"]
            return Response(
                raw_body.encode() if isinstance(raw_body, str) else raw_body,
                spec.get("status", 200),
                headers=spec.get("headers"),
                media_type=spec.get("media_type", "application/json"),
            )
        if spec.get("status", 200) >= 400:
            status = spec["status"]
            err = spec.get("error")
            payload = {"error": err} if isinstance(err, dict) else error_body(status, err)
            return JSONResponse(payload, status, headers=spec.get("headers"))
        content = spec.get("content", "")
        if not isinstance(content, str):
            content = json.dumps(content)
        model = spec.get("model") or body.get("model") or "test-model"
        prompt_tokens = sum(count_tokens(_content_text(m.get("content"))) for m in body.get("messages", []))
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": count_tokens(content)}
        given = spec.get("usage") or {}
        usage.update(given)
        if "total_tokens" not in given:
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        finish = spec.get("finish_reason", "stop")
        ident = "chatcmpl-" + uuid.uuid4().hex[:24]
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            pieces = spec.get("chunks") or _pieces(content)
            log = StreamLog(len(pieces))
            with self._lock:
                self.streams.append(log)
            return _ChatStream(
                log,
                ident,
                model,
                pieces,
                finish,
                usage if include_usage else None,
                float(spec.get("chunk_delay_s", chunk_delay)),
                spec.get("cut_after"),
                spec.get("headers"),
            )
        return _AsciiJSON(
            {
                "id": ident,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content, "refusal": None},
                        "logprobs": None,
                        "finish_reason": finish,
                    }
                ],
                "usage": usage,
                "system_fingerprint": "fp_test",
            },
            headers=spec.get("headers"),
        )


def _pieces(content: str) -> list[str]:
    """Word-sized deltas (each word keeps its trailing whitespace), as real streams look."""
    return re.findall(r"\S+\s*|\s+", content) or [""]


class _ChatStream(Response):
    """chat.completion.chunk server-sent events, written straight to the ASGI channel so a
    scripted `cut_after` can drop the connection mid-stream."""

    media_type = "text/event-stream"

    def __init__(
        self,
        log: StreamLog,
        ident: str,
        model: str,
        pieces: list[str],
        finish: str,
        usage: dict | None,
        chunk_delay_s: float,
        cut_after: int | None,
        headers: dict | None,
    ) -> None:
        super().__init__(headers={"cache-control": "no-cache", **(headers or {})}, media_type=self.media_type)
        # Response() without content declares "content-length: 0"; a stream has no length.
        self.raw_headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]
        self.ident, self.model, self.pieces, self.finish = ident, model, pieces, finish
        self.usage, self.chunk_delay_s, self.cut_after = usage, chunk_delay_s, cut_after
        self.log = log

    def _event(self, delta: dict, finish: str | None, choices: bool = True) -> bytes:
        chunk: dict[str, Any] = {
            "id": self.ident,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": self.model,
            "system_fingerprint": "fp_test",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}] if choices else [],
        }
        if self.usage is not None:
            chunk["usage"] = None
        return f"data: {json.dumps(chunk)}\n\n".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})

        async def emit(data: bytes) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": True})

        gone = asyncio.Event()

        async def watch() -> None:  # the request body is read: the next message is the client leaving
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.ensure_future(watch())
        try:
            await emit(self._event({"role": "assistant", "content": "", "refusal": None}, None))
            for i, piece in enumerate(self.pieces):
                if self.cut_after is not None and i >= self.cut_after:
                    return  # no final chunk, no [DONE]: the server drops the connection
                if self.chunk_delay_s:
                    try:
                        await asyncio.wait_for(gone.wait(), self.chunk_delay_s)
                    except TimeoutError:
                        pass
                if gone.is_set():
                    self.log.closed_by_client = True
                    return
                await emit(self._event({"content": piece}, None))
                self.log.sent += 1
            self.log.finished = True
            await emit(self._event({}, self.finish))
            if self.usage is not None:
                usage_chunk = json.loads(self._event({}, None, choices=False)[6:])
                usage_chunk["usage"] = self.usage
                await emit(f"data: {json.dumps(usage_chunk)}\n\n".encode())
            await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})
        finally:
            watcher.cancel()
