"""Circuit breakers: one per search provider and one per model, owned by the ServiceState.

closed → open when, over the last `window_s` seconds, at least `min_calls` attempts were made and
at least `failure_rate` of them failed technically (app/providers/retry.py records each attempt).
open → fails fast (nothing is sent) for `cooldown_s`; then half-open: exactly one probe goes
through while every other call keeps failing fast; the probe's success closes the circuit (its
window starts empty), its failure opens it for another cool-down.

State is exported as `grounded_circuit_state{kind, provider}` (0 closed, 1 half-open, 2 open; label
values are configured provider and model names only) and listed by `/readyz`. Breakers are per
process: with several workers each keeps its own (the gauge shows the worst, multiprocess "livemax").
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app import metrics

if TYPE_CHECKING:
    from app.settings import Settings

CLOSED, HALF_OPEN, OPEN = "closed", "half_open", "open"
GAUGE_VALUE = {CLOSED: 0, HALF_OPEN: 1, OPEN: 2}


@dataclass(frozen=True, slots=True)
class BreakerConfig:
    window_s: float = 30.0
    min_calls: int = 10
    failure_rate: float = 0.5
    cooldown_s: float = 15.0

    @classmethod
    def from_settings(cls, settings: Settings) -> BreakerConfig:
        return cls(
            window_s=max(0.001, settings.breaker_window_s),
            min_calls=max(1, settings.breaker_min_calls),
            failure_rate=min(1.0, max(0.0, settings.breaker_failure_rate)),
            cooldown_s=max(0.0, settings.breaker_cooldown_s),
        )


class CircuitBreaker:
    def __init__(
        self,
        kind: str,
        name: str,
        config: BreakerConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
        enabled: bool = True,
    ):
        self.kind, self.name, self.config = kind, name, config
        self.enabled = enabled
        self._clock = clock
        self._lock = threading.Lock()  # cheap; lets sync code (readyz, tests) read a consistent state
        self._calls: deque[tuple[float, bool]] = deque()  # (when, failed)
        self._state = CLOSED
        self._opened_at = 0.0
        self._probe_at: float | None = None  # when the half-open probe was let through
        self.opened = 0  # how many times the circuit opened (for /readyz and tests)
        self._export()

    # --- asking ------------------------------------------------------------------------------

    @property
    def state(self) -> str:
        with self._lock:
            return self._current()

    def allow(self) -> bool:
        """May a call go upstream now? In half-open, True for exactly one caller (the probe)."""
        if not self.enabled:
            return True
        with self._lock:
            state = self._current()
            if state == CLOSED:
                return True
            if state == OPEN:
                return False
            now = self._clock()
            # One probe at a time; a probe that never reported back (lost) is replaced after a cool-down.
            if self._probe_at is None or now - self._probe_at >= max(self.config.cooldown_s, 1.0):
                self._probe_at = now
                return True
            return False

    # --- telling -----------------------------------------------------------------------------

    def record_success(self) -> None:
        if not self.enabled:
            return
        with self._lock:
            if self._current() == HALF_OPEN:  # the probe (or a straggler) got through: healthy again
                self._calls.clear()
                self._set(CLOSED)
            elif self._state == CLOSED:
                self._add(False)
            self._probe_at = None

    def record_failure(self) -> None:
        if not self.enabled:
            return
        with self._lock:
            state = self._current()
            if state == HALF_OPEN:
                self._trip()
            elif state == CLOSED:
                self._add(True)
                failed = sum(1 for _, f in self._calls if f)
                if len(self._calls) >= self.config.min_calls and failed >= self.config.failure_rate * len(self._calls):
                    self._trip()
            self._probe_at = None

    def release(self) -> None:
        """The call that was let through ended without an upstream verdict (cancelled, over budget):
        free the half-open probe slot, change nothing else."""
        with self._lock:
            self._probe_at = None

    def snapshot(self) -> dict:
        with self._lock:
            state = self._current()
            self._prune(self._clock())
            failed = sum(1 for _, f in self._calls if f)
            out = {"state": state, "calls": len(self._calls), "failures": failed, "opened": self.opened}
            if state != CLOSED:
                out["retry_in_s"] = round(max(0.0, self._opened_at + self.config.cooldown_s - self._clock()), 3)
            return out

    # --- internals (lock held) ---------------------------------------------------------------

    def _current(self) -> str:
        if self._state == OPEN and self._clock() - self._opened_at >= self.config.cooldown_s:
            self._set(HALF_OPEN)
            self._probe_at = None
        return self._state

    def _add(self, failed: bool) -> None:
        now = self._clock()
        self._calls.append((now, failed))
        self._prune(now)

    def _prune(self, now: float) -> None:
        horizon = now - self.config.window_s
        while self._calls and self._calls[0][0] < horizon:
            self._calls.popleft()

    def _trip(self) -> None:
        self._opened_at = self._clock()
        self._calls.clear()
        self.opened += 1
        self._set(OPEN)

    def _set(self, state: str) -> None:
        self._state = state
        self._export()

    def _export(self) -> None:
        metrics.labelled(metrics.CIRCUIT_STATE, self.kind, self.name).set(GAUGE_VALUE[self._state])


class BreakerBoard:
    """The breakers of one service, created on first use: ("search", provider) and ("llm", model)."""

    def __init__(self, config: BreakerConfig, *, clock: Callable[[], float] = time.monotonic, enabled: bool = True):
        self.config, self._clock, self.enabled = config, clock, enabled
        self._breakers: dict[tuple[str, str], CircuitBreaker] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings, *, clock: Callable[[], float] = time.monotonic) -> BreakerBoard:
        return cls(BreakerConfig.from_settings(settings), clock=clock, enabled=settings.breaker_enabled)

    def get(self, kind: str, name: str) -> CircuitBreaker:
        with self._lock:
            breaker = self._breakers.get((kind, name))
            if breaker is None:
                breaker = CircuitBreaker(kind, name, self.config, clock=self._clock, enabled=self.enabled)
                self._breakers[(kind, name)] = breaker
            return breaker

    def snapshot(self) -> dict[str, dict[str, dict]]:
        """{kind: {name: state…}} for /readyz."""
        with self._lock:
            items = sorted(self._breakers.items())
        out: dict[str, dict[str, dict]] = {}
        for (kind, name), breaker in items:
            out.setdefault(kind, {})[name] = breaker.snapshot()
        return out
