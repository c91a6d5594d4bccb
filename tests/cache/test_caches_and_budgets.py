"""Caches, coalescing, Redis failures and budgets against real Redis and the local upstreams."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import httpx

from tests.api.helpers import chat, planner_or, publish_acme

QUESTION = "What does the Acme Cloud Pro plan cost?"


def _stack(searxng, web, llm, service_factory, **extra):
    return service_factory(
        **searxng.settings_overrides(), **web.settings_overrides(), **llm.settings_overrides(), **extra
    )


def _composer(body):
    return "Acme Cloud raised the Pro plan price to $30 per month [S1][S2]."


def test_answer_cache_hit_costs_nothing_and_says_so(searxng, web, llm, service_factory, redis_url):
    publish_acme(web, searxng)
    llm.default = planner_or(_composer)
    svc = _stack(searxng, web, llm, service_factory, redis_url=redis_url)
    first = httpx.post(svc.url + "/v1/chat/completions", json=chat(QUESTION), timeout=30)
    llm_calls = len(llm.bodies())
    second = httpx.post(svc.url + "/v1/chat/completions", json=chat(QUESTION), timeout=30)
    a, b = first.json(), second.json()
    assert a["choices"][0]["message"]["content"] == b["choices"][0]["message"]["content"]
    assert a["grounding"]["cache"]["answer"] == "miss" and b["grounding"]["cache"] == {"answer": "hit"}
    assert b["grounding"]["cost"]["usd"] == 0 and b["grounding"]["cost"]["cached"] is True
    assert second.headers["X-Grounding-Cost-USD"] == "0.000000" and "answer=hit" in second.headers["X-Grounding-Cache"]
    assert len(llm.bodies()) == llm_calls  # no model call for a hit
    assert a["id"] != b["id"]
    refreshed = httpx.post(svc.url + "/v1/chat/completions", json=chat(QUESTION, cache="refresh"), timeout=30).json()
    assert refreshed["grounding"]["cache"]["answer"] == "miss" and len(llm.bodies()) > llm_calls


def test_live_freshness_class_is_never_served_from_the_answer_cache(searxng, web, llm, service_factory, redis_url):
    publish_acme(web, searxng)
    llm.default = planner_or(_composer)
    svc = _stack(searxng, web, llm, service_factory, redis_url=redis_url)
    for _ in range(2):
        body = httpx.post(svc.url + "/v1/chat/completions", json=chat(QUESTION, freshness_days=1), timeout=30).json()
        assert "answer" not in body["grounding"]["cache"]  # the answer cache is not consulted at all


def test_changed_page_invalidates_cached_answer(searxng, web, llm, service_factory, redis_url):
    urls = publish_acme(web, searxng)
    llm.default = planner_or(_composer)
    svc = _stack(searxng, web, llm, service_factory, redis_url=redis_url, ttl_docs_s=1, ttl_news_s=1)
    httpx.post(svc.url + "/v1/chat/completions", json=chat(QUESTION), timeout=30)
    # The publisher edits the page; once the page entry is revalidated the old answer is stale.
    site = web.site("news-a.test")
    site.add_article(
        "/acme-0",
        "Acme Cloud Pro price (news-a.test)",
        [
            "Acme Cloud cut the price of its Pro plan to $20 per month on November 20, reported news-a.test today.",
            "The Pro plan includes unlimited projects, priority support and single sign-on for every team member.",
        ],
        published=time.strftime("%Y-%m-%d"),
    )
    time.sleep(1.2)
    body = httpx.post(svc.url + "/v1/chat/completions", json=chat(QUESTION, verification="flag"), timeout=30).json()
    assert body["grounding"]["cache"].get("page") in ("miss", "partial")
    again = httpx.post(svc.url + "/v1/chat/completions", json=chat(QUESTION), timeout=30).json()
    assert again["grounding"]["cache"].get("answer") != "hit"
    assert urls


def test_stale_page_is_revalidated_with_a_conditional_get(searxng, web, llm, service_factory, redis_url):
    site = web.site("news-a.test")
    other = web.site("blog-b.test")
    from simulators.searxng import searx_result
    from tests.api.helpers import ACME, TODAY

    u1 = site.add_article("/p", "Acme price A", ACME, published=TODAY, conditional=True)
    u2 = other.add_article(
        "/p",
        "Acme price B",
        [
            "Starting this month the Acme Cloud Pro subscription is billed at $30 per month per workspace, up from $25.",
            "Blog B compared the new Acme Cloud Pro plan price with rival offerings and found it in the middle of the market.",
            "Customers on annual contracts will see the change only when their contract renews next year.",
        ],
        published=TODAY,
        conditional=True,
    )
    searxng.set_default([searx_result(u1, "Acme A", "Acme Cloud Pro"), searx_result(u2, "Acme B", "Acme Cloud Pro")])
    llm.default = planner_or(_composer)
    svc = _stack(searxng, web, llm, service_factory, redis_url=redis_url, ttl_docs_s=1, ttl_news_s=1)
    first = httpx.post(svc.url + "/v1/chat/completions", json=chat(QUESTION), timeout=30).json()
    assert first["grounding"]["status"] == "grounded" and first["grounding"]["cache"]["page"] == "miss"
    time.sleep(1.2)  # past the page TTL: the next use revalidates
    r = httpx.post(svc.url + "/v1/chat/completions", json=chat(QUESTION, verification="flag"), timeout=30)
    assert r.json()["grounding"]["status"] == "grounded"
    assert r.json()["grounding"]["cache"]["page"] == "revalidated"
    assert r.json()["grounding"]["cost"]["fetches"] == 2  # two conditional GETs, no downloads
    assert site.not_modified_count("/p") >= 1 and other.not_modified_count("/p") >= 1
    outcomes = {f["outcome"] for f in r.json()["grounding"]["fetches"]}
    assert outcomes == {"not_modified"}


async def test_burst_of_one_question_runs_one_search_and_one_fetch_per_page(
    searxng, web, llm, service_factory, redis_url
):
    urls = publish_acme(web, searxng)
    searxng.latency_s = 0.3
    llm.default = planner_or(_composer)
    svc = _stack(searxng, web, llm, service_factory, redis_url=redis_url)
    async with httpx.AsyncClient(timeout=30) as client:
        replies = await asyncio.gather(
            *(client.post(svc.url + "/v1/chat/completions", json=chat(QUESTION)) for _ in range(8))
        )
    assert all(r.status_code == 200 and r.json()["grounding"]["status"] == "grounded" for r in replies)
    queries = searxng.queries()
    assert len(queries) == len(set(queries))  # each planned query searched once
    for u in urls:
        path = "/" + u.split("/", 3)[3]
        assert sum(1 for req in web.requests.all() if req.path == path) == 1
    assert sum(r.json()["grounding"]["cache"].get("answer") == "coalesced" for r in replies) >= 1


async def test_two_replicas_share_work_through_redis(searxng, web, llm, service_factory, redis_url):
    publish_acme(web, searxng)
    searxng.latency_s = 0.4
    llm.default = planner_or(_composer)
    a = _stack(searxng, web, llm, service_factory, redis_url=redis_url)
    b = _stack(searxng, web, llm, service_factory, redis_url=redis_url)
    async with httpx.AsyncClient(timeout=30) as client:
        replies = await asyncio.gather(
            client.post(a.url + "/v1/chat/completions", json=chat(QUESTION)),
            client.post(b.url + "/v1/chat/completions", json=chat(QUESTION)),
        )
    assert all(r.json()["grounding"]["status"] == "grounded" for r in replies)
    queries = searxng.queries()
    assert len(queries) == len(set(queries))


class _HungServer:
    """Accepts TCP connections and never answers: a hung Redis."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


async def test_redis_hung_during_traffic_fails_no_request(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = planner_or(_composer)
    hung = _HungServer()
    try:
        svc = _stack(searxng, web, llm, service_factory, redis_url=f"redis://127.0.0.1:{hung.port}/0")
        async with httpx.AsyncClient(timeout=30) as client:
            t0 = time.monotonic()
            replies = await asyncio.gather(
                *(
                    client.post(svc.url + "/v1/chat/completions", json=chat(QUESTION + f" (variant {i})"))
                    for i in range(6)
                )
            )
            elapsed = time.monotonic() - t0
        assert [r.status_code for r in replies] == [200] * 6
        assert all(r.json()["grounding"]["status"] == "grounded" for r in replies)
        assert elapsed < 20  # bounded by short timeouts, not redis-py's default retries
        metrics = httpx.get(svc.url + "/metrics").text
        assert "grounded_cache_errors_total" in metrics and "grounded_redis_up 0.0" in metrics
    finally:
        hung.close()


def test_max_searches_zero_is_budget_exhausted(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = planner_or(_composer)
    svc = _stack(searxng, web, llm, service_factory)
    body = httpx.post(svc.url + "/v1/chat/completions", json=chat(QUESTION, max_searches=0), timeout=30).json()
    g = body["grounding"]
    assert g["status"] == "abstained" and g["abstention"]["reason"] == "budget_exhausted"
    assert "max_searches" in g["abstention"]["failed_checks"]
    assert searxng.queries() == []


def test_max_searches_caps_upstream_calls(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = planner_or(_composer)
    svc = _stack(searxng, web, llm, service_factory)
    body = httpx.post(
        svc.url + "/v1/chat/completions", json=chat(QUESTION, max_searches=1, min_sources=1), timeout=30
    ).json()
    assert len(searxng.queries()) == 1 and body["grounding"]["cost"]["search_calls"] == 1


def test_cost_budget_answers_from_gathered_evidence_without_overrun(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = planner_or(_composer)
    svc = _stack(searxng, web, llm, service_factory, llm_prices={"gpt-4o": [2.5, 10.0], "gpt-4o-mini": [0.15, 0.6]})
    body = httpx.post(svc.url + "/v1/chat/completions", json=chat(QUESTION, max_cost_usd=0.0005), timeout=30).json()
    g = body["grounding"]
    assert g["cost"]["usd"] <= 0.0005
    assert g["composer"] == "extractive:budget" and g["status"] == "grounded"


def test_deadline_bounds_a_slow_search(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    searxng.latency_s = 5
    llm.default = planner_or(_composer)
    svc = _stack(searxng, web, llm, service_factory)
    t0 = time.monotonic()
    r = httpx.post(svc.url + "/v1/chat/completions", json=chat(QUESTION, deadline_ms=1500), timeout=30)
    assert time.monotonic() - t0 < 4.5
    g = r.json()["grounding"]
    assert r.status_code == 200 and g["status"] == "abstained"
    assert g["abstention"]["reason"] in ("budget_exhausted", "no_search_results")


def test_the_answer_key_names_who_verifies():
    # An answer verified by another judge or entailment model may keep other sentences: not the same answer.
    from app.cache.answer_cache import answer_key
    from app.settings import Settings
    from tests.pipeline.helpers import make_ctx

    opts = make_ctx().options
    turns = [("user", "What does the Acme Cloud Pro plan cost?")]
    base = Settings(llm_base_url="http://model.invalid/v1", llm_api_key="k")
    keys = {
        answer_key(turns, opts, base),
        answer_key(turns, opts, base.model_copy(update={"judge_model": "judge-2"})),
        # with no GA_JUDGE_MODEL the planner's model judges
        answer_key(turns, opts, base.model_copy(update={"planner_model": "planner-2"})),
        answer_key(turns, opts, base.model_copy(update={"support_model": "bert-nli", "support_model_path": "/m/a"})),
        answer_key(turns, opts, base.model_copy(update={"support_model": "bert-nli", "support_model_path": "/m/b"})),
    }
    assert len(keys) == 5
    assert answer_key(turns, opts, base) == answer_key(turns, opts, base.model_copy())  # and stays stable
