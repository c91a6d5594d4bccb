"""Server-sent events for `stream: true`: chat.completion.chunk events, then `[DONE]`.

A verified stream (app/api/chat.py over app/pipeline/stream.py) sends the role chunk, then one
content chunk per released sentence, then `tail`: the rest of the final content (sentence by
sentence), the last content chunk with finish_reason, annotations, citations and grounding, the
usage chunk when asked, `[DONE]`. An answer made whole (extractive composer, abstention, cache hit)
goes through the same `tail` at once. An error after the first byte is one `data: {"error": …}`
event in OpenAI's shape, then `[DONE]`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import orjson

from app.errors import GroundingError

log = logging.getLogger(__name__)
DONE = b"data: [DONE]\n\n"


def event(payload: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


def chunk_base(chunk_id: str, created: int, model: str) -> dict[str, Any]:
    return {"id": chunk_id, "object": "chat.completion.chunk", "created": created, "model": model}


def role_chunk(base: dict[str, Any]) -> bytes:
    return event(
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}
    )


def content_chunk(base: dict[str, Any], text: str) -> bytes:
    return event({**base, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]})


def tail(body: dict[str, Any], sent: str, include_usage: bool, base: dict[str, Any] | None = None) -> Iterator[bytes]:
    """Everything after `sent` (the content already streamed). When the final content does not
    continue what was sent — the finished answer failed a check after its first sentences left, and
    became an abstention — nothing more of it is sent and finish_reason is "content_filter": the
    grounding of the final chunk says why (status "abstained", its abstention)."""
    base = base or chunk_base(body["id"], body["created"], body["model"])
    message = body["choices"][0]["message"]
    content: str = message["content"]
    finish = body["choices"][0]["finish_reason"]
    if content.startswith(sent):
        parts = pieces(content[len(sent) :])
    else:
        parts, finish = [], "content_filter"
    for piece in parts[:-1]:
        yield content_chunk(base, piece)
    # The last content chunk carries finish_reason, the annotations, citations and grounding; the
    # usage chunk (when asked) and [DONE] follow it.
    last: dict[str, Any] = {"content": parts[-1]} if parts else {}
    if message["annotations"]:
        last["annotations"] = message["annotations"]
    yield event(
        {
            **base,
            "choices": [{"index": 0, "delta": last, "finish_reason": finish}],
            "citations": body["citations"],
            "grounding": body["grounding"],
        }
    )
    if include_usage:
        yield event({**base, "choices": [], "usage": body["usage"]})
    yield DONE


async def stream_chunks(body: dict[str, Any], include_usage: bool) -> AsyncIterator[bytes]:
    """An answer already final, sent sentence by sentence."""
    yield role_chunk(chunk_base(body["id"], body["created"], body["model"]))
    for chunk in tail(body, "", include_usage):
        yield chunk


def error_events(exc: Exception) -> bytes:
    """An error after the first byte: the error event in OpenAI's shape, then [DONE]."""
    if isinstance(exc, GroundingError):
        log.warning("stream failed: %s", exc.message)
        err = exc
    else:
        log.error("stream failed", exc_info=exc)
        err = GroundingError("internal error; the request id in X-Request-Id identifies it in the logs")
    return event(err.to_body()) + DONE


def pieces(content: str) -> list[str]:
    """Sentence-sized pieces whose concatenation is exactly `content`."""
    parts = re.split(r"(?<=[.!?]) ", content)
    return [p + " " for p in parts[:-1]] + [parts[-1]] if content else []
