"""One bounded, jittered retry loop for every upstream call (search providers and chat models).

What is retried is decided by the error split of app/errors.py: a ProviderTechnicalError (timeout,
refused connection, 429, 5xx, a body that is not the promised JSON) is retried; a
ProviderLogicalError (400/401/403/404, invalid request) fails at once. Between attempts the loop
waits either what the upstream asked for (`Retry-After`, carried by `RetryLater`) or a "full
jitter" backoff, uniform in [0, min(max_delay, base * 2**n)]. It never waits past the caller's
deadline: when the wait would leave no time for another attempt, the last error is raised now.

A circuit breaker (app/providers/breaker.py), when given, is asked before every attempt and told
the outcome of each: an open circuit fails fast with CircuitOpen (technical, so the caller moves on
to its fallback) and sends nothing upstream.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, TypeVar

from app import metrics
from app.errors import ProviderLogicalError, ProviderTechnicalError

if TYPE_CHECKING:
    from app.providers.breaker import CircuitBreaker
    from app.settings import Settings

T = TypeVar("T")
MIN_ATTEMPT_S = 0.05  # an attempt with less time than this left is not started
MAX_RETRY_AFTER_S = 3600.0  # a longer Retry-After is treated as "not today"


class RetryLater(ProviderTechnicalError):
    """A technical failure whose upstream said when to come back (429/503 `Retry-After`)."""

    def __init__(self, message: str, *, provider: str = "", retry_after: float | None = None, **kw):
        super().__init__(message, provider=provider, **kw)
        self.retry_after = retry_after


class CircuitOpen(ProviderTechnicalError):
    """The circuit for this upstream is open: nothing was sent."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 3
    base_delay_s: float = 0.2
    max_delay_s: float = 2.0

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        return cls(
            max_attempts=max(1, settings.retry_max_attempts),
            base_delay_s=max(0.0, settings.retry_base_delay_s),
            max_delay_s=max(0.0, settings.retry_max_delay_s),
        )

    def backoff(self, retry: int, rng: Callable[[], float] = random.random) -> float:
        """Full jitter: uniform in [0, min(max_delay, base * 2**retry)] for the retry-th retry (0-based)."""
        return rng() * min(self.max_delay_s, self.base_delay_s * (2**retry))


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` value: delta-seconds ("3", "1.5") or an HTTP date.
    None when absent or unreadable; 0 for a date in the past."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return min(MAX_RETRY_AFTER_S, max(0.0, seconds))


def retry_after_from_headers(headers) -> float | None:
    """`retry-after-ms` (OpenAI's, milliseconds) first, then `retry-after`."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return min(MAX_RETRY_AFTER_S, max(0.0, float(ms) / 1000))
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))


def _reason(exc: ProviderTechnicalError) -> str:
    """A bounded label for the retries counter."""
    if isinstance(exc, RetryLater):
        return "retry_after"
    text = exc.message.lower()
    if "timed out" in text or "timeout" in text:
        return "timeout"
    if "unreachable" in text or "connect" in text:
        return "connection"
    if "429" in text or "rate limit" in text:
        return "rate_limited"
    if "json" in text or "malformed" in text or "no choices" in text:
        return "bad_response"
    return "server_error"


async def call_with_retries(
    attempt: Callable[[float], Awaitable[T]],
    *,
    policy: RetryPolicy,
    deadline: float,
    attempt_timeout: float,
    kind: str,
    provider: str,
    breaker: CircuitBreaker | None = None,
    max_attempts: int | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    rng: Callable[[], float] = random.random,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """`await attempt(timeout)` until it returns, fails logically, runs out of attempts or out of
    time (`deadline` is a `clock()` instant). Each attempt gets min(attempt_timeout, time left)."""
    attempts = max(1, max_attempts if max_attempts is not None else policy.max_attempts)
    last: ProviderTechnicalError | None = None
    for n in range(attempts):
        left = deadline - clock()
        if last is not None and left < MIN_ATTEMPT_S:
            raise last  # (the first attempt always goes: the caller decided to make this call)
        if breaker is not None and not breaker.allow():
            metrics.labelled(metrics.CIRCUIT_REJECTIONS, kind, provider).inc()
            after = f" after: {last.message}" if last is not None else ""
            raise CircuitOpen(f"{provider} circuit open (failing fast){after}", provider=provider)
        try:
            result = await attempt(max(MIN_ATTEMPT_S, min(attempt_timeout, left)))
        except ProviderLogicalError:
            if breaker is not None:
                breaker.record_success()  # the upstream answered; the request was at fault
            raise
        except ProviderTechnicalError as exc:
            if breaker is not None:
                breaker.record_failure()
            last = exc
            if n + 1 >= attempts:
                raise
            wait = exc.retry_after if isinstance(exc, RetryLater) and exc.retry_after is not None else None
            if wait is None:
                wait = policy.backoff(n, rng)
            if clock() + wait + MIN_ATTEMPT_S >= deadline:
                # Retry-After (or the backoff) is capped by the deadline: when no attempt would fit
                # after the wait, fail now rather than at the deadline.
                raise
            metrics.labelled(metrics.UPSTREAM_RETRIES, kind, provider, _reason(exc)).inc()
            if wait > 0:
                await sleep(wait)
            continue
        except BaseException:
            if breaker is not None:
                breaker.release()  # cancelled or a non-provider error: free a half-open probe slot
            raise
        if breaker is not None:
            breaker.record_success()
        return result
    assert last is not None  # the loop returns or raises
    raise last
