"""Does the configured model endpoint answer? `GET {base_url}/models`, cached for /readyz.

A 2xx is up. 404/405 are up too: the endpoint answers, it just does not list models (some
OpenAI-compatible servers do not implement the route). 401/403 are down (every call would be
refused), as are 5xx, 429, timeouts and refused connections. One probe runs at a time; its result
is reused for `readyz_model_probe_ttl_s` so a tight readiness period does not hammer the upstream.
With `llm_fallback_base_url` set, that endpoint is probed too and the model counts as available
when either answers.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from app.settings import Settings

UP_STATUSES = (404, 405)


@dataclass(slots=True)
class ProbeResult:
    ok: bool
    detail: str
    checked_at: float  # clock() instant

    def as_dict(self, now: float) -> dict:
        return {"ok": self.ok, "detail": self.detail, "age_s": round(max(0.0, now - self.checked_at), 3)}


class ModelProbe:
    def __init__(
        self,
        http: httpx.AsyncClient,
        endpoints: dict[str, str],
        *,
        api_key: str,
        ttl_s: float,
        timeout_s: float,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._http = http
        self.endpoints = endpoints  # role ("primary", "fallback") -> base URL
        self._headers = {"Authorization": f"Bearer {api_key or 'not-needed'}", "Accept": "application/json"}
        self._ttl_s, self._timeout_s, self._clock = ttl_s, timeout_s, clock
        self._results: dict[str, ProbeResult] = {}
        self._lock = asyncio.Lock()
        self.probes = 0  # upstream requests made (tests count them)

    @classmethod
    def from_settings(cls, settings: Settings, http: httpx.AsyncClient) -> ModelProbe:
        endpoints = {"primary": settings.llm_base_url or ""}
        if settings.llm_fallback_model and settings.llm_fallback_base_url:
            endpoints["fallback"] = settings.llm_fallback_base_url
        return cls(
            http,
            endpoints,
            api_key=settings.llm_api_key,
            ttl_s=settings.readyz_model_probe_ttl_s,
            timeout_s=settings.readyz_model_probe_timeout_s,
        )

    async def check(self) -> dict:
        """{"ok": any endpoint up, "endpoints": {role: {ok, detail, age_s}}}; probes only stale ones."""
        async with self._lock:
            now = self._clock()
            stale = [
                role
                for role in self.endpoints
                if role not in self._results or now - self._results[role].checked_at >= self._ttl_s
            ]
            if stale:
                fresh = await asyncio.gather(*(self._probe(self.endpoints[role]) for role in stale))
                self._results.update(zip(stale, fresh, strict=True))
            now = self._clock()
            results = {role: self._results[role] for role in self.endpoints}
        return {
            "ok": any(r.ok for r in results.values()),
            "endpoints": {role: r.as_dict(now) for role, r in results.items()},
        }

    async def _probe(self, base_url: str) -> ProbeResult:
        self.probes += 1
        url = base_url.rstrip("/") + "/models"
        timeout = httpx.Timeout(self._timeout_s, connect=min(self._timeout_s, 2.0))
        try:
            resp = await self._http.get(url, headers=self._headers, timeout=timeout)
        except httpx.TimeoutException:
            return ProbeResult(False, f"GET /models timed out after {self._timeout_s:g}s", self._clock())
        except httpx.HTTPError as exc:
            return ProbeResult(False, f"GET /models unreachable: {type(exc).__name__}", self._clock())
        status = resp.status_code
        ok = 200 <= status < 300 or status in UP_STATUSES
        return ProbeResult(ok, f"GET /models answered {status}", self._clock())
