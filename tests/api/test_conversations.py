"""Conversations: a follow-up is searched as a standalone question (the subject carried from the
earlier turns), the LLM planner sees the conversation, and an earlier answer's citation markers
never reach the pipeline (so they never become evidence)."""

from __future__ import annotations

import httpx
import pytest

from app.api.chat import conversation
from app.api.protocol import ChatCompletionRequest
from app.pipeline.plan import is_follow_up, llm_plan, standalone_question
from app.providers.llm.base import Completion
from simulators import ServiceServer
from tests.api.helpers import planner_or, publish_acme
from tests.pipeline.helpers import TODAY, make_ctx

TASKGROUP_ANSWER = (
    "The asyncio components that enable structured concurrency, like asyncio.TaskGroup and asyncio.timeout(), "
    "are implemented using cancellation internally [1][2]."
)


@pytest.mark.parametrize(
    ("turns", "carried"),
    [
        # The subject named in the previous question.
        (
            [
                ("user", "What is asyncio.TaskGroup?"),
                ("assistant", TASKGROUP_ANSWER),
                ("user", "what about its tasks?"),
            ],
            "asyncio.TaskGroup",
        ),
        # A previous question without one: what the previous answer is about.
        (
            [
                ("user", "How do I run coroutines concurrently?"),
                ("assistant", "Use asyncio.TaskGroup, which waits for all of its tasks [1]."),
                ("user", "what about its tasks?"),
            ],
            "asyncio.TaskGroup",
        ),
        # A chain of follow-ups keeps the subject.
        (
            [
                ("user", "What is asyncio.TaskGroup?"),
                ("assistant", "x [1]."),
                ("user", "how do I cancel them?"),
                ("assistant", "y [2]."),
                ("user", "and what about its exceptions?"),
            ],
            "asyncio.TaskGroup",
        ),
        (
            [("user", "What is new in Python 3.12?"), ("assistant", "…"), ("user", "what about its performance?")],
            "Python 3.12",
        ),
        (
            [
                ("user", "Who founded Nvidia?"),
                ("assistant", "Jensen Huang founded it [1]."),
                ("user", "what is his net worth?"),
            ],
            "Jensen Huang",
        ),
    ],
)
def test_follow_ups_carry_the_subject(turns, carried):
    question = standalone_question(turns)
    assert question.startswith(turns[-1][1]) and carried in question, question
    assert "[" not in question.replace(turns[-1][1], "")


def test_standalone_questions_are_left_alone():
    assert standalone_question([("user", "What is asyncio.TaskGroup?")]) == "What is asyncio.TaskGroup?"
    turns = [("user", "What is asyncio.TaskGroup?"), ("assistant", "x"), ("user", "How do I read a TOML file?")]
    assert standalone_question(turns) == "How do I read a TOML file?"
    assert not is_follow_up("How do I read a TOML file in Python?")
    assert is_follow_up("what about its tasks?")


def test_earlier_answer_markers_are_removed_before_the_pipeline():
    req = ChatCompletionRequest.model_validate(
        {
            "messages": [
                {"role": "user", "content": "What is asyncio.TaskGroup? [1]"},
                {"role": "assistant", "content": "It groups tasks [1][2]. It waits [1, 3] and cancels [S2-S4]."},
                {"role": "user", "content": "what about its tasks?"},
            ]
        }
    )
    turns = conversation(req)
    assert turns[1] == ("assistant", "It groups tasks. It waits and cancels.")
    assert turns[0][1].endswith("[1]"), "a user's own text is theirs"


class RecordingModel:
    name = "stub"

    def __init__(self) -> None:
        self.calls: list[list[dict]] = []

    async def complete(self, messages, **kw):
        self.calls.append(messages)
        return Completion(
            text='{"needs_search": true, "queries": ["asyncio TaskGroup tasks"], "freshness_days": 365}',
            model="gpt-4o-mini",
            prompt_tokens=50,
            completion_tokens=20,
        )

    async def aclose(self) -> None:
        pass


async def test_the_llm_planner_sees_the_conversation_without_markers():
    turns = [("user", "What is asyncio.TaskGroup?"), ("assistant", TASKGROUP_ANSWER), ("user", "what about its tasks?")]
    kw = dict(max_queries=3, freshness_days=None, today=TODAY, primary_domains=[], default_window=365, timeout=5)
    model = RecordingModel()
    question = standalone_question(turns)  # as the orchestrator does, right before planning
    plan = await llm_plan(model, "gpt-4o-mini", question, ctx=make_ctx(), conversation=turns, **kw)
    assert plan.queries and plan.by == "llm"
    messages = model.calls[0]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == "What is asyncio.TaskGroup?"
    assert "[1]" not in messages[2]["content"] and "asyncio.TaskGroup" in messages[2]["content"]
    assert "TaskGroup" in messages[-1]["content"]


def test_a_follow_up_over_http_searches_for_the_subject():
    svc = ServiceServer().start()
    try:
        body = {
            "messages": [
                {"role": "user", "content": "What is asyncio.TaskGroup?"},
                {"role": "assistant", "content": TASKGROUP_ANSWER},
                {"role": "user", "content": "what about its tasks?"},
            ],
            "grounding": {"freshness_days": 3650, "min_sources": 1, "cache": "bypass"},
        }
        r = httpx.post(svc.url + "/v1/chat/completions", json=body, timeout=60)
        assert r.status_code == 200, r.text
        queries = r.json()["grounding"]["queries"]
        assert queries and all("TaskGroup" in q for q in queries[:1]), queries
        assert not any("[" in q for q in queries), queries
    finally:
        svc.stop()


async def test_the_planner_model_gets_the_conversation_over_http(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = planner_or("Acme Cloud raised the Pro plan price to $30 per month [S1][S2].")
    svc = service_factory(**searxng.settings_overrides(), **web.settings_overrides(), **llm.settings_overrides())
    body = {
        "messages": [
            {"role": "user", "content": "What does the Acme Cloud Pro plan cost?"},
            {"role": "assistant", "content": "The Acme Cloud Pro plan costs $30 per month [1][2]."},
            {"role": "user", "content": "what about its support?"},
        ],
        "grounding": {"cache": "bypass"},
    }
    r = httpx.post(svc.url + "/v1/chat/completions", json=body, timeout=60)
    assert r.status_code == 200, r.text
    planner = next(b for b in llm.bodies() if "You plan web searches" in b["messages"][0]["content"])
    roles = [m["role"] for m in planner["messages"]]
    assert roles == ["system", "user", "assistant", "user"], roles
    assert "Acme Cloud Pro" in planner["messages"][-1]["content"]
    assert all("[1]" not in m["content"] for m in planner["messages"][1:])
    for request_body in llm.bodies():  # no model call ever sees an earlier answer's markers
        for m in request_body["messages"]:
            if m["role"] == "assistant":
                assert "[1]" not in m["content"] and "[2]" not in m["content"]
