"""Server-sent events for `stream: true`: chat.completion.chunk events, then `[DONE]`."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import orjson


async def stream_chunks(body: dict[str, Any], include_usage: bool) -> AsyncIterator[bytes]:
    """Stream after verification: the content is final, sent sentence by sentence; the last
    content chunk carries finish_reason, annotations, citations and grounding, then the usage
    chunk when asked, then [DONE]."""
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}

    def event(payload: dict[str, Any]) -> bytes:
        return b"data: " + orjson.dumps(payload) + b"\n\n"

    message = body["choices"][0]["message"]
    yield event(
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}
    )
    parts = pieces(message["content"])
    for piece in parts[:-1]:
        yield event({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    # The last content chunk carries finish_reason, the annotations, citations and grounding; the
    # usage chunk (when asked) and [DONE] follow it.
    last: dict[str, Any] = {"content": parts[-1]} if parts else {}
    if message["annotations"]:
        last["annotations"] = message["annotations"]
    final = {
        **base,
        "choices": [{"index": 0, "delta": last, "finish_reason": body["choices"][0]["finish_reason"]}],
        "citations": body["citations"],
        "grounding": body["grounding"],
    }
    yield event(final)
    if include_usage:
        yield event({**base, "choices": [], "usage": body["usage"]})
    yield b"data: [DONE]\n\n"


def pieces(content: str) -> list[str]:
    """Sentence-sized pieces whose concatenation is exactly `content`."""
    parts = re.split(r"(?<=[.!?]) ", content)
    return [p + " " for p in parts[:-1]] + [parts[-1]] if content else []
