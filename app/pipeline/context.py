"""Per-request state every stage sees: resolved options, the deadline, timings, costs."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from typing import Any, TypeVar

from app import metrics
from app.cpu_queue import CpuQueue, run_cpu
from app.pipeline.policy import Policy
from app.settings import Settings
from app.tokens import TokenCounter

MS_PER_S = 1000
TOKENS_PER_PRICE_UNIT = 1_000_000  # llm_prices are USD per million tokens (input, output)
USD_DIGITS = 8  # cost figures are reported to this many decimals (a cheap call costs ~1e-6 USD)
TIMING_DIGITS = 3  # stage timings in ms, to the microsecond
MESSAGE_OVERHEAD_TOKENS = 4  # chat-format tokens per message (role, separators) when counting with tiktoken
MIN_REMAINING_S = 0.05  # the least time a call is given, so a call at the deadline fails fast, not with timeout 0

T = TypeVar("T")


@dataclass(slots=True)
class Options:
    """Grounding options with server defaults filled in."""

    mode: str
    freshness_days: int | None
    include_domains: list[str]
    exclude_domains: list[str]
    primary_domains: list[str]
    max_queries: int
    max_results: int
    max_fetches: int
    max_evidence: int
    token_budget: int
    min_sources: int
    require_primary: bool
    verification: str
    on_conflict: str
    cache: str
    deadline_ms: int
    max_cost_usd: float | None
    max_searches: int | None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: list[str] | None = None
    max_tokens: int | None = None

    @classmethod
    def resolve(cls, g, settings: Settings, **sampling) -> Options:
        return cls(
            mode=g.mode,
            freshness_days=g.freshness_days,
            include_domains=g.include_domains,
            exclude_domains=g.exclude_domains,
            primary_domains=g.primary_domains or list(settings.primary_domains),
            max_queries=g.max_queries or settings.default_max_queries,
            max_results=g.max_results or settings.default_max_results,
            max_fetches=settings.default_max_fetches if g.max_fetches is None else g.max_fetches,
            max_evidence=g.max_evidence or settings.default_max_evidence,
            token_budget=g.token_budget or settings.default_token_budget,
            min_sources=g.min_sources or settings.default_min_sources,
            require_primary=g.require_primary,
            verification=g.verification,
            on_conflict=g.on_conflict,
            cache=g.cache,
            deadline_ms=g.deadline_ms or settings.deadline_ms,
            max_cost_usd=g.max_cost_usd,
            max_searches=g.max_searches,
            **sampling,
        )


@dataclass(slots=True)
class Cost:
    usd: float = 0.0
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)  # model -> {prompt, completion}
    search_calls: int = 0
    fetches: int = 0
    by_stage: dict[str, float] = field(default_factory=dict)

    def add_tokens(
        self, stage: str, model: str, prompt: int, completion: int, price: tuple[float, float], *, label: str
    ) -> None:
        """`label`: the metrics' name for the model (bounded: see _model_label); the response keeps `model`."""
        t = self.tokens.setdefault(model, {"prompt": 0, "completion": 0})
        t["prompt"] += prompt
        t["completion"] += completion
        usd = (prompt * price[0] + completion * price[1]) / TOKENS_PER_PRICE_UNIT
        self.usd += usd
        self.by_stage[stage] = self.by_stage.get(stage, 0.0) + usd
        metrics.TOKENS.labels(model=label, kind="prompt").inc(prompt)
        metrics.TOKENS.labels(model=label, kind="completion").inc(completion)
        metrics.COST_USD.labels(kind="llm").inc(usd)
        metrics.LLM_COST_USD.labels(model=label).inc(usd)

    def add_search(self, usd: float) -> None:
        self.search_calls += 1
        self.usd += usd
        self.by_stage["search"] = self.by_stage.get("search", 0.0) + usd
        metrics.COST_USD.labels(kind="search").inc(usd)

    @property
    def prompt_tokens(self) -> int:
        return sum(t["prompt"] for t in self.tokens.values())

    @property
    def completion_tokens(self) -> int:
        return sum(t["completion"] for t in self.tokens.values())

    def as_dict(self) -> dict:
        return {
            "usd": round(self.usd, USD_DIGITS),
            "tokens": self.tokens,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "search_calls": self.search_calls,
            "fetches": self.fetches,
            "by_stage_usd": {k: round(v, USD_DIGITS) for k, v in self.by_stage.items()},
        }


@dataclass(slots=True)
class RunContext:
    request_id: str
    options: Options
    settings: Settings
    today: date
    started: float = field(default_factory=time.monotonic)
    timings_ms: dict[str, float] = field(default_factory=dict)
    cost: Cost = field(default_factory=Cost)
    cache: dict[str, str] = field(default_factory=dict)
    ignored_params: list[str] = field(default_factory=list)
    tokens: TokenCounter | None = None  # counts when upstream sends no usage
    budget_hits: list[str] = field(default_factory=list)  # which budget stopped work: max_searches, …
    cpu: CpuQueue | None = None  # the service's queue for CPU-bound calls (app/cpu_queue.py)
    fetches_in_flight: int = 0  # pages of this answer still on the network: its extractions can wait

    async def run_cpu(self, fn: Callable[..., T], *args: Any) -> T:
        """fn(*args) off the event loop, queued by this answer's urgency (app/cpu_queue.py)."""
        return await run_cpu(self.cpu, self, fn, *args)

    @property
    def policy(self) -> Policy:
        return Policy.from_settings(self.settings)

    def note_cache(self, layer: str, outcome: str) -> None:
        """Per-layer summary for the response: hit, miss, coalesced, revalidated, or partial."""
        prev = self.cache.get(layer)
        self.cache[layer] = outcome if prev in (None, outcome) else "partial"

    def charge_llm(self, stage: str, completion, messages: list[dict]) -> None:
        """Book a model call: upstream usage when present, else counted with tiktoken."""
        prompt, out = completion.prompt_tokens, completion.completion_tokens
        if prompt is None and self.tokens is not None:
            prompt = sum(self.tokens.count(m.get("content") or "") + MESSAGE_OVERHEAD_TOKENS for m in messages)
        if out is None and self.tokens is not None:
            out = self.tokens.count(completion.text)
        # Booked at the price of the model asked for when it has one: an upstream that names a cheaper
        # model in its reply cannot shrink the request's booked cost (max_cost_usd, quotas).
        asked = completion.requested
        price = self.price_of(asked if asked and _priced(self.settings.llm_prices, asked) else completion.model)
        self.cost.add_tokens(
            stage,
            completion.model,
            prompt or 0,
            out or 0,
            price,
            label=_model_label(self.settings, completion.model),
        )

    def price_of(self, model: str) -> tuple[float, float]:
        prices = self.settings.llm_prices
        return prices.get(model) or _price_by_prefix(prices, model)

    @property
    def deadline(self) -> float:
        return self.started + self.options.deadline_ms / MS_PER_S

    def remaining(self, floor: float = MIN_REMAINING_S) -> float:
        """Seconds left before the request deadline (never below `floor`)."""
        return max(floor, self.deadline - time.monotonic())

    def expired(self) -> bool:
        return time.monotonic() >= self.deadline

    @contextmanager
    def stage(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            dt = time.perf_counter() - t0
            self.timings_ms[name] = round(self.timings_ms.get(name, 0.0) + dt * MS_PER_S, TIMING_DIGITS)
            metrics.STAGE_SECONDS.labels(stage=name).observe(dt)


def _model_label(settings: Settings, model: str) -> str:
    """A metric label for the model an upstream named: a configured or priced model name (the longest
    that is a prefix of it: "gpt-4o-2024-08-06" is "gpt-4o"), else "other" — an upstream must not be
    able to grow the metrics' label sets."""
    known = [settings.composer_model, settings.planner_model, settings.judge_model, settings.llm_fallback_model]
    return _longest_prefix([*known, *settings.llm_prices], model) or "other"


def _priced(prices: dict[str, tuple[float, float]], model: str) -> bool:
    """Has the model a configured price, itself or by a prefix (a price of 0 is a price: a local model)?"""
    return bool(_longest_prefix(prices, model))


def _price_by_prefix(prices: dict[str, tuple[float, float]], model: str) -> tuple[float, float]:
    """'gpt-4o-2024-08-06' is priced as 'gpt-4o': the longest known prefix wins; unknown is free."""
    best = _longest_prefix(prices, model)
    return prices[best] if best else (0.0, 0.0)


def _longest_prefix(names: Iterable[str | None], model: str) -> str:
    """The longest of `names` that `model` starts with ("" when none does)."""
    return max((n for n in names if n and model.startswith(n)), key=len, default="")
