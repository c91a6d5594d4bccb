"""The official openai SDK, sync and async, unchanged but for base_url: chat completions and the
Responses API, streamed and not, and the SDK's error classes."""

from __future__ import annotations

import openai
import pytest

from tests.api.clients.conftest import GROUNDING, KEY, LONG_QUESTION, OTHER_KEY, QUESTION

EXTRA = {"grounding": GROUNDING}
RESPONSE_EVENTS = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.annotation.added",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
]


@pytest.fixture(scope="module")
def client(base_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key=KEY, max_retries=0)


@pytest.fixture
async def aclient(base_url: str):
    client = openai.AsyncOpenAI(base_url=base_url, api_key=KEY, max_retries=0)
    yield client
    await client.close()


def _collapse(types: list[str]) -> list[str]:
    """Consecutive repeats of one event type (the deltas, the annotations) as one."""
    return [t for i, t in enumerate(types) if i == 0 or types[i - 1] != t]


# --- chat completions ----------------------------------------------------------------------------


def test_sync_chat(client: openai.OpenAI):
    reply = client.chat.completions.create(
        model="grounded-answer", messages=[{"role": "user", "content": QUESTION}], extra_body=EXTRA
    )
    data = reply.model_dump()
    assert "TaskGroup" in reply.choices[0].message.content
    assert reply.choices[0].finish_reason == "stop"
    assert data["grounding"]["status"] == "grounded" and data["citations"]
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens


def test_sync_chat_stream_ends_with_the_grounded_content_chunk_then_usage(client: openai.OpenAI):
    whole = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": LONG_QUESTION}], extra_body=EXTRA
    )
    chunks = list(
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": LONG_QUESTION}],
            stream=True,
            stream_options={"include_usage": True},
            extra_body=EXTRA,
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    *content, final, usage = chunks
    assert usage.choices == [] and usage.usage is not None and usage.usage.completion_tokens > 0
    assert final.choices[0].finish_reason == "stop" and final.choices[0].delta.content  # the last sentence
    extra = final.model_dump()
    assert extra["grounding"]["status"] == "grounded" and extra["citations"] == whole.model_dump()["citations"]
    assert extra["choices"][0]["delta"]["annotations"]
    assert all(c.choices[0].finish_reason is None for c in content)


async def test_async_chat_and_stream(aclient: openai.AsyncOpenAI):
    reply = await aclient.chat.completions.create(
        model="m", messages=[{"role": "user", "content": QUESTION}], extra_body=EXTRA
    )
    stream = await aclient.chat.completions.create(
        model="m", messages=[{"role": "user", "content": QUESTION}], stream=True, extra_body=EXTRA
    )
    pieces = [c.choices[0].delta.content or "" async for c in stream if c.choices]
    assert "".join(pieces) == reply.choices[0].message.content


def test_max_tokens_cuts_at_a_sentence_boundary(client: openai.OpenAI):
    full = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": LONG_QUESTION}], extra_body=EXTRA
    )
    cut = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": LONG_QUESTION}], max_tokens=80, extra_body=EXTRA
    )
    text = cut.choices[0].message.content
    assert cut.choices[0].finish_reason == "length"
    assert 0 < cut.usage.completion_tokens <= 80
    assert text and full.choices[0].message.content.startswith(text) and text.endswith(".")
    for a in cut.choices[0].message.annotations or []:
        assert a.url_citation.end_index <= len(text)
    # The case: no whole sentence fits in 20 tokens, so nothing unverified is sent.
    tiny = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": QUESTION}], max_completion_tokens=20, extra_body=EXTRA
    )
    assert tiny.choices[0].finish_reason == "length" and tiny.usage.completion_tokens <= 20


# --- the Responses API ---------------------------------------------------------------------------


def _check_response(response, status: str = "completed") -> None:
    assert response.id.startswith("resp_") and response.object == "response" and response.status == status
    message = response.output[0]
    assert message.type == "message" and message.role == "assistant"
    text = message.content[0]
    assert text.type == "output_text" and text.text == response.output_text
    for a in text.annotations:
        assert a.type == "url_citation" and a.url.startswith("https://") and a.title
        assert 0 <= a.start_index < a.end_index <= len(text.text)
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens


def test_sync_responses_create_and_retrieve(client: openai.OpenAI, base_url: str):
    response = client.responses.create(
        model="grounded-answer",
        input=QUESTION,
        instructions="Answer briefly.",
        metadata={"ticket": "42"},
        extra_body=EXTRA,
    )
    _check_response(response)
    assert "TaskGroup" in response.output_text and response.output[0].content[0].annotations
    assert response.metadata == {"ticket": "42"} and response.instructions == "Answer briefly."
    assert response.model_dump()["grounding"]["status"] == "grounded"
    again = client.responses.retrieve(response.id)
    assert again.id == response.id and again.output_text == response.output_text
    other = openai.OpenAI(base_url=base_url, api_key=OTHER_KEY, max_retries=0)
    with pytest.raises(openai.NotFoundError):
        other.responses.retrieve(response.id)  # another key's response does not exist for it


def test_responses_input_items_and_max_output_tokens(client: openai.OpenAI):
    response = client.responses.create(
        model="m",
        input=[{"role": "user", "content": [{"type": "input_text", "text": LONG_QUESTION}]}],
        max_output_tokens=80,
        extra_body=EXTRA,
    )
    _check_response(response, status="incomplete")
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.usage.output_tokens <= 80 and response.output_text.endswith(".")


def test_sync_responses_stream_events(client: openai.OpenAI):
    events = list(client.responses.create(model="m", input=QUESTION, stream=True, extra_body=EXTRA))
    assert _collapse([e.type for e in events]) == RESPONSE_EVENTS
    assert [e.sequence_number for e in events] == list(range(len(events)))
    created, completed = events[0].response, events[-1].response
    assert created.id == completed.id and created.status == "in_progress" and completed.status == "completed"
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == completed.output_text
    added = [e.annotation for e in events if e.type == "response.output_text.annotation.added"]
    assert len(added) == len(completed.output[0].content[0].annotations)
    assert completed.model_dump()["grounding"]["status"] == "grounded"


def test_sync_responses_stream_helper(client: openai.OpenAI):
    with client.responses.stream(model="m", input=QUESTION, extra_body=EXTRA) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    _check_response(final)
    assert "".join(deltas) == final.output_text


async def test_async_responses(aclient: openai.AsyncOpenAI):
    response = await aclient.responses.create(model="m", input=QUESTION, extra_body=EXTRA)
    _check_response(response)
    stream = await aclient.responses.create(model="m", input=QUESTION, stream=True, extra_body=EXTRA)
    types = [e.type async for e in stream]
    assert _collapse(types) == RESPONSE_EVENTS
    async with aclient.responses.stream(model="m", input=QUESTION, extra_body=EXTRA) as helper:
        final = await helper.get_final_response()
    assert final.output_text == response.output_text
    follow = await aclient.responses.create(
        model="m", input="what about its tasks?", previous_response_id=response.id, extra_body=EXTRA
    )
    assert follow.previous_response_id == response.id
    assert "TaskGroup" in " ".join(follow.model_dump()["grounding"]["queries"])


# --- errors ----------------------------------------------------------------------------------------


def test_error_classes(client: openai.OpenAI, base_url: str):
    wrong = openai.OpenAI(base_url=base_url, api_key="sk-wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        wrong.chat.completions.create(model="m", messages=[{"role": "user", "content": QUESTION}])
    with pytest.raises(openai.AuthenticationError):
        wrong.responses.create(model="m", input=QUESTION)
    with pytest.raises(openai.BadRequestError) as bad:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": QUESTION}], n=2)
    assert bad.value.param == "n"
    with pytest.raises(openai.BadRequestError) as bad:
        client.responses.create(model="m", input=QUESTION, tools=[{"type": "web_search"}])
    assert bad.value.param == "tools"
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="m", input=[{"role": "user", "content": [{"type": "input_image"}]}])
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve("resp_never_made")
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="m", input=QUESTION, previous_response_id="resp_never_made")
    with pytest.raises(openai.NotFoundError) as missing:
        client.embeddings.create(model="m", input="x")
    assert "/v1/chat/completions" in missing.value.message and "/v1/responses" in missing.value.message
    with pytest.raises(openai.NotFoundError):
        client.completions.create(model="m", prompt="x")


async def test_async_error_classes(base_url: str):
    wrong = openai.AsyncOpenAI(base_url=base_url, api_key="sk-wrong", max_retries=0)
    try:
        with pytest.raises(openai.AuthenticationError):
            await wrong.responses.create(model="m", input=QUESTION, stream=True)
    finally:
        await wrong.close()
