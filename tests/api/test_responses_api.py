"""POST /v1/responses and GET /v1/responses/{id} over HTTP: storage per API key, store: false,
previous_response_id, refused bodies, ignored parameters, and response.failed when the answer
cannot be made after the stream has started."""

from __future__ import annotations

import json

import httpx
import pytest

from app.errors import UpstreamError
from simulators import ServiceServer

KEY, OTHER = "sk-resp-one", "sk-resp-two"
QUESTION = "What is asyncio.TaskGroup?"
GROUNDING = {"freshness_days": 3650, "min_sources": 1}


def _auth(key: str = KEY) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def svc():
    service = ServiceServer(api_keys=[KEY, OTHER])
    service.start()
    try:
        yield service
    finally:
        service.stop()


def create(svc: ServiceServer, key: str = KEY, **body) -> httpx.Response:
    body.setdefault("input", QUESTION)
    body.setdefault("grounding", GROUNDING)
    return httpx.post(svc.url + "/v1/responses", json=body, headers=_auth(key), timeout=60)


def retrieve(svc: ServiceServer, response_id: str, key: str | None = KEY) -> httpx.Response:
    return httpx.get(svc.url + f"/v1/responses/{response_id}", headers=_auth(key) if key else {}, timeout=30)


def test_a_stored_response_is_readable_by_its_key_only(svc):
    r = create(svc, model="my-model", metadata={"a": "b"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "response" and body["status"] == "completed" and body["model"] == "my-model"
    assert body["grounding"]["status"] == "grounded" and r.headers["x-grounding-status"] == "grounded"
    assert retrieve(svc, body["id"]).json() == body
    for other in (retrieve(svc, body["id"], OTHER), retrieve(svc, "resp_unknown")):
        assert other.status_code == 404
        assert other.json()["error"]["type"] == "invalid_request_error" and other.json()["error"]["param"]
    assert retrieve(svc, body["id"], key=None).status_code == 401


def test_store_false_is_not_kept(svc):
    body = create(svc, store=False).json()
    assert body["store"] is False
    assert retrieve(svc, body["id"]).status_code == 404


def test_previous_response_id_continues_the_conversation(svc):
    first = create(svc, instructions="Be brief.").json()
    follow = create(svc, input="what about its tasks?", previous_response_id=first["id"]).json()
    assert follow["previous_response_id"] == first["id"] and follow["instructions"] is None
    assert any("TaskGroup" in q for q in follow["grounding"]["queries"]), follow["grounding"]["queries"]
    r = create(svc, OTHER, input="what about its tasks?", previous_response_id=first["id"])
    assert r.status_code == 404 and r.json()["error"]["param"] == "previous_response_id"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"input": []}, "input"),
        ({"input": [{"role": "assistant", "content": "hello"}]}, "input"),
        ({"input": [{"type": "function_call_output", "call_id": "x", "output": "1"}]}, "input[0].type"),
        ({"input": [{"role": "tool", "content": "x"}]}, "input[0].role"),
        ({"background": True}, "background"),
        ({"tools": [{"type": "web_search"}]}, "tools"),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"text": {"format": {"type": "json_schema", "name": "x", "schema": {}}}}, "text.format"),
        ({"max_output_tokens": 0}, "max_output_tokens"),
        ({"metadata": {str(i): "v" for i in range(17)}}, "metadata"),
        ({"grounding": {"mode": "sometimes"}}, "grounding.mode"),
        # Chat parameters ride along and are checked as chat checks them.
        ({"n": 2}, "n"),
        ({"seed": "not a number"}, "seed"),
    ],
)
def test_refused_bodies_are_400_naming_the_param(svc, body, param):
    r = create(svc, **body)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param, r.json()


def test_accepted_but_unapplied_parameters_are_named(svc):
    body = create(svc, reasoning={"effort": "low"}, truncation="auto", cache="x").json()
    assert {"reasoning", "truncation"} <= set(body["grounding"]["ignored_params"])


def test_missing_input_is_400(svc):
    r = httpx.post(svc.url + "/v1/responses", json={"model": "m"}, headers=_auth(), timeout=30)
    assert r.status_code == 400 and r.json()["error"]["param"] == "input"


def _failing(monkeypatch):
    import app.api.responses as responses

    async def fail(*args, **kwargs):
        raise UpstreamError("every search provider is down", provider="test")

    monkeypatch.setattr(responses, "serve_chat", fail)


def test_a_failure_after_the_stream_started_is_response_failed(svc, monkeypatch):
    _failing(monkeypatch)
    with httpx.stream(
        "POST", svc.url + "/v1/responses", json={"input": QUESTION, "stream": True}, headers=_auth(), timeout=30
    ) as r:
        assert r.status_code == 200
        events = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")]
    assert [e["type"] for e in events] == ["response.created", "response.in_progress", "response.failed"]
    failed = events[-1]["response"]
    assert failed["status"] == "failed" and failed["error"]["code"] == "server_error"
    assert "search provider" in failed["error"]["message"] and failed["output"] == []
    assert failed["id"] == events[0]["response"]["id"]


def test_a_failure_without_stream_is_an_error_body(svc, monkeypatch):
    _failing(monkeypatch)
    r = create(svc)
    assert r.status_code == 502 and r.json()["error"]["type"] == "upstream_error"


def test_the_sdk_reads_response_failed(svc, monkeypatch):
    import openai

    _failing(monkeypatch)
    client = openai.OpenAI(base_url=svc.url + "/v1", api_key=KEY, max_retries=0)
    events = list(client.responses.create(model="m", input=QUESTION, stream=True))
    assert events[-1].type == "response.failed" and events[-1].response.error.code == "server_error"
