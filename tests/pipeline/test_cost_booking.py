"""Which price a model call is booked at (RunContext.charge_llm)."""

from __future__ import annotations

from app.providers.llm.base import Completion
from app.settings import Settings
from tests.pipeline.helpers import make_ctx


def _ctx():
    ctx = make_ctx()
    ctx.settings = Settings(llm_prices={"gpt-4o": (2.5, 10.0), "gpt-4o-mini": (0.15, 0.6), "local-llama": (0.0, 0.0)})
    return ctx


def _book(ctx, requested: str, reported: str) -> float:
    done = Completion(text="x", model=reported, prompt_tokens=1_000_000, completion_tokens=0, requested=requested)
    ctx.charge_llm("compose", done, [])
    return ctx.cost.usd


def test_booked_at_the_price_of_the_model_asked_for():
    assert _book(_ctx(), "gpt-4o", "gpt-4o-mini") == 2.5  # a reply naming a cheaper model
    assert _book(_ctx(), "gpt-4o", "gpt-4o-2024-08-06") == 2.5


def test_a_free_model_asked_for_is_free_whatever_the_reply_says():
    assert _book(_ctx(), "local-llama", "gpt-4o") == 0.0


def test_an_unpriced_model_asked_for_is_booked_at_the_replys_price():
    assert _book(_ctx(), "router-default", "gpt-4o-mini") == 0.15
