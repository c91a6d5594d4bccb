"""LiteLLM's completion() and responses() against the service (the openai/ provider prefix with
api_base). LiteLLM is large (~280 MB with its dependencies) but in the test extra: CI runs these."""

from __future__ import annotations

import litellm
import pytest

from tests.api.clients.conftest import GROUNDING, KEY, QUESTION

# LiteLLM's own pydantic models warn about themselves; nothing the service sends.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _kw(base_url: str) -> dict:
    return {
        "model": "openai/grounded-answer",
        "api_base": base_url,
        "api_key": KEY,
        "extra_body": {"grounding": GROUNDING},
    }


def test_completion(base_url: str):
    reply = litellm.completion(messages=[{"role": "user", "content": QUESTION}], **_kw(base_url))
    assert "TaskGroup" in reply.choices[0].message.content
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


def test_completion_stream(base_url: str):
    chunks = list(litellm.completion(messages=[{"role": "user", "content": QUESTION}], stream=True, **_kw(base_url)))
    assert "TaskGroup" in "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def test_responses(base_url: str):
    response = litellm.responses(input=QUESTION, **_kw(base_url))
    text = response.output[0].content[0]
    assert "TaskGroup" in text.text and response.status == "completed"
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0


async def test_aresponses_stream(base_url: str):
    stream = await litellm.aresponses(input=QUESTION, stream=True, **_kw(base_url))
    types = [event.type async for event in stream]
    assert types[0] == "response.created" and types[-1] == "response.completed"
    assert "response.output_text.delta" in types
