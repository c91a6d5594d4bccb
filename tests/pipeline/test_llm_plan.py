"""The LLM planner's contract is enforced in code (unit tests with a stub model)."""

from __future__ import annotations

import json

from app.errors import ProviderTechnicalError
from app.pipeline.plan import llm_plan
from app.providers.llm.base import Completion
from tests.pipeline.helpers import TODAY, make_ctx


class StubModel:
    name = "stub"

    def __init__(self, *replies):
        self.replies = list(replies)
        self.calls: list[list[dict]] = []

    async def complete(self, messages, **kw):
        self.calls.append(messages)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return Completion(text=reply, model="gpt-4o-mini", prompt_tokens=50, completion_tokens=20)

    async def aclose(self):
        pass


async def _plan(model, question="What is the latest Acme Cloud release?", **kw):
    args = dict(
        max_queries=3,
        freshness_days=None,
        today=TODAY,
        primary_domains=[],
        default_window=365,
        timeout=5,
        ctx=make_ctx(),
    )
    args.update(kw)
    return await llm_plan(model, "gpt-4o-mini", question, **args)


async def test_contract_is_enforced_on_the_models_queries():
    model = StubModel(
        json.dumps(
            {
                "needs_search": True,
                "queries": [
                    "  acme   cloud release ",
                    "acme cloud release",
                    "",
                    "x",
                    "acme changelog",
                    "acme blog",
                    "acme news",
                ],
                "freshness_days": 99999,
            }
        )
    )
    plan = await _plan(model, primary_domains=["acme.example"])
    assert plan.by == "llm"
    assert len(plan.queries) == 3  # capped
    assert plan.queries[0] == "acme cloud release 2026"  # whitespace collapsed, year added
    assert any("site:acme.example" in q for q in plan.queries)  # a primary-source query
    assert plan.freshness_days == 3650  # clamped
    assert "Today is 2026-11-29" in model.calls[0][0]["content"]


async def test_invalid_json_gets_one_retry_then_the_heuristic_planner():
    model = StubModel("not json", "still {not json")
    plan = await _plan(model)
    assert len(model.calls) == 2
    assert plan.by == "heuristic" and plan.queries


async def test_retry_succeeds():
    model = StubModel(
        "oops", json.dumps({"needs_search": True, "queries": ["acme release notes", "acme cloud version"]})
    )
    plan = await _plan(model)
    assert plan.by == "llm" and len(model.calls) == 2


async def test_search_without_usable_query_is_a_routing_fault_not_ungrounded():
    from app import metrics

    before = metrics.ROUTING_FAULTS._value.get()
    plan = await _plan(StubModel(json.dumps({"needs_search": True, "queries": ["", "  "]})))
    assert plan.needs_search and plan.by == "heuristic" and plan.queries
    assert metrics.ROUTING_FAULTS._value.get() == before + 1


async def test_a_short_plan_is_topped_up_with_the_heuristic_queries_that_add_something():
    question = (
        "My worker on Gunicorn keeps growing after each request while a global Session object stays open"
        " in the module. How do I stop that?"
    )
    keywords = "worker gunicorn keeps growing after request global session object stays open module stop"
    model = StubModel(json.dumps({"needs_search": True, "queries": [question, keywords]}))
    plan = await _plan(model, question=question)
    assert plan.by == "llm"
    # the named-entity query is added; the heuristic keyword query, a near-copy of the model's, is not
    assert plan.queries == [question, keywords, "Gunicorn Session worker keeps growing"]
    # A full plan is the model's alone; max_queries=2 leaves no room.
    full = StubModel(json.dumps({"needs_search": True, "queries": ["a b c", "d e f", "g h i"]}))
    assert (await _plan(full, question=question)).queries == ["a b c", "d e f", "g h i"]
    two = StubModel(json.dumps({"needs_search": True, "queries": ["a b c", "d e f"]}))
    assert (await _plan(two, question=question, max_queries=2)).queries == ["a b c", "d e f"]


def test_top_up_leaves_out_queries_that_repeat_a_planned_one():
    from app.pipeline.plan import top_up

    planned = ["python venv global site packages"]
    assert top_up(planned, ["venv python global site packages", "system site packages flag"], cap=3) == [
        "python venv global site packages",
        "system site packages flag",
    ]


async def test_model_failure_falls_back_to_heuristics():
    plan = await _plan(StubModel(ProviderTechnicalError("down", provider="openai")))
    assert plan.by == "heuristic" and plan.queries


async def test_model_may_classify_a_question_as_stable():
    plan = await _plan(
        StubModel(json.dumps({"needs_search": False, "queries": []})), question="What is a prime number?"
    )
    assert plan.needs_search is False and plan.queries
