"""Upstream resilience at the provider level: the shared retry loop (app/providers/retry.py) and the
circuit breaker (app/providers/breaker.py) against the simulated model server and SearXNG.

Attempts are counted on the simulators (what really went upstream); waits are recorded through an
injected `sleep` and breaker time comes from a fake clock, so nothing here asserts on timing
beyond generous "finished well before the deadline" bounds."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from prometheus_client import REGISTRY

from app.errors import ProviderLogicalError, ProviderTechnicalError
from app.providers.breaker import CLOSED, HALF_OPEN, OPEN, BreakerBoard, BreakerConfig, CircuitBreaker
from app.providers.llm.openai_compat import OpenAICompatibleChatModel
from app.providers.llm.resilient import ResilientChatModel
from app.providers.retry import CircuitOpen, RetryPolicy, call_with_retries, parse_retry_after
from app.providers.search.base import SearchQuery
from app.settings import Settings
from simulators import free_port

HELLO = [{"role": "user", "content": "hello"}]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Sleeps:
    """An injected asyncio.sleep that records the waits and does not wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def _settings(llm, **kw) -> Settings:
    base = {**llm.settings_overrides(), "retry_max_attempts": 3, "retry_base_delay_s": 0.01, "retry_max_delay_s": 0.05}
    return Settings(**{**base, **kw})


@pytest.fixture
async def raw_model(llm):
    model = OpenAICompatibleChatModel(_settings(llm))
    yield model
    await model.aclose()


async def _retried(model, *, sleep=None, deadline_s=10.0, attempt_timeout=5.0, attempts=3, breaker=None):
    """One model call through the retry loop, with recorded (not real) waits."""
    return await call_with_retries(
        lambda t: model.complete(HELLO, model="gpt-4o", timeout=t),
        policy=RetryPolicy(max_attempts=attempts, base_delay_s=0.01, max_delay_s=0.05),
        deadline=time.monotonic() + deadline_s,
        attempt_timeout=attempt_timeout,
        kind="llm",
        provider="gpt-4o",
        breaker=breaker,
        sleep=sleep or Sleeps(),
    )


# --- Retry-After parsing -------------------------------------------------------------------------


def test_retry_after_in_seconds_and_as_an_http_date():
    now = datetime(2025, 3, 4, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("3", now=now) == 3.0
    assert parse_retry_after(" 1.5 ", now=now) == 1.5
    assert parse_retry_after(format_datetime(now + timedelta(seconds=7), usegmt=True), now=now) == 7.0
    assert parse_retry_after(format_datetime(now - timedelta(seconds=7), usegmt=True), now=now) == 0.0
    assert parse_retry_after("-4", now=now) == 0.0
    for unreadable in (None, "", "soon", "nan"):
        assert parse_retry_after(unreadable, now=now) is None


def test_full_jitter_backoff_is_bounded():
    policy = RetryPolicy(max_attempts=5, base_delay_s=0.2, max_delay_s=1.0)
    assert policy.backoff(0, rng=lambda: 1.0) == pytest.approx(0.2)
    assert policy.backoff(2, rng=lambda: 1.0) == pytest.approx(0.8)
    assert policy.backoff(6, rng=lambda: 1.0) == pytest.approx(1.0)  # capped
    assert policy.backoff(3, rng=lambda: 0.0) == 0.0  # full jitter: anywhere from zero


# --- the model: 429 / 500 / 503 / timeout / invalid JSON -----------------------------------------


async def test_429_retry_after_is_honoured_then_the_call_succeeds(llm, raw_model):
    llm.script({"status": 429, "error": "slow down", "headers": {"Retry-After": "1"}}, "fine")
    sleeps = Sleeps()
    completion = await _retried(raw_model, sleep=sleeps)
    assert completion.text == "fine"
    assert len(llm.requests) == 2
    assert sleeps.waits == [1.0]  # what the upstream asked for, not the jittered backoff


async def test_retry_after_as_an_http_date(llm, raw_model):
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=3), usegmt=True)
    llm.script({"status": 503, "error": "overloaded", "headers": {"Retry-After": when}}, "fine")
    sleeps = Sleeps()
    assert (await _retried(raw_model, sleep=sleeps)).text == "fine"
    assert len(sleeps.waits) == 1 and 1.0 <= sleeps.waits[0] <= 3.0


async def test_retry_after_beyond_the_deadline_fails_now(llm, raw_model):
    llm.script({"status": 429, "error": "slow down", "headers": {"Retry-After": "30"}}, "never asked")
    sleeps = Sleeps()
    with pytest.raises(ProviderTechnicalError, match="429"):
        await _retried(raw_model, sleep=sleeps, deadline_s=5.0)
    assert len(llm.requests) == 1 and sleeps.waits == []  # no pointless wait into the deadline


@pytest.mark.parametrize("status", [500, 503])
async def test_server_errors_are_retried_a_bounded_number_of_times(llm, raw_model, status):
    llm.fail(status, times=10)
    sleeps = Sleeps()
    with pytest.raises(ProviderTechnicalError, match=str(status)):
        await _retried(raw_model, sleep=sleeps, attempts=3)
    assert len(llm.requests) == 3
    assert len(sleeps.waits) == 2 and all(0.0 <= w <= 0.05 for w in sleeps.waits)


async def test_503_then_success_within_the_attempts(llm, raw_model):
    llm.fail(503, times=2)
    llm.script("third time lucky")
    assert (await _retried(raw_model)).text == "third time lucky"
    assert len(llm.requests) == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_logical_errors_are_not_retried(llm, raw_model, status):
    llm.fail(status, times=5)
    with pytest.raises(ProviderLogicalError):
        await _retried(raw_model)
    assert len(llm.requests) == 1


async def test_a_hanging_model_is_cut_by_the_attempt_timeout(llm, raw_model):
    llm.default = {"content": "too late", "delay_s": 30}
    started = time.monotonic()
    with pytest.raises(ProviderTechnicalError, match="timed out"):
        await _retried(raw_model, attempt_timeout=0.3, attempts=2)
    assert time.monotonic() - started < 10  # bounded by two short attempts, not the 30 s hang
    assert len(llm.requests) == 2


@pytest.mark.parametrize(
    "reply",
    [
        {"raw": "{not json"},
        {"raw": "<html>Bad gateway</html>", "media_type": "text/html"},
        {"raw": '{"unexpected": true}'},
        {"raw": "[]"},
    ],
    ids=["invalid-json", "html", "other-object", "array"],
)
async def test_a_body_that_is_not_a_chat_completion_is_technical_and_retried(llm, raw_model, reply):
    llm.script(reply, reply)
    llm.script("recovered")
    assert (await _retried(raw_model)).text == "recovered"
    assert len(llm.requests) == 3


async def test_the_sdk_does_not_retry_on_its_own(llm):
    """The SDK's retries are off whatever GA_LLM_MAX_RETRIES says: one attempt reaches the server."""
    model = OpenAICompatibleChatModel(_settings(llm, llm_max_retries=3))
    try:
        llm.fail(500, times=10)
        with pytest.raises(ProviderTechnicalError):
            await model.complete(HELLO, model="gpt-4o", timeout=5)
        assert len(llm.requests) == 1
    finally:
        await model.aclose()


async def test_the_resilient_model_retries_with_the_settings_attempts(llm):
    model = ResilientChatModel.build(_settings(llm, retry_max_attempts=2), BreakerBoard(BreakerConfig(min_calls=50)))
    try:
        llm.fail(500, times=10)
        with pytest.raises(ProviderTechnicalError):
            await model.complete(HELLO, model="gpt-4o", timeout=10)
        assert len(llm.requests) == 2
    finally:
        await model.aclose()


# --- the circuit breaker -------------------------------------------------------------------------


def _gauge(kind: str, name: str) -> float | None:
    return REGISTRY.get_sample_value("grounded_circuit_state", {"kind": kind, "provider": name})


def test_breaker_opens_on_failure_rate_fails_fast_and_probes_half_open():
    clock = FakeClock()
    breaker = CircuitBreaker(
        "search", "unit-test", BreakerConfig(window_s=30, min_calls=4, failure_rate=0.5, cooldown_s=10), clock=clock
    )
    assert breaker.state == CLOSED and _gauge("search", "unit-test") == 0
    breaker.record_success()
    breaker.record_failure()
    breaker.record_success()
    assert breaker.state == CLOSED  # 1 failure in 3 calls: under min_calls
    breaker.record_failure()
    assert breaker.state == OPEN and _gauge("search", "unit-test") == 2  # 2 of 4 failed
    assert not breaker.allow()
    clock.advance(9.9)
    assert not breaker.allow()
    clock.advance(0.2)
    assert breaker.state == HALF_OPEN and _gauge("search", "unit-test") == 1
    assert breaker.allow()  # the probe
    assert not breaker.allow()  # everyone else still fails fast
    breaker.record_failure()
    assert breaker.state == OPEN and breaker.opened == 2  # the probe failed: another cool-down
    clock.advance(10)
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state == CLOSED and _gauge("search", "unit-test") == 0
    assert breaker.allow() and breaker.allow()


def test_old_failures_leave_the_rolling_window():
    clock = FakeClock()
    breaker = CircuitBreaker(
        "llm", "window-test", BreakerConfig(window_s=5, min_calls=3, failure_rate=0.5), clock=clock
    )
    breaker.record_failure()
    breaker.record_failure()
    clock.advance(6)
    breaker.record_failure()
    assert breaker.state == CLOSED  # the first two are outside the window
    breaker.record_success()
    breaker.record_failure()
    assert breaker.state == OPEN


def test_a_probe_that_never_reports_back_is_released():
    clock = FakeClock()
    breaker = CircuitBreaker("llm", "release-test", BreakerConfig(min_calls=1, cooldown_s=5), clock=clock)
    breaker.record_failure()
    clock.advance(5)
    assert breaker.allow() and not breaker.allow()
    breaker.release()  # e.g. the request was cancelled mid-probe
    assert breaker.allow()


async def test_model_breaker_opens_then_fails_fast_then_half_open_probe(llm):
    clock = FakeClock()
    board = BreakerBoard(BreakerConfig(window_s=60, min_calls=4, failure_rate=0.5, cooldown_s=30), clock=clock)
    model = ResilientChatModel.build(_settings(llm, retry_max_attempts=2), board)
    try:
        llm.fail(500, times=100)
        with pytest.raises(ProviderTechnicalError):
            await model.complete(HELLO, model="gpt-4o", timeout=10)
        with pytest.raises(ProviderTechnicalError):
            await model.complete(HELLO, model="gpt-4o", timeout=10)
        assert len(llm.requests) == 4
        assert board.get("llm", "gpt-4o").state == OPEN

        for _ in range(5):  # open: fails fast, the simulator receives nothing more
            with pytest.raises(CircuitOpen):
                await model.complete(HELLO, model="gpt-4o", timeout=10)
        assert len(llm.requests) == 4
        # Another model has its own breaker.
        llm.reset()
        llm.script("mini answers")
        assert (await model.complete(HELLO, model="gpt-4o-mini", timeout=10)).text == "mini answers"

        llm.reset()
        clock.advance(30)  # cool-down over: half-open
        llm.script({"content": "probe ok", "delay_s": 0.3})
        probe = asyncio.create_task(model.complete(HELLO, model="gpt-4o", timeout=10))
        await asyncio.sleep(0.1)  # the probe is in flight
        with pytest.raises(CircuitOpen):
            await model.complete(HELLO, model="gpt-4o", timeout=10)
        assert (await probe).text == "probe ok"
        assert len(llm.requests) == 1  # exactly one probe went through
        assert board.get("llm", "gpt-4o").state == CLOSED
        llm.script("closed again")
        assert (await model.complete(HELLO, model="gpt-4o", timeout=10)).text == "closed again"
    finally:
        await model.aclose()


# --- search outage -------------------------------------------------------------------------------


async def _search_with_retries(provider, *, attempts=3, breaker=None, sleeps=None):
    return await call_with_retries(
        lambda t: provider.search(SearchQuery("foo release"), timeout=t),
        policy=RetryPolicy(max_attempts=attempts, base_delay_s=0.01, max_delay_s=0.05),
        deadline=time.monotonic() + 10,
        attempt_timeout=2.0,
        kind="search",
        provider=provider.name,
        breaker=breaker,
        sleep=sleeps or Sleeps(),
    )


async def test_search_outage_503_is_retried_a_bounded_number_of_times(searxng, make_provider):
    searxng.fail(503, times=None)
    provider = make_provider("searxng", **searxng.settings_overrides())
    with pytest.raises(ProviderTechnicalError, match="503"):
        await _search_with_retries(provider, attempts=3)
    assert len(searxng.requests) == 3


async def test_search_429_retry_after_is_honoured(searxng, make_provider):
    searxng.fail(429, times=1, retry_after="2")
    provider = make_provider("searxng", **searxng.settings_overrides())
    sleeps = Sleeps()
    result = await _search_with_retries(provider, sleeps=sleeps)
    assert result.provider == "searxng" and sleeps.waits == [2.0]
    assert len(searxng.requests) == 2


async def test_search_connection_refused_is_retried_then_the_breaker_fails_fast(make_provider):
    provider = make_provider("searxng", searxng_url=f"http://127.0.0.1:{free_port()}")
    clock = FakeClock()
    breaker = CircuitBreaker("search", "searxng-refused", BreakerConfig(min_calls=3, cooldown_s=10), clock=clock)
    started = time.monotonic()
    with pytest.raises(ProviderTechnicalError, match="unreachable"):
        await _search_with_retries(provider, attempts=3, breaker=breaker)
    assert breaker.state == OPEN
    with pytest.raises(CircuitOpen):
        await _search_with_retries(provider, attempts=3, breaker=breaker)
    assert time.monotonic() - started < 8
