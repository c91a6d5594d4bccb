"""ChatModel.stream through the retry loop against the OpenAI-shaped simulator: retried up to the
first delta, never after it; usage from the last chunk; closing stops the upstream."""

from __future__ import annotations

import asyncio

import pytest

from app.errors import ProviderTechnicalError
from app.providers.breaker import BreakerBoard, BreakerConfig
from app.providers.llm.openai_compat import OpenAICompatibleChatModel  # noqa: F401 (registers "openai")
from app.providers.llm.resilient import ResilientChatModel
from app.settings import Settings

HELLO = [{"role": "user", "content": "hi"}]
TEXT = "One two three. Four five six."


def _model(llm) -> ResilientChatModel:
    settings = Settings(
        **llm.settings_overrides(), retry_max_attempts=3, retry_base_delay_s=0.01, retry_max_delay_s=0.05
    )
    return ResilientChatModel.build(settings, BreakerBoard(BreakerConfig(min_calls=50)))


async def test_deltas_then_the_completion_with_usage(llm):
    model = _model(llm)
    try:
        llm.script(TEXT)
        stream = await model.stream(HELLO, model="gpt-4o", timeout=10)
        deltas = [d async for d in stream]
        assert "".join(deltas) == TEXT and len(deltas) > 1
        done = stream.completion
        assert done.text == TEXT and done.completion_tokens == 6 and done.prompt_tokens and done.finish_reason == "stop"
        body = llm.bodies()[-1]
        assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    finally:
        await model.aclose()


async def test_retried_before_the_first_delta(llm):
    model = _model(llm)
    try:
        llm.fail(500, times=2)
        llm.script(TEXT)
        stream = await model.stream(HELLO, model="gpt-4o", timeout=10)
        assert "".join([d async for d in stream]) == TEXT
        assert len(llm.requests) == 3
    finally:
        await model.aclose()


async def test_a_failure_after_the_first_delta_is_an_error_not_a_retry(llm):
    model = _model(llm)
    try:
        llm.script({"content": TEXT, "cut_after": 2})
        stream = await model.stream(HELLO, model="gpt-4o", timeout=10)
        seen = []
        with pytest.raises(ProviderTechnicalError):
            async for delta in stream:
                seen.append(delta)
        assert seen and len(llm.requests) == 1
    finally:
        await model.aclose()


async def test_closing_the_stream_stops_the_upstream(llm):
    model = _model(llm)
    try:
        llm.script({"content": TEXT * 10, "chunk_delay_s": 0.02})
        stream = await model.stream(HELLO, model="gpt-4o", timeout=10)
        async for _ in stream:
            break
        await stream.aclose()
        log = llm.streams[-1]
        for _ in range(100):
            if log.closed_by_client:
                break
            await asyncio.sleep(0.02)
        assert log.closed_by_client and log.sent < log.total
    finally:
        await model.aclose()
