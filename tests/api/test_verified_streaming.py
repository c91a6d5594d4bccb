"""Verified-sentence streaming (`stream: true` over the model's own stream): each sentence leaves
once verified, before the model has finished; an unsupported one never leaves (drop) or leaves
marked (flag); every chunk matches the published schema; an upstream failure after the first
sentence is an error event then [DONE]; a client that hangs up closes the model's stream."""

from __future__ import annotations

import json
import re
import time

import httpx
import pytest

from app.pipeline.stream import complete_prefix
from simulators.searxng import searx_result
from tests.api.helpers import TODAY as TODAY_STREAM
from tests.api.helpers import chat, planner_or, publish_acme
from tests.api.test_openapi_contract import Contract, chunk_schema

QUESTION = "What does the Acme Cloud Pro plan cost?"
SENTENCES = [
    "Acme Cloud raised the price of its Pro plan to $30 per month [S1][S2].",
    "The Pro plan includes unlimited projects and priority support [S1][S2].",
    "Existing customers keep their current price until their next renewal date [S1][S2].",
    "Customers who signed up before the change pay the old price until their plan renews [S1][S2].",
]
MOON = "Acme Cloud was founded on the Moon in 1802 by penguins [S2]."
CHUNK_DELAY_S = 0.03


def _script(llm, text: str, **spec) -> None:
    """The planner gets queries; the composer's streamed call gets `text` word by word."""

    def composer(body: dict):
        if body.get("stream"):
            return {"content": text, "chunk_delay_s": CHUNK_DELAY_S, **spec}
        return text

    llm.default = planner_or(composer)


def _service(searxng, web, llm, service_factory, **extra):
    publish_acme(web, searxng)
    return service_factory(
        **searxng.settings_overrides(), **web.settings_overrides(), **llm.settings_overrides(), **extra
    )


def _events(svc, body: dict, on_content=None) -> list[str]:
    """The `data:` payloads of a stream; `on_content(chunk)` is called as each content chunk arrives."""
    out = []
    with httpx.stream("POST", svc.url + "/v1/chat/completions", json={**body, "stream": True}, timeout=60) as r:
        assert r.status_code == 200, r.read()
        for line in r.iter_lines():
            if not line.startswith("data: "):
                continue
            data = line.removeprefix("data: ")
            out.append(data)
            if on_content and data != "[DONE]":
                chunk = json.loads(data)
                if chunk.get("choices") and chunk["choices"][0]["delta"].get("content"):
                    on_content(chunk)
    return out


def _content(events: list[str]) -> str:
    chunks = [json.loads(e) for e in events if e != "[DONE]"]
    return "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c.get("choices"))


def _final(events: list[str]) -> dict:
    chunks = [json.loads(e) for e in events if e != "[DONE]"]
    return next(c for c in chunks if c.get("choices") and c["choices"][0]["finish_reason"])


def _pieces(text: str) -> int:
    return len(re.findall(r"\S+\s*|\s+", text))


def test_complete_prefix_waits_for_the_next_sentence_and_its_markers():
    assert complete_prefix("Acme raised the price [S1].") is None
    assert complete_prefix("Acme raised the price. [S") is None  # the marker may still belong to it
    assert complete_prefix("Acme raised the price. [S1] It") == "Acme raised the price.\n[S1]"
    assert complete_prefix("Acme raised the price [S1]. It is") == "Acme raised the price [S1]."


def test_sentences_leave_before_the_model_finishes(searxng, web, llm, service_factory):
    _script(llm, " ".join(SENTENCES))
    svc = _service(searxng, web, llm, service_factory)
    seen: list[tuple[int, bool]] = []  # at each content chunk: (pieces the model had sent, had it finished)

    def arrived(_chunk):
        log = llm.streams[-1]
        seen.append((log.sent, log.finished))

    body = {**chat(QUESTION, cache="bypass"), "stream_options": {"include_usage": True}}
    events = _events(svc, body, arrived)
    total = llm.streams[-1].total
    assert seen and not seen[0][1], "the first sentence arrived after the model had finished"
    assert seen[0][0] < total, seen
    assert sum(1 for _, finished in seen if not finished) >= 2, "sentences stream while the model writes"

    # The same answer as the non-streamed path for the same model output.
    whole = httpx.post(svc.url + "/v1/chat/completions", json=chat(QUESTION, cache="bypass"), timeout=60).json()
    final = _final(events)
    assert _content(events) == whole["choices"][0]["message"]["content"]
    assert final["choices"][0]["finish_reason"] == "stop"
    assert final["citations"] == whole["citations"]
    assert final["grounding"]["status"] == "grounded"
    assert final["grounding"]["groundedness"] == whole["grounding"]["groundedness"]
    assert final["grounding"]["claims"] == whole["grounding"]["claims"]
    assert final["choices"][0]["delta"]["annotations"] == whole["choices"][0]["message"]["annotations"]
    assert "[1]" in _content(events) and "[S1]" not in _content(events)

    # Every chunk matches the published chunk schema; usage then [DONE] close the stream.
    contract = Contract(httpx.get(svc.url + "/openapi.json", timeout=30).json())
    chunks = [json.loads(e) for e in events[:-1]]
    for i, chunk in enumerate(chunks):
        contract.validate(chunk_schema("/v1/chat/completions"), chunk, f"verified stream, data event {i}")
    assert events[-1] == "[DONE]" and chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


@pytest.mark.parametrize("mode", ["drop", "flag"])
def test_an_unsupported_sentence_is_never_sent_in_drop_mode(searxng, web, llm, service_factory, mode):
    _script(llm, " ".join([SENTENCES[0], MOON, *SENTENCES[1:]]))
    svc = _service(searxng, web, llm, service_factory)
    events = _events(svc, chat(QUESTION, cache="bypass", verification=mode))
    g = _final(events)["grounding"]
    assert g["status"] == "grounded"
    if mode == "drop":
        assert "Moon" not in _content(events)  # no content chunk carried it (only grounding names it)
        assert [c["text"] for c in g["dropped_claims"]] == [MOON.replace(" [S2]", "")]
    else:
        assert "Moon" in _content(events)
        flagged = [c for c in g["claims"] if "Moon" in c["text"]]
        assert flagged and flagged[0]["supported"] is False
    whole = httpx.post(
        svc.url + "/v1/chat/completions", json=chat(QUESTION, cache="bypass", verification=mode), timeout=60
    ).json()
    assert _content(events) == whole["choices"][0]["message"]["content"]


def test_an_upstream_failure_after_the_first_sentence_is_an_error_event(searxng, web, llm, service_factory):
    # The model's connection drops two words into the second sentence: the first one has left.
    _script(llm, " ".join(SENTENCES), cut_after=_pieces(SENTENCES[0]) + 3)
    svc = _service(searxng, web, llm, service_factory)
    events = _events(svc, chat(QUESTION, cache="bypass"))
    assert events[-1] == "[DONE]"
    error = json.loads(events[-2])
    assert set(error) == {"error"} and error["error"]["type"] and error["error"]["message"]
    assert _content(events[:-2]).startswith("Acme Cloud raised the price of its Pro plan to $30 per month")
    assert "Pro plan includes" not in _content(events[:-2]), "no sentence leaves unfinished"
    contract = Contract(httpx.get(svc.url + "/openapi.json", timeout=30).json())
    for i, data in enumerate(events[:-1]):
        contract.validate(chunk_schema("/v1/chat/completions"), json.loads(data), f"event {i}")


def test_a_failure_before_the_first_sentence_falls_back(searxng, web, llm, service_factory):
    _script(llm, " ".join(SENTENCES), cut_after=3)
    svc = _service(searxng, web, llm, service_factory)
    events = _events(svc, chat(QUESTION, cache="bypass"))
    final = _final(events)
    assert events[-1] == "[DONE]" and final["grounding"]["composer"] == "extractive:fallback"
    assert final["grounding"]["status"] in ("grounded", "abstained")


def test_a_client_that_hangs_up_closes_the_model_stream(searxng, web, llm, service_factory):
    _script(llm, " ".join(SENTENCES * 3))
    svc = _service(searxng, web, llm, service_factory)
    with httpx.Client(timeout=60) as client:
        with client.stream("POST", svc.url + "/v1/chat/completions", json={**chat(QUESTION), "stream": True}) as r:
            for line in r.iter_lines():
                if line.startswith("data: ") and '"content":"Acme' in line:
                    break  # the first sentence: hang up
    log = llm.streams[-1]
    for _ in range(200):  # wait for the service to notice (bounded), then check what the model sent
        if log.closed_by_client or log.finished:
            break
        time.sleep(0.02)
    assert log.closed_by_client and not log.finished, log
    sent = log.sent
    time.sleep(5 * CHUNK_DELAY_S)
    assert log.sent == sent < log.total, "no further upstream tokens after the client left"


def test_a_cached_answer_streams_at_once(searxng, web, llm, service_factory):
    _script(llm, " ".join(SENTENCES))
    svc = _service(searxng, web, llm, service_factory)
    first = _events(svc, chat(QUESTION, freshness_days=30))
    streams = len(llm.streams)
    again = _events(svc, chat(QUESTION, freshness_days=30))
    assert len(llm.streams) == streams, "the cached answer asked no model"
    assert _content(again) == _content(first)
    assert _final(again)["grounding"]["cache"]["answer"] == "hit"


async def test_the_openai_sdk_reads_a_verified_stream(searxng, web, llm, service_factory, openai_client):
    _script(llm, " ".join(SENTENCES))
    svc = _service(searxng, web, llm, service_factory)
    client = openai_client(svc)
    stream = await client.chat.completions.create(
        model="grounded-answer",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"grounding": {"cache": "bypass"}},
    )
    pieces, final, usage = [], None, None
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        if chunk.choices and chunk.choices[0].finish_reason:
            final = chunk.model_dump()
        if chunk.usage:
            usage = chunk.usage
    assert len(pieces) >= 4 and "".join(pieces).startswith("Acme Cloud raised the price")
    assert final is not None and final["grounding"]["composer"].startswith("llm:")
    assert final["citations"] and usage is not None and usage.completion_tokens > 0


def test_an_answer_that_fails_after_its_first_sentence_ends_as_content_filter(searxng, web, llm, service_factory):
    unsupported = [
        MOON,
        "Acme Cloud employs four thousand astronauts on Mars [S1].",
        "The Pro plan ships with a free pony for every customer [S2].",
    ]
    _script(llm, " ".join([SENTENCES[0], *unsupported]))
    svc = _service(searxng, web, llm, service_factory)
    events = _events(svc, chat(QUESTION, cache="bypass"))
    final = _final(events)
    whole = httpx.post(svc.url + "/v1/chat/completions", json=chat(QUESTION, cache="bypass"), timeout=60).json()
    # The first sentence was verified and sent; the finished answer fell under the minimum groundedness.
    assert _content(events).startswith("Acme Cloud raised the price of its Pro plan to $30 per month")
    assert not any(word in _content(events) for word in ("Moon", "Mars", "pony"))
    assert final["choices"][0]["finish_reason"] == "content_filter"
    assert final["grounding"]["status"] == whole["grounding"]["status"] == "abstained"
    assert final["grounding"]["abstention"]["reason"] == whole["grounding"]["abstention"]["reason"]
    assert final["grounding"]["abstention"]["reason"] == "unsupported_answer"


def test_max_tokens_cuts_the_stream_where_the_answer_is_cut(searxng, web, llm, service_factory):
    _script(llm, " ".join(SENTENCES))
    svc = _service(searxng, web, llm, service_factory)
    body = {**chat(QUESTION, cache="bypass"), "max_tokens": 40}
    events = _events(svc, body)
    whole = httpx.post(svc.url + "/v1/chat/completions", json=body, timeout=60).json()
    assert _content(events) == whole["choices"][0]["message"]["content"]
    assert _final(events)["choices"][0]["finish_reason"] == whole["choices"][0]["finish_reason"] == "length"


def test_a_model_stopped_by_max_tokens_answers_with_finish_reason_length(searxng, web, llm, service_factory):
    # The model ran into the limit itself (its reply fits, so the service cuts nothing): the client is
    # told the answer is incomplete, in the JSON answer and at the end of the stream alike.
    def composer(body: dict):
        spec = {"content": " ".join(SENTENCES[:2]), "finish_reason": "length"}
        return {**spec, "chunk_delay_s": CHUNK_DELAY_S} if body.get("stream") else spec

    llm.default = planner_or(composer)
    svc = _service(searxng, web, llm, service_factory)
    body = {**chat(QUESTION, cache="bypass"), "max_tokens": 500}
    whole = httpx.post(svc.url + "/v1/chat/completions", json=body, timeout=60).json()
    events = _events(svc, body)
    assert whole["grounding"]["status"] == "grounded" and len(whole["grounding"]["claims"]) == 2
    assert _final(events)["choices"][0]["finish_reason"] == whole["choices"][0]["finish_reason"] == "length"


def test_the_responses_stream_reads_the_same_verified_sentences(searxng, web, llm, service_factory):
    _script(llm, " ".join(SENTENCES))
    svc = _service(searxng, web, llm, service_factory)
    body = {"model": "grounded-answer", "input": QUESTION, "stream": True, "grounding": {"cache": "bypass"}}
    events, seen = [], []
    with httpx.stream("POST", svc.url + "/v1/responses", json=body, timeout=60) as r:
        assert r.status_code == 200, r.read()
        for line in r.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
                if events[-1]["type"] == "response.output_text.delta":
                    seen.append(llm.streams[-1].finished)
    assert seen and not seen[0], "the first delta arrived after the model had finished"
    deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    done = next(e for e in events if e["type"] == "response.output_text.done")
    assert deltas == done["text"] and events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["grounding"]["status"] == "grounded"
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    contract = Contract(httpx.get(svc.url + "/openapi.json", timeout=30).json())
    for i, event in enumerate(events):
        contract.validate(chunk_schema("/v1/responses"), event, f"Responses event {i} ({event['type']})")


def test_a_models_count_streams_without_the_questions_noun(searxng, web, llm, service_factory):
    """The stream checks the asked kind as settle checks a model's answer: "1,200 companies" answers
    "how many customers" (before, nothing left until the model had finished)."""
    story = [
        "Acme Cloud says 1,200 companies now use its Pro plan, up from 800 companies a year ago.",
        "The Pro plan includes unlimited projects and priority support for every workspace.",
        "Existing customers keep their current price until their next renewal date.",
    ]
    urls = [
        web.site(name).add_article(f"/acme-users-{i}", "Acme Cloud Pro users", story, published=TODAY_STREAM)
        for i, name in enumerate(("news-a.test", "blog-b.test"))
    ]
    searxng.set_default([searx_result(u, "Acme Cloud Pro users", "Acme Cloud Pro plan users") for u in urls])
    answer = " ".join(s.rstrip(".") + " [S1]." for s in story)  # the two copies are one source
    _script(llm, answer)
    svc = service_factory(**searxng.settings_overrides(), **web.settings_overrides(), **llm.settings_overrides())
    seen: list[bool] = []
    events = _events(
        svc,
        chat("How many customers does the Acme Cloud Pro plan have?", cache="bypass", min_sources=1),
        lambda _chunk: seen.append(llm.streams[-1].finished),
    )
    assert _final(events)["grounding"]["status"] == "grounded", _final(events)["grounding"].get("abstention")
    assert "1,200 companies" in _content(events)
    assert seen and not seen[0], "the first sentence waited for the model to finish"
