"""Request limits: what one request may cost the process before any work starts.

The body size is enforced before and while reading (BodyGuard, the outermost middleware), before
parsing and before auth looks at anything; a body that trickles in slower than the read timeout is
cut off there. What the parsed body may hold (messages, characters, output tokens, 64-bit integers,
control characters) is checked once by `enforce_chat_limits`, which every answer route calls
through the chat serving path.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import GroundingError, InvalidRequest
from app.settings import Settings

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# C0 controls except tab, newline and carriage return, DEL and the C1 range: they carry no meaning
# in a question, confuse tokenizers and logs, and are how hidden payloads ride along. Stripped (not
# rejected) so a pasted question with a stray control character still gets an answer.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


class RequestTimeout(GroundingError):
    status_code = 408
    error_type = "invalid_request_error"
    code = "request_timeout"


class RequestTooLarge(InvalidRequest):
    code = "request_too_large"


def strip_controls(text: str) -> str:
    return _CONTROL.sub("", text)


def enforce_chat_limits(req: Any, settings: Settings) -> None:
    """Reject what would make one request expensive or break later stages; clamp what OpenAI
    clients expect to be clamped (an output-token ceiling above the server's is lowered)."""
    messages = req.messages
    if len(messages) > settings.max_messages:
        raise RequestTooLarge(
            f"{len(messages)} messages exceed the limit of {settings.max_messages} (GA_MAX_MESSAGES)", param="messages"
        )
    total = 0
    for msg in messages:
        if isinstance(msg.content, str):
            msg.content = strip_controls(msg.content)
            total += len(msg.content)
        elif isinstance(msg.content, list):
            for part in msg.content:
                if part.text:
                    part.text = strip_controls(part.text)
                    total += len(part.text)
    if total > settings.max_request_chars:
        raise RequestTooLarge(
            f"the messages hold {total} characters, over the limit of {settings.max_request_chars} "
            "(GA_MAX_REQUEST_CHARS)",
            param="messages",
        )
    # Only declared fields: getattr of a missing name on a pydantic model with extras is an exception
    # inside pydantic, which on the answer-cache hit path cost more than everything else here.
    fields = type(req).model_fields
    seed = req.seed if "seed" in fields else None
    if seed is not None and not INT64_MIN <= seed <= INT64_MAX:
        raise InvalidRequest("seed must be a 64-bit integer", param="seed")
    for name in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = getattr(req, name) if name in fields else None
        if value is not None and value > settings.max_output_tokens:
            setattr(req, name, settings.max_output_tokens)


class BodyTooLarge(GroundingError):
    status_code = 413
    error_type = "invalid_request_error"
    code = "request_too_large"


class BodyGuard:
    """Pure ASGI, outermost: a declared Content-Length over GA_MAX_BODY_BYTES is refused before a
    byte of the body is read (and before auth); a chunked body is counted while it is read; the
    whole body must arrive within GA_BODY_READ_TIMEOUT_S, so a client that sends one byte a second
    cannot hold a connection and its buffers open."""

    def __init__(self, app: ASGIApp, max_bytes: int, timeout_s: float):
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        if declared is not None and declared.strip().isdigit() and int(declared) > self.max_bytes:
            return await send_error(send, self._too_large())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        body_done = False
        seen = 0

        async def guarded_receive() -> Message:
            nonlocal body_done, seen
            if body_done:  # after the body only http.disconnect remains: no deadline on waiting for it
                return await receive()
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                raise RequestTimeout(
                    f"the request body did not arrive within {self.timeout_s:g} s (GA_BODY_READ_TIMEOUT_S)"
                ) from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise self._too_large()
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        await self.app(scope, guarded_receive, send)

    def _too_large(self) -> BodyTooLarge:
        return BodyTooLarge(f"request body larger than {self.max_bytes} bytes (GA_MAX_BODY_BYTES)")


async def send_error(send: Send, exc: GroundingError, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """An error in the OpenAI shape, sent from middleware (outside the exception handlers)."""
    body = orjson.dumps(exc.to_body())
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *(headers or []),
    ]
    await send({"type": "http.response.start", "status": exc.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body})
