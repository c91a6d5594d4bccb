"""Per-key quotas: requests per minute and USD spent per UTC day.

Counters live in the shared cache (Redis when configured), so the limits hold across replicas and
workers; when Redis is down each process counts in its own memory (limits then hold per process,
not in total: a degraded but bounded mode, logged through the cache's own error metric).

The request limit is checked before any work; the budget is checked before (already spent up to the
limit = refused) and charged after the response has been sent (a stream included), from the run's
cost ledger the serving code publishes (else the X-Grounding-Cost-USD header), so
one request may overshoot the budget by at most its own cost — the same contract as OpenAI's usage
limits. Both answer 429 in the OpenAI shape with Retry-After; the remaining quota rides on every
answer as x-ratelimit-* headers.
"""

from __future__ import annotations

import math
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import GroundingError
from app.providers.cache.base import Cache
from app.providers.cache.memory import MemoryCache

WINDOW_S = 60
DAY_S = 86_400
COST_HEADER = b"x-grounding-cost-usd"
STATE_HEADERS = "quota_headers"  # scope["state"] key: headers the response carries
STATE_CALLER = "caller"


# The run's cost ledger, published by the serving code (`publish_cost`) for QuotaHeaders to charge
# once the whole response — a stream included — has been sent. A dict holder: the answer may run
# in a child task (cancel-on-disconnect), which sees the holder but could not set a variable here.
_COST: ContextVar[dict[str, Any] | None] = ContextVar("request_cost", default=None)


def publish_cost(ledger: Any) -> None:
    """Called by the serving code with the run's cost object (anything with a `usd` attribute)."""
    holder = _COST.get()
    if holder is not None:
        holder["ledger"] = ledger


class RateLimited(GroundingError):
    status_code = 429
    error_type = "rate_limit_error"  # OpenAI's error type for both codes below
    code = "rate_limit_exceeded"

    def __init__(self, message: str, *, retry_after_s: int, code: str | None = None):
        super().__init__(message, code=code)
        self.retry_after_s = retry_after_s


@dataclass(slots=True)
class QuotaVerdict:
    headers: dict[str, str]


class Quotas:
    """GA_RATE_LIMIT_RPM and GA_DAILY_BUDGET_USD per caller (0 = no limit)."""

    def __init__(self, cache: Cache, rpm: int, daily_usd: float):
        self.cache = cache
        self.rpm = rpm
        self.daily_usd = daily_usd
        self._local = MemoryCache(max_bytes=8 * 1024 * 1024, store="quota")  # the per-process fallback counters

    @property
    def enabled(self) -> bool:
        return self.rpm > 0 or self.daily_usd > 0

    async def _incr(self, key: str, amount: float, ttl_s: int) -> float:
        value = await self.cache.incr(key, amount, ttl_s)
        if value is None:  # Redis down: count here rather than not at all
            value = await self._local.incr(key, amount, ttl_s)
        return value or 0.0

    async def admit(self, caller: str, now: float | None = None) -> QuotaVerdict:
        """Count one request; raise RateLimited when the caller is over a limit."""
        now = time.time() if now is None else now
        headers: dict[str, str] = {}
        if self.daily_usd > 0:
            day = int(now // DAY_S)
            spent = await self._incr(f"quota:usd:{caller}:{day}", 0.0, DAY_S + WINDOW_S)
            reset_s = max(1, math.ceil((day + 1) * DAY_S - now))
            remaining = max(0.0, self.daily_usd - spent)
            headers |= {
                "x-budget-limit-usd": f"{self.daily_usd:g}",
                "x-budget-remaining-usd": f"{remaining:.6f}",
                "x-budget-reset": f"{reset_s}s",
            }
            if spent >= self.daily_usd:
                raise RateLimited(
                    f"daily budget of ${self.daily_usd:g} for this key is spent (GA_DAILY_BUDGET_USD); it resets at "
                    "00:00 UTC",
                    retry_after_s=reset_s,
                    code="insufficient_quota",
                )
        if self.rpm > 0:
            window = int(now // WINDOW_S)
            used = int(await self._incr(f"quota:rpm:{caller}:{window}", 1, WINDOW_S * 2))
            reset_s = max(1, math.ceil((window + 1) * WINDOW_S - now))
            headers |= {
                "x-ratelimit-limit-requests": str(self.rpm),
                "x-ratelimit-remaining-requests": str(max(0, self.rpm - used)),
                "x-ratelimit-reset-requests": f"{reset_s}s",
            }
            if used > self.rpm:
                raise RateLimited(
                    f"rate limit of {self.rpm} requests per minute for this key reached (GA_RATE_LIMIT_RPM)",
                    retry_after_s=reset_s,
                )
        return QuotaVerdict(headers)

    async def charge(self, caller: str, usd: float, now: float | None = None) -> None:
        if self.daily_usd > 0 and usd > 0:
            now = time.time() if now is None else now
            await self._incr(f"quota:usd:{caller}:{int(now // DAY_S)}", usd, DAY_S + WINDOW_S)


class QuotaHeaders:
    """Pure ASGI: adds the quota headers the admission check left in scope state to the response,
    and charges the response's reported cost to the caller's daily budget."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        app = scope.get("app")
        quotas: Quotas | None = getattr(app.state, "quotas", None) if app is not None else None
        if quotas is None or not quotas.enabled:  # nothing to add or charge: no wrapping on the hot path
            return await self.app(scope, receive, send)
        cost = 0.0

        async def send_with_quota(message: Message) -> None:
            nonlocal cost
            if message["type"] == "http.response.start":
                extra = scope.get("state", {}).get(STATE_HEADERS)
                headers = list(message.get("headers", []))
                for k, v in headers:
                    if k.lower() == COST_HEADER:
                        try:
                            cost = float(v)
                        except ValueError:
                            cost = 0.0
                if extra:
                    headers += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in extra.items()]
                    message = {**message, "headers": headers}
            await send(message)

        holder: dict[str, Any] = {}
        token = _COST.set(holder)
        try:
            await self.app(scope, receive, send_with_quota)
        finally:
            _COST.reset(token)
            ledger = holder.get("ledger")
            if ledger is not None:  # the whole run's spend, streamed answers included
                cost = float(getattr(ledger, "usd", 0.0) or 0.0)
            state = scope.get("state", {})
            if cost > 0 and STATE_CALLER in state:
                await quotas.charge(state[STATE_CALLER], cost)
