"""LangChain's ChatOpenAI against the service: chat completions and the Responses API
(use_responses_api=True), invoked and streamed, with non-zero usage_metadata."""

from __future__ import annotations

import pytest

from tests.api.clients.conftest import GROUNDING, KEY, QUESTION

langchain_openai = pytest.importorskip("langchain_openai")


def _model(base_url: str, **kw):
    return langchain_openai.ChatOpenAI(
        base_url=base_url,
        api_key=KEY,
        model="grounded-answer",
        max_retries=0,
        extra_body={"grounding": GROUNDING},
        **kw,
    )


def _text(message) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if isinstance(block, dict))


def _usage_counts(message) -> None:
    usage = message.usage_metadata
    assert usage is not None, "no usage_metadata"
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def _aggregate(chunks):
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged = merged + chunk
    return merged


def test_chat_invoke_and_stream(base_url: str):
    model = _model(base_url, stream_usage=True)
    reply = model.invoke(QUESTION)
    assert "TaskGroup" in _text(reply)
    assert reply.response_metadata["finish_reason"] == "stop"
    _usage_counts(reply)
    streamed = _aggregate(list(model.stream(QUESTION)))
    assert _text(streamed) == _text(reply)
    _usage_counts(streamed)


async def test_chat_ainvoke(base_url: str):
    reply = await _model(base_url).ainvoke([("system", "Answer briefly."), ("user", QUESTION)])
    assert "TaskGroup" in _text(reply)
    _usage_counts(reply)


def test_responses_api_invoke_and_stream(base_url: str):
    model = _model(base_url, use_responses_api=True)
    reply = model.invoke(QUESTION)
    assert "TaskGroup" in _text(reply)
    blocks = [b for b in reply.content if isinstance(b, dict)]
    annotations = [a for b in blocks for a in b.get("annotations", [])]
    assert annotations and all(a.get("url", "").startswith("https://") for a in annotations)
    _usage_counts(reply)
    streamed = _aggregate(list(model.stream(QUESTION)))
    assert _text(streamed) == _text(reply)
    _usage_counts(streamed)
