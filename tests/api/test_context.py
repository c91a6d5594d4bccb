"""POST /v1/context: evidence blocks packed under a token budget, for agents that compose themselves."""

from __future__ import annotations

import httpx
import pytest

from app.settings import Settings
from app.tokens import TokenCounter


@pytest.fixture(scope="module")
def embedded(request):
    from simulators import ServiceServer

    svc = ServiceServer().start()
    request.addfinalizer(svc.stop)
    return svc


@pytest.mark.parametrize("budget", [256, 1000, 4000])
def test_blocks_never_exceed_the_budget(embedded, budget):
    r = httpx.post(
        embedded.url + "/v1/context",
        json={"query": "asyncio TaskGroup structured concurrency", "token_budget": budget, "depth": 6},
        timeout=30,
    )
    assert r.status_code == 200
    data = r.json()
    assert data["blocks"], data
    assert data["total_tokens"] <= budget
    counter = TokenCounter(Settings().tiktoken_cache_dir)
    assert data["total_tokens"] == sum(counter.count(b["text"]) for b in data["blocks"])
    assert all(b["tokens"] == counter.count(b["text"]) for b in data["blocks"])
    scores = [b["score"] for b in data["blocks"]]
    assert scores == sorted(scores, reverse=True)
    assert data["request_id"] == r.headers["X-Request-Id"]
    assert any("TaskGroup" in b["text"] for b in data["blocks"])


def test_bigger_budget_gives_more_context(embedded):
    small = httpx.post(
        embedded.url + "/v1/context", json={"query": "pathlib Path methods", "token_budget": 256}, timeout=30
    ).json()
    big = httpx.post(
        embedded.url + "/v1/context", json={"query": "pathlib Path methods", "token_budget": 4000}, timeout=30
    ).json()
    assert big["total_tokens"] > small["total_tokens"]


@pytest.mark.parametrize(
    "body,param",
    [
        ({"query": "x", "token_budget": 100}, "token_budget"),
        ({"query": "x", "depth": 0}, "depth"),
        ({"query": "   "}, "query"),
        ({}, "query"),
        ({"query": "x", "extra": 1}, "extra"),
    ],
)
def test_context_validation(embedded, body, param):
    r = httpx.post(embedded.url + "/v1/context", json=body)
    assert r.status_code == 400 and r.json()["error"]["param"] == param


def test_exclude_domains_applies(embedded):
    data = httpx.post(
        embedded.url + "/v1/context", json={"query": "asyncio TaskGroup", "exclude_domains": ["python.org"]}, timeout=30
    ).json()
    assert all("python.org" not in b["url"] for b in data["blocks"])
