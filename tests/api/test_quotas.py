"""Per-key quotas over HTTP: requests per minute and USD per day, 429 in the OpenAI shape with
Retry-After, shared through a real Redis across replicas, counted locally when Redis is down."""

from __future__ import annotations

import httpx

from tests.api.helpers import chat

Q = chat("What is tomllib?")


def _post(svc, key):
    return httpx.post(svc.url + "/v1/chat/completions", json=Q, headers={"Authorization": f"Bearer {key}"}, timeout=60)


def _clear_of_the_minute_boundary(margin_s: float = 8.0) -> None:
    """Windows are whole minutes: start a counting test where it cannot straddle two of them."""
    import time

    into = time.time() % 60
    if into > 60 - margin_s:
        time.sleep(60 - into + 0.1)


def test_requests_per_minute_per_key(service_factory):
    svc = service_factory(api_keys=["a", "b"], rate_limit_rpm=3)
    _clear_of_the_minute_boundary()
    ok = [_post(svc, "a") for _ in range(3)]
    assert [r.status_code for r in ok] == [200, 200, 200]
    assert [r.headers["x-ratelimit-remaining-requests"] for r in ok] == ["2", "1", "0"]
    over = _post(svc, "a")
    assert over.status_code == 429
    err = over.json()["error"]
    assert err["code"] == "rate_limit_exceeded" and err["type"] == "rate_limit_error"
    assert 1 <= int(over.headers["Retry-After"]) <= 60
    # Another key has its own allowance; reads (GET) do not count.
    assert _post(svc, "b").status_code == 200
    assert httpx.get(svc.url + "/v1/models", headers={"Authorization": "Bearer a"}).status_code == 200


def test_daily_budget_per_key(service_factory):
    # Each search call on the local corpus is priced here so that answers cost something.
    svc = service_factory(api_keys=["a", "b"], daily_budget_usd=0.01, search_prices={"local": 0.01})
    first = _post(svc, "a")
    assert first.status_code == 200 and float(first.headers["X-Grounding-Cost-USD"]) >= 0.01
    assert first.headers["x-budget-limit-usd"] == "0.01"
    second = _post(svc, "a")
    assert second.status_code == 429, second.text
    assert second.json()["error"]["code"] == "insufficient_quota"
    assert int(second.headers["Retry-After"]) <= 86_400
    assert _post(svc, "b").status_code == 200


def test_limits_hold_across_replicas_through_redis(service_factory, redis_url):
    import uuid

    key = "shared-" + uuid.uuid4().hex  # a fresh caller: counters from earlier runs do not matter
    a = service_factory(api_keys=[key], rate_limit_rpm=3, redis_url=redis_url)
    b = service_factory(api_keys=[key], rate_limit_rpm=3, redis_url=redis_url)
    _clear_of_the_minute_boundary()
    codes = [_post(s, key).status_code for s in (a, b, a, b)]
    assert codes == [200, 200, 200, 429], codes


def test_redis_down_falls_back_to_counting_in_process(service_factory):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    svc = service_factory(api_keys=["a"], rate_limit_rpm=2, redis_url=f"redis://127.0.0.1:{port}/0")
    _clear_of_the_minute_boundary()
    assert [_post(svc, "a").status_code for _ in range(3)] == [200, 200, 429]


def test_streamed_answers_are_charged_to_the_budget_too(service_factory):
    svc = service_factory(api_keys=["s"], daily_budget_usd=0.01, search_prices={"local": 0.01})
    body = {**Q, "stream": True}
    with httpx.stream(
        "POST", svc.url + "/v1/chat/completions", json=body, headers={"Authorization": "Bearer s"}, timeout=60
    ) as r:
        assert r.status_code == 200
        assert "[DONE]" in "".join(r.iter_text())
    assert _post(svc, "s").status_code == 429  # the stream's spend was booked after it ended
