"""Upstream faults through the real service: the simulated model answers 429 (Retry-After), 500,
503, hangs or sends invalid JSON; the simulated search engines are down (503, refused). The
service retries a bounded number of times (counted on the simulators), falls back (the fallback
model, the extractive composer, the next search provider) and says so in grounding.fallbacks,
opens its circuit breakers and then stops calling, and answers — or abstains — inside the deadline.
`/readyz` turns 503 when the model endpoint does not answer.

Time bounds are generous ("finished well before the deadline plus slack"), never exact."""

from __future__ import annotations

import time

import httpx
import pytest

from simulators import free_port
from tests.api.helpers import chat, planner_or, publish_acme

QUESTION = "What does the Acme Cloud Pro plan cost?"
GOOD = "Acme Cloud raised the Pro plan price to $30 per month [S1][S2]."
COMPOSER, FALLBACK = "gpt-4o", "gpt-4.1-mini"  # the planner is gpt-4o-mini (Settings defaults)
FAST_RETRIES = {"retry_max_attempts": 2, "retry_base_delay_s": 0.01, "retry_max_delay_s": 0.05}
NO_BREAKER = {"breaker_min_calls": 1000}  # tests about retries keep the breaker out of the count


def _stack(searxng, web, llm, service_factory, **extra):
    return service_factory(
        **{
            **searxng.settings_overrides(),
            **web.settings_overrides(),
            **llm.settings_overrides(),
            **FAST_RETRIES,
            **NO_BREAKER,
            **extra,
        }
    )


def _ask(svc, question: str = QUESTION, **grounding) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    r = httpx.post(svc.url + "/v1/chat/completions", json=chat(question, cache="bypass", **grounding), timeout=60)
    return r, time.monotonic() - started


def _calls(llm, model: str) -> int:
    return sum(1 for b in llm.bodies() if b.get("model") == model)


def _by_model(replies: dict[str, object]):
    """A composer script: a reply per requested model (the judge and other models get GOOD)."""

    def reply(body: dict):
        return replies.get(body.get("model"), GOOD)

    return planner_or(reply)


# --- the composing model -------------------------------------------------------------------------


def test_model_500_is_retried_then_the_fallback_model_answers_and_is_reported(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = _by_model({COMPOSER: {"status": 500, "error": "upstream exploded"}})
    svc = _stack(searxng, web, llm, service_factory, llm_fallback_model=FALLBACK)
    r, _ = _ask(svc)
    assert r.status_code == 200, r.text
    g = r.json()["grounding"]
    assert g["status"] == "grounded", g.get("abstention")
    assert g["composer"] == f"llm:{FALLBACK}"
    assert _calls(llm, COMPOSER) == 2  # GA_RETRY_MAX_ATTEMPTS, no more
    assert _calls(llm, FALLBACK) >= 1
    [used] = [f for f in g["fallbacks"] if f["stage"] == "compose"]
    assert (used["from"], used["to"], used["count"]) == (COMPOSER, FALLBACK, 1) and "500" in used["reason"]


def test_model_429_with_retry_after_is_retried_and_then_answers(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    state = {"calls": 0}

    def composer(body: dict):
        state["calls"] += 1
        if state["calls"] == 1:
            return {"status": 429, "error": "Rate limit reached", "headers": {"Retry-After": "1"}}
        return GOOD

    llm.default = planner_or(lambda body: composer(body) if body.get("model") == COMPOSER else GOOD)
    svc = _stack(searxng, web, llm, service_factory, deadline_ms=15_000)
    r, elapsed = _ask(svc)
    g = r.json()["grounding"]
    assert r.status_code == 200 and g["status"] == "grounded", g.get("abstention")
    assert g["composer"] == f"llm:{COMPOSER}" and g["fallbacks"] == []
    assert _calls(llm, COMPOSER) == 2
    assert elapsed < 15 + 5


def test_model_503_everywhere_degrades_to_extractive_and_says_so(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = _by_model(
        {COMPOSER: {"status": 503, "error": "overloaded"}, FALLBACK: {"status": 503, "error": "overloaded"}}
    )
    svc = _stack(searxng, web, llm, service_factory, llm_fallback_model=FALLBACK)
    r, _ = _ask(svc)
    assert r.status_code == 200, r.text
    g = r.json()["grounding"]
    assert g["composer"] == "extractive:fallback" and g["status"] == "grounded", g.get("abstention")
    assert "$30" in r.json()["choices"][0]["message"]["content"]
    assert _calls(llm, COMPOSER) == 2 and _calls(llm, FALLBACK) == 2
    hops = [(f["from"], f["to"]) for f in g["fallbacks"] if f["stage"] == "compose"]
    assert hops == [(COMPOSER, FALLBACK), (FALLBACK, "extractive")]


def test_model_invalid_json_is_retried_then_extractive_not_a_500(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = _by_model({COMPOSER: {"raw": "{not json"}})
    svc = _stack(searxng, web, llm, service_factory)
    r, _ = _ask(svc)
    assert r.status_code == 200, r.text
    g = r.json()["grounding"]
    assert g["composer"] == "extractive:fallback", g
    assert _calls(llm, COMPOSER) == 2
    [used] = g["fallbacks"]
    assert (used["stage"], used["from"], used["to"]) == ("compose", COMPOSER, "extractive")
    assert "JSON" in used["reason"]


def test_a_hanging_model_still_answers_inside_the_deadline(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = _by_model({COMPOSER: {"content": GOOD, "delay_s": 60}})
    svc = _stack(searxng, web, llm, service_factory, llm_timeout_s=1.0, deadline_ms=8_000)
    r, elapsed = _ask(svc)
    assert r.status_code == 200, r.text
    g = r.json()["grounding"]
    assert g["composer"] == "extractive:fallback" and g["status"] == "grounded", g
    assert _calls(llm, COMPOSER) == 2  # each attempt cut by GA_LLM_TIMEOUT_S
    assert any(f["to"] == "extractive" and "timed out" in f["reason"] for f in g["fallbacks"])
    assert elapsed < 8 + 2


def test_model_down_on_the_ungrounded_route_is_an_abstention(searxng, web, llm, service_factory):
    llm.fail(503, times=50)
    svc = _stack(searxng, web, llm, service_factory, deadline_ms=10_000)
    r, elapsed = _ask(svc, "Say hello in French.", mode="never")
    assert r.status_code == 200, r.text
    g = r.json()["grounding"]
    assert g["status"] == "abstained" and g["abstention"]["reason"] == "upstream_unavailable"
    assert len(llm.requests) == 2
    assert elapsed < 10 + 5


def test_model_breaker_opens_and_later_requests_skip_the_model(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = _by_model({COMPOSER: {"status": 500, "error": "down"}})
    svc = _stack(searxng, web, llm, service_factory, breaker_min_calls=2, breaker_cooldown_s=600)
    first, _ = _ask(svc)
    assert first.json()["grounding"]["composer"] == "extractive:fallback"
    sent = _calls(llm, COMPOSER)
    assert sent == 2
    second, _ = _ask(svc)
    g = second.json()["grounding"]
    assert g["composer"] == "extractive:fallback" and "circuit open" in g["fallbacks"][0]["reason"]
    assert _calls(llm, COMPOSER) == sent  # failing fast: the model received nothing more
    circuits = httpx.get(svc.url + "/readyz").json()["checks"]["circuits"]
    assert circuits["llm"][COMPOSER]["state"] == "open"


# --- search outage -------------------------------------------------------------------------------


def _extractive(searxng, web, service_factory, **extra):
    """No model: the heuristic planner and the extractive composer."""
    return service_factory(
        **{
            **searxng.settings_overrides(),
            **web.settings_overrides(),
            **FAST_RETRIES,
            **NO_BREAKER,
            "retry_max_attempts": 3,
            **extra,
        }
    )


def test_search_outage_503_bounded_retries_then_an_abstention(searxng, web, service_factory):
    searxng.fail(503, times=None)
    svc = _extractive(searxng, web, service_factory, deadline_ms=10_000)
    r, elapsed = _ask(svc)
    assert r.status_code == 200, r.text
    g = r.json()["grounding"]
    assert g["status"] == "abstained" and g["abstention"]["reason"] == "no_search_results"
    assert len(searxng.requests) == 3 * len(g["queries"])  # GA_RETRY_MAX_ATTEMPTS per query, no more
    assert all("503" in e for e in g["search_errors"])
    assert elapsed < 10 + 5


def test_search_refusing_connections_is_an_abstention_in_time_then_fails_fast(searxng, web, service_factory):
    dead = f"http://127.0.0.1:{free_port()}"
    svc = _extractive(searxng, web, service_factory, searxng_url=dead, deadline_ms=8_000, breaker_min_calls=3)
    r, elapsed = _ask(svc)
    assert r.status_code == 200, r.text
    g = r.json()["grounding"]
    assert g["status"] == "abstained" and g["abstention"]["reason"] == "no_search_results"
    assert any("unreachable" in e for e in g["search_errors"])
    assert elapsed < 8 + 5
    again, _ = _ask(svc, "What does the Acme Cloud Business plan cost?")
    errors = again.json()["grounding"]["search_errors"]
    assert errors and all("circuit open" in e for e in errors)


def test_search_breaker_opens_fails_fast_then_half_open_probe_closes_it(searxng, web, service_factory):
    searxng.fail(500, times=None)
    svc = _extractive(searxng, web, service_factory, breaker_min_calls=2, breaker_cooldown_s=1.0)
    first, _ = _ask(svc)
    assert first.json()["grounding"]["status"] == "abstained"
    sent = len(searxng.requests)
    assert 2 <= sent <= 3 * len(first.json()["grounding"]["queries"])
    ready = httpx.get(svc.url + "/readyz")
    assert ready.status_code == 200  # an open search circuit degrades answers, it does not unready the pod
    assert ready.json()["checks"]["circuits"]["search"]["searxng"]["state"] == "open"
    exported = httpx.get(svc.url + "/metrics").text
    assert 'grounded_circuit_state{kind="search",provider="searxng"} 2.0' in exported

    second, _ = _ask(svc, "What does the Acme Cloud Business plan cost?")
    g = second.json()["grounding"]
    assert g["status"] == "abstained" and any("circuit open" in e for e in g["search_errors"])
    assert len(searxng.requests) == sent  # open: not one more call

    searxng.reset()
    publish_acme(web, searxng)
    time.sleep(1.2)  # the cool-down passes: half-open
    third, _ = _ask(svc)
    assert 1 <= len(searxng.requests) <= len(third.json()["grounding"]["queries"])
    circuits = httpx.get(svc.url + "/readyz").json()["checks"]["circuits"]
    assert circuits["search"]["searxng"]["state"] == "closed"  # the probe succeeded


def test_search_fallback_provider_is_used_without_retries_and_reported(brave, searxng, web, service_factory):
    urls = publish_acme(web, searxng)
    brave.fail(503, times=None)
    svc = service_factory(
        search_providers=["brave", "searxng"],
        brave_api_key=brave.api_key,
        brave_url=brave.url + brave.path,
        searxng_url=searxng.url,
        **web.settings_overrides(),
        **FAST_RETRIES,
        **NO_BREAKER,
    )
    r, _ = _ask(svc, min_sources=1)
    g = r.json()["grounding"]
    assert g["status"] == "grounded", g.get("abstention")
    assert set(r.json()["citations"]) <= set(urls)
    assert len(brave.queries()) == len(g["queries"])  # a fallback exists: fail over, do not retry
    [used] = g["fallbacks"]
    assert (used["stage"], used["from"], used["to"], used["count"]) == ("search", "brave", "searxng", len(g["queries"]))
    assert "503" in used["reason"]


# --- /readyz -------------------------------------------------------------------------------------


def test_readyz_is_503_naming_the_model_when_its_endpoint_fails(searxng, web, llm, service_factory):
    llm.models_status = 503
    svc = _stack(searxng, web, llm, service_factory, readyz_model_probe_ttl_s=60)
    first = httpx.get(svc.url + "/readyz")
    assert first.status_code == 503
    body = first.json()
    assert body["status"] == "not_ready" and body["failing"] == ["model"]
    assert body["checks"]["model"]["endpoints"]["primary"]["detail"] == "GET /models answered 503"
    llm.models_status = 200
    assert httpx.get(svc.url + "/readyz").status_code == 503  # the cached probe, not a new one
    assert llm.models_calls == 1


def test_readyz_recovers_when_the_model_answers_again(searxng, web, llm, service_factory):
    llm.models_status = 500
    svc = _stack(searxng, web, llm, service_factory, readyz_model_probe_ttl_s=0)
    assert httpx.get(svc.url + "/readyz").status_code == 503
    llm.models_status = 200
    ready = httpx.get(svc.url + "/readyz")
    assert ready.status_code == 200 and ready.json()["failing"] == []
    assert ready.json()["checks"]["model"]["ok"] is True


@pytest.mark.parametrize("status", [401, 403])
def test_readyz_refused_key_is_not_ready(searxng, web, llm, service_factory, status):
    llm.models_status = status
    svc = _stack(searxng, web, llm, service_factory)
    assert httpx.get(svc.url + "/readyz").status_code == 503


def test_readyz_model_endpoint_unreachable(searxng, web, service_factory):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    svc = service_factory(**searxng.settings_overrides(), **web.settings_overrides(), llm_base_url=dead)
    started = time.monotonic()
    r = httpx.get(svc.url + "/readyz", timeout=30)
    assert r.status_code == 503 and r.json()["failing"] == ["model"]
    assert "unreachable" in r.json()["checks"]["model"]["endpoints"]["primary"]["detail"]
    assert time.monotonic() - started < 10


def test_readyz_skips_the_model_probe_in_extractive_mode(searxng, web, llm, service_factory):
    svc = service_factory(**searxng.settings_overrides(), **web.settings_overrides())
    r = httpx.get(svc.url + "/readyz")
    assert r.status_code == 200 and r.json()["failing"] == []
    assert "skipped" in r.json()["checks"]["model"]
    assert llm.models_calls == 0
