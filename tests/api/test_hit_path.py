"""The lean path for answer-cache hits (app/api/hit_path.py), over HTTP against the embedded
defaults: a repeated request body is answered before routing, with the same response the route
gives for a hit, the same auth and quotas, and it falls back to the route when the cached answer is
gone without counting the request twice."""

from __future__ import annotations

import json
import re

import httpx
import pytest
import redis

from tests.api.helpers import chat

QUESTION = "What is tomllib?"
PATH = "/v1/chat/completions"
# Fields that differ between any two responses: the request's own ids and time.
VOLATILE_HEADERS = {"x-request-id", "date", "x-grounding-request-id", "content-length"}


def _count(svc, outcome: str = "served") -> float:
    """The hit path's counter (process-wide: the test services share one registry, so tests read
    differences)."""
    text = httpx.get(svc.url + "/metrics").text
    found = re.search(rf'^grounded_hit_path_total\{{outcome="{outcome}"\}} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


def _post_raw(svc, raw: bytes, key: str | None = None, path: str = PATH) -> httpx.Response:
    headers = {"content-type": "application/json"}
    if key is not None:
        headers["authorization"] = f"Bearer {key}"
    return httpx.post(svc.url + path, content=raw, headers=headers, timeout=60)


def _comparable(resp: httpx.Response) -> tuple[dict, dict]:
    body = resp.json()
    rid = body["grounding"].pop("request_id")
    assert body.pop("id") == "chatcmpl-" + rid.removeprefix("req_")
    body.pop("created")
    headers = {k: v for k, v in resp.headers.items() if k.lower() not in VOLATILE_HEADERS}
    return body, headers


def test_a_repeat_is_served_before_routing_with_the_routes_own_hit_response(service_factory):
    svc = service_factory()
    base = _count(svc)

    def _served() -> float:
        return _count(svc) - base

    raw = json.dumps(chat(QUESTION, freshness_days=30)).encode()
    first = _post_raw(svc, raw)
    assert first.status_code == 200 and first.json()["grounding"]["cache"]["answer"] == "miss"
    assert _served() == 0

    lean = _post_raw(svc, raw)  # same bytes: the hit path
    assert _served() == 1
    # Same request, other bytes (spacing): the route's hit, the reference the hit path must equal.
    routed = _post_raw(svc, json.dumps(chat(QUESTION, freshness_days=30), indent=1).encode())
    assert _served() == 1
    assert lean.status_code == routed.status_code == 200
    assert lean.json()["grounding"]["cache"] == {"answer": "hit"}
    assert _comparable(lean) == _comparable(routed)
    assert lean.headers["x-request-id"] != routed.headers["x-request-id"]

    # The hit's trace points at the run that produced the answer, as a routed hit's does.
    trace = httpx.get(svc.url + "/v1/traces/" + lean.headers["x-request-id"]).json()
    assert trace["served_from"] == "answer_cache"
    assert trace["original_request_id"] == first.headers["x-request-id"]

    # The other chat path and a stream of the same question are not this body: they take the route.
    other = _post_raw(svc, raw, path="/v1/grounded-answers")
    assert other.status_code == 200 and other.json()["grounding"]["cache"] == {"answer": "hit"}
    stream = _post_raw(svc, json.dumps({**chat(QUESTION, freshness_days=30), "stream": True}).encode())
    assert stream.headers["content-type"].startswith("text/event-stream")
    assert _served() == 1
    # The request's own parameters are its own on a hit as on a miss.
    assert lean.json()["model"] == first.json()["model"]


def test_the_hit_path_checks_keys_and_quotas_like_the_route(service_factory):
    svc = service_factory(api_keys=["a", "b"], rate_limit_rpm=4)
    base = _count(svc)

    def _served() -> float:
        return _count(svc) - base

    raw = json.dumps(chat(QUESTION)).encode()
    assert _post_raw(svc, raw, "a").status_code == 200
    hit = _post_raw(svc, raw, "a")
    assert hit.status_code == 200 and _served() == 1
    assert hit.headers["x-ratelimit-remaining-requests"] == "2"
    routed_401 = _post_raw(svc, json.dumps(chat(QUESTION), indent=1).encode(), "wrong")
    for key in ("wrong", None):
        refused = _post_raw(svc, raw, key)
        assert refused.status_code == 401 and refused.json() == routed_401.json()
        assert refused.headers["x-request-id"].startswith("req_")
    assert _served() == 1
    # Key b has its own allowance; key a runs out on the hit path with the route's 429.
    assert _post_raw(svc, raw, "b").headers["x-ratelimit-remaining-requests"] == "3"
    codes = [_post_raw(svc, raw, "a").status_code for _ in range(3)]
    if codes != [200, 200, 429]:  # a minute boundary passed: the window restarted
        pytest.skip(f"the rate window turned during the test: {codes}")
    over = _post_raw(svc, raw, "a")
    assert over.status_code == 429 and over.json()["error"]["code"] == "rate_limit_exceeded"
    assert int(over.headers["Retry-After"]) >= 1


def _reset_s(response: httpx.Response) -> int:
    return int(response.headers["x-ratelimit-reset-requests"].removesuffix("s"))


def test_a_gone_answer_falls_back_to_the_route_and_counts_once(service_factory, redis_url):
    svc = service_factory(redis_url=redis_url, api_keys=["k"], rate_limit_rpm=50)
    base = {o: _count(svc, o) for o in ("served", "fell_through")}

    def _served(outcome: str = "served") -> float:
        return _count(svc, outcome) - base[outcome]

    raw = json.dumps(chat(QUESTION, freshness_days=30)).encode()
    first = _post_raw(svc, raw, "k")
    assert first.status_code == 200 and first.json()["grounding"]["status"] == "grounded"  # so cached
    left = int(first.headers["x-ratelimit-remaining-requests"])
    client = redis.Redis.from_url(redis_url)
    try:
        for key in client.scan_iter("ga:answer:*"):
            client.delete(key)
    finally:
        client.close()
    again = _post_raw(svc, raw, "k")
    assert again.status_code == 200
    assert again.json()["grounding"]["cache"]["answer"] == "miss"  # recomputed by the route
    assert _served("fell_through") == 1 and _served() == 0
    # Windows are fixed minutes: the time to the reset only grows when a boundary passed between the
    # two requests (then the new window's count starts again, and "left" says nothing).
    if _reset_s(again) > _reset_s(first):
        pytest.skip("the rate window turned during the test")
    assert int(again.headers["x-ratelimit-remaining-requests"]) == left - 1  # one request, counted once
    third = _post_raw(svc, raw, "k")
    assert third.json()["grounding"]["cache"] == {"answer": "hit"} and _served() == 1


def test_off_when_its_budget_is_zero(service_factory):
    svc = service_factory(hit_path_memo_bytes=0)
    base = _count(svc)
    raw = json.dumps(chat(QUESTION)).encode()
    _post_raw(svc, raw)
    second = _post_raw(svc, raw)
    assert second.json()["grounding"]["cache"] == {"answer": "hit"}  # the route's hit
    assert _count(svc) == base


def test_an_abstention_leaves_no_recipe(service_factory):
    # Abstentions are not stored in the answer cache: a recipe for one could never be served.
    svc = service_factory()
    base = {o: _count(svc, o) for o in ("served", "fell_through")}
    raw = json.dumps(chat("What was the closing price of Acme Corp shares yesterday?")).encode()
    first = _post_raw(svc, raw)
    assert first.status_code == 200 and first.json()["grounding"]["status"] == "abstained"
    again = _post_raw(svc, raw)
    assert again.json()["grounding"]["status"] == "abstained"
    assert {o: _count(svc, o) - base[o] for o in base} == {"served": 0, "fell_through": 0}


def test_the_key_is_checked_before_the_body_is_read(service_factory):
    """A client without a key is refused at once, as the route refuses it, not after its (slow)
    body: it cannot hold an admission slot for the body-read timeout. The refusal is counted under
    its route in the HTTP metrics."""
    import socket
    from urllib.parse import urlsplit

    svc = service_factory(api_keys=["a"], body_read_timeout_s=120)

    def refused_4xx() -> float:
        text = httpx.get(svc.url + "/metrics").text
        pattern = r'^grounded_http_requests_total\{(?=[^}]*route="/v1/chat/completions")(?=[^}]*status_class="4xx")[^}]*\} (\S+)$'
        return sum(float(v) for v in re.findall(pattern, text, re.M))

    before = refused_4xx()
    parts = urlsplit(svc.url)
    # One byte of a 100-byte body, then nothing: waiting for the body would time this socket out.
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n{"
        )
        reply = sock.recv(4096)
    assert reply.startswith(b"HTTP/1.1 401"), reply[:200]
    assert refused_4xx() == before + 1
