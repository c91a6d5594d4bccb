"""The chat server speaks OpenAI's protocol well enough for the official SDK, sync and async."""

from __future__ import annotations

import json

import httpx
import openai
import pytest


def _client(llm, **kw):
    return openai.AsyncOpenAI(base_url=llm.url + "/v1", api_key="sk-test", max_retries=0, **kw)


async def test_non_streaming_reply_usage_and_recording(llm):
    llm.script("The answer is 42.", {"content": {"queries": ["a", "b"]}, "usage": {"prompt_tokens": 99}})
    client = _client(llm)
    first = await client.chat.completions.create(
        model="gpt-4o",
        temperature=0.2,
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is it?"}],
    )
    second = await client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "plan"}])
    await client.close()
    assert first.object == "chat.completion" and first.model == "gpt-4o"
    assert first.choices[0].message.content == "The answer is 42."
    assert first.choices[0].finish_reason == "stop"
    assert (first.usage.prompt_tokens, first.usage.completion_tokens, first.usage.total_tokens) == (5, 4, 9)
    assert json.loads(second.choices[0].message.content) == {"queries": ["a", "b"]}
    assert second.usage.prompt_tokens == 99 and second.usage.total_tokens == 99 + 3  # 3 whitespace words of JSON
    req = llm.requests.all()[0]
    assert req.path == "/v1/chat/completions" and req.body["temperature"] == 0.2
    assert req.headers["authorization"] == "Bearer sk-test"
    assert "Be brief." in req.prompt_text and "What is it?" in req.prompt_text
    assert [b["model"] for b in llm.bodies()] == ["gpt-4o", "gpt-4o-mini"]


async def test_streaming_chunks_and_usage(llm):
    llm.script("Alpha beta gamma delta.", "One two.")
    client = _client(llm)
    stream = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "go"}], stream=True, stream_options={"include_usage": True}
    )
    chunks = [c async for c in stream]
    plain = await client.chat.completions.create(model="m", messages=[], stream=True)
    plain_chunks = [c async for c in plain]
    await client.close()
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Alpha beta gamma delta."
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.content) == 4
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 4
    assert all(c.usage is None for c in plain_chunks) and plain_chunks[-1].choices[0].finish_reason == "stop"


async def test_errors_have_openai_shape(llm):
    llm.fail(429)
    llm.fail(401)
    llm.fail(500, message="boom")
    client = _client(llm)
    with pytest.raises(openai.RateLimitError) as rate:
        await client.chat.completions.create(model="m", messages=[])
    with pytest.raises(openai.AuthenticationError) as auth:
        await client.chat.completions.create(model="m", messages=[])
    with pytest.raises(openai.InternalServerError) as internal:
        await client.chat.completions.create(model="m", messages=[])
    with pytest.raises(openai.InternalServerError) as unscripted:  # nothing left in the queue
        await client.chat.completions.create(model="m", messages=[])
    await client.close()
    assert rate.value.code == "rate_limit_exceeded" and rate.value.status_code == 429
    assert auth.value.code == "invalid_api_key"
    assert internal.value.body["message"] == "boom" and internal.value.body["type"] == "server_error"
    assert "no scripted reply" in unscripted.value.body["message"] and llm.unscripted == 1


async def test_callables_default_delay_and_cut_stream(llm):
    llm.default = lambda body: f"echo {len(body['messages'])}"
    llm.script({"content": "slow", "delay_s": 0.5}, {"content": "a b c d", "cut_after": 2})
    client = _client(llm, timeout=0.2)
    with pytest.raises(openai.APITimeoutError):
        await client.chat.completions.create(model="m", messages=[])
    client = _client(llm)
    stream = await client.chat.completions.create(model="m", messages=[], stream=True)
    got = []
    with pytest.raises(openai.APIError):
        async for chunk in stream:
            got.append(chunk.choices[0].delta.content)
    echo = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}] * 3)
    await client.close()
    assert got == ["", "a ", "b "]
    assert echo.choices[0].message.content == "echo 3"


def test_sync_sdk_models_and_bare_path(llm):
    llm.script("sync ok")
    client = openai.OpenAI(base_url=llm.url + "/v1", api_key="k", max_retries=0)
    assert [m.id for m in client.models.list().data] == ["gpt-4o", "gpt-4o-mini"]
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    client.close()
    assert reply.choices[0].message.content == "sync ok"
    bare = httpx.post(llm.url + "/chat/completions", content=b"{not json")
    assert bare.status_code == 400 and bare.json()["error"]["type"] == "invalid_request_error"
