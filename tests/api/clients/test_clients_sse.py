"""A plain SSE parser (no SDK): what a hand-written client reads off the wire, field by field, as
the SSE specification defines events (lines `field: value`, an empty line ends an event)."""

from __future__ import annotations

import json

import httpx

from tests.api.clients.conftest import GROUNDING, KEY, LONG_QUESTION, QUESTION

AUTH = {"Authorization": f"Bearer {KEY}"}


def parse_sse(raw: str) -> list[dict[str, str]]:
    """Events as {field: value}; `data` lines of one event joined with newlines."""
    events: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in raw.replace("\r\n", "\n").split("\n"):
        if line == "":
            if current:
                events.append(current)
            current = {}
            continue
        if line.startswith(":"):
            continue  # a comment
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        current[field] = current[field] + "\n" + value if field in current else value
    if current:
        events.append(current)
    return events


def _stream(base_url: str, path: str, body: dict) -> tuple[httpx.Response, str]:
    with httpx.stream("POST", base_url + path, json=body, headers=AUTH, timeout=60) as r:
        raw = r.read().decode()
    return r, raw


def test_chat_stream_on_the_wire(base_url: str):
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": LONG_QUESTION}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "grounding": GROUNDING,
    }
    r, raw = _stream(base_url, "/chat/completions", body)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["cache-control"] == "no-cache" and r.headers["x-request-id"]
    events = parse_sse(raw)
    assert all(set(e) == {"data"} for e in events), "chat chunks are data-only events"
    assert events[-1]["data"] == "[DONE]"
    chunks = [json.loads(e["data"]) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    *_, final, usage = chunks
    assert final["choices"][0]["finish_reason"] == "stop" and final["choices"][0]["delta"]["content"]
    assert final["grounding"]["status"] == "grounded" and final["citations"]
    assert final["choices"][0]["delta"]["annotations"][0]["type"] == "url_citation"
    assert usage["choices"] == [] and usage["usage"]["prompt_tokens"] > 0
    assert len({c["id"] for c in chunks}) == 1


def test_responses_stream_on_the_wire(base_url: str):
    r, raw = _stream(base_url, "/responses", {"model": "m", "input": QUESTION, "stream": True, "grounding": GROUNDING})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(raw)
    assert all(set(e) == {"event", "data"} for e in events), "Responses events name their type"
    payloads = [json.loads(e["data"]) for e in events]
    assert [p["type"] for p in payloads] == [e["event"] for e in events]
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    assert payloads[0]["type"] == "response.created" and payloads[-1]["type"] == "response.completed"
    final = payloads[-1]["response"]
    text = "".join(p["delta"] for p in payloads if p["type"] == "response.output_text.delta")
    assert text == final["output"][0]["content"][0]["text"]
    assert final["grounding"]["status"] == "grounded" and final["usage"]["output_tokens"] > 0
    assert "[DONE]" not in raw  # the Responses stream ends with its terminal event, as OpenAI's does
