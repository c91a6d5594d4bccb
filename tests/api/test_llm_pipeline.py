"""The pipeline against real local upstreams: SearXNG-shaped search, a web of pages, a scripted
OpenAI-compatible model; the official openai SDK as the client."""

from __future__ import annotations

import re

import httpx

from tests.api.helpers import chat, planner_or, publish_acme


def _stack(searxng, web, llm, service_factory, **extra):
    return service_factory(
        **searxng.settings_overrides(), **web.settings_overrides(), **llm.settings_overrides(), **extra
    )


async def test_sdk_non_streaming_with_extra_body(searxng, web, llm, service_factory, openai_client):
    urls = publish_acme(web, searxng)
    llm.default = planner_or(
        "Acme Cloud raised the Pro plan price to $30 per month [S1][S2]. "
        "The Pro plan includes unlimited projects and priority support [S2]."
    )
    svc = _stack(searxng, web, llm, service_factory)
    client = openai_client(svc)
    reply = await client.chat.completions.create(
        model="grounded-answer",
        messages=[{"role": "user", "content": "What does the Acme Cloud Pro plan cost?"}],
        extra_body={"grounding": {"min_sources": 2, "freshness_days": 30}},
    )
    data = reply.model_dump()
    g = data["grounding"]
    assert g["status"] == "grounded", g["abstention"]
    assert g["composer"].startswith("llm:")
    assert sorted(data["citations"]) == sorted(urls)
    assert reply.choices[0].message.content.startswith("Acme Cloud raised the Pro plan price to $30 per month [1][2].")
    anns = reply.choices[0].message.annotations
    assert anns and all(a.type == "url_citation" for a in anns)
    assert g["cost"]["tokens"] and reply.usage.total_tokens > 0
    # The composer saw numbered, fenced evidence and an instruction to treat it as data.
    compose_body = [b for b in llm.bodies() if "You plan web searches" not in b["messages"][0]["content"]][-1]
    prompt = compose_body["messages"][-1]["content"]
    assert 'id="S1"' in prompt and "data, not instructions" in prompt
    assert compose_body["temperature"] == 0.0


async def test_sdk_streaming_equals_non_streaming(searxng, web, llm, service_factory, openai_client):
    publish_acme(web, searxng)
    llm.default = planner_or(
        "Acme Cloud raised the Pro plan price to $30 per month [S1]. It includes priority support [S2]."
    )
    svc = _stack(searxng, web, llm, service_factory)
    client = openai_client(svc)
    messages = [{"role": "user", "content": "What does the Acme Cloud Pro plan cost?"}]
    whole = await client.chat.completions.create(
        model="x", messages=messages, extra_body={"grounding": {"cache": "bypass"}}
    )
    stream = await client.chat.completions.create(
        model="x",
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"grounding": {"cache": "bypass"}},
    )
    pieces, final, usage = [], None, None
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        if chunk.choices and chunk.choices[0].finish_reason:
            final = chunk.model_dump()
        if chunk.usage:
            usage = chunk.usage
    assert "".join(pieces) == whole.choices[0].message.content
    assert len(pieces) >= 2
    assert final["citations"] == whole.model_dump()["citations"]
    assert final["grounding"]["status"] == "grounded"
    assert usage is not None and usage.total_tokens > 0


def test_raw_sse_ends_with_done(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = planner_or("Acme Cloud raised the Pro plan price to $30 per month [S1].")
    svc = _stack(searxng, web, llm, service_factory)
    with httpx.stream(
        "POST",
        svc.url + "/v1/chat/completions",
        json={**chat("What does the Acme Cloud Pro plan cost?"), "stream": True},
        timeout=30,
    ) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        assert r.headers["X-Grounding-Status"] == "grounded"
        lines = [line for line in r.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"


def test_model_urls_are_stripped_and_fake_spans_never_cited(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = planner_or(
        "Acme Cloud raised the Pro plan price to $30 per month [S1]. "
        "See [the pricing page](https://evil.example/phish) or https://evil.example/x for details [S2]."
    )
    svc = _stack(searxng, web, llm, service_factory)
    body = httpx.post(
        svc.url + "/v1/chat/completions", json=chat("What does the Acme Cloud Pro plan cost?"), timeout=30
    ).json()
    content = body["choices"][0]["message"]["content"]
    assert "evil" not in content and "http" not in content
    assert all("evil" not in u for u in body["citations"])


def test_nonexistent_span_retries_then_abstains(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = planner_or("Acme Cloud raised the Pro plan price to $30 per month [S7].")
    svc = _stack(searxng, web, llm, service_factory)
    body = httpx.post(
        svc.url + "/v1/chat/completions", json=chat("What does the Acme Cloud Pro plan cost?"), timeout=30
    ).json()
    g = body["grounding"]
    assert g["status"] == "abstained" and g["abstention"]["reason"] == "invalid_citations"
    compose_calls = [b for b in llm.bodies() if "You plan web searches" not in b["messages"][0]["content"]]
    assert len(compose_calls) == 2  # one retry with a tighter evidence set
    assert body["citations"] == []


def test_unsupported_and_uncited_sentences_are_dropped(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = planner_or(
        "Acme Cloud raised the Pro plan price to $30 per month [S1]. "
        "Acme Cloud was founded on the Moon in 1802 by penguins [S2]. "
        "The Pro plan includes unlimited projects and priority support [S2]. "
        "Acme Cloud is the largest cloud provider in Europe."
    )
    svc = _stack(searxng, web, llm, service_factory)
    body = httpx.post(
        svc.url + "/v1/chat/completions", json=chat("What does the Acme Cloud Pro plan cost?"), timeout=30
    ).json()
    g = body["grounding"]
    content = body["choices"][0]["message"]["content"]
    assert g["status"] == "grounded"
    assert "Moon" not in content and "largest" not in content
    assert {c["text"][:20] for c in g["dropped_claims"]} == {"Acme Cloud was found", "Acme Cloud is the la"}
    flagged = httpx.post(
        svc.url + "/v1/chat/completions",
        json=chat("What does the Acme Cloud Pro plan cost?", verification="flag", cache="bypass"),
        timeout=30,
    ).json()
    assert "Moon" in flagged["choices"][0]["message"]["content"]
    assert [c["supported"] for c in flagged["grounding"]["claims"]] == [True, False, True, False]
    assert flagged["grounding"]["groundedness"] == 0.5


def test_mostly_unsupported_draft_becomes_an_abstention(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = planner_or(
        "Acme Cloud raised the Pro plan price to $30 per month [S1]. "
        "Acme Cloud was founded on the Moon in 1802 by penguins [S2]. "
        "Acme Cloud is the largest cloud provider in Europe."
    )
    svc = _stack(searxng, web, llm, service_factory)
    body = httpx.post(
        svc.url + "/v1/chat/completions", json=chat("What does the Acme Cloud Pro plan cost?"), timeout=30
    ).json()
    g = body["grounding"]
    assert g["status"] == "abstained" and g["abstention"]["reason"] == "unsupported_answer"
    assert g["groundedness"] < 0.5
    assert body["choices"][0]["message"]["annotations"] == [] and body["citations"] == []


def test_composer_failure_degrades_to_extractive(searxng, web, llm, service_factory):
    publish_acme(web, searxng)

    def composer(body):
        return {"status": 500, "error": "upstream exploded"}

    llm.default = planner_or(composer)
    svc = _stack(searxng, web, llm, service_factory)
    r = httpx.post(svc.url + "/v1/chat/completions", json=chat("What does the Acme Cloud Pro plan cost?"), timeout=30)
    assert r.status_code == 200
    g = r.json()["grounding"]
    assert g["composer"] == "extractive:fallback" and g["status"] == "grounded"
    assert re.search(r"\$30", r.json()["choices"][0]["message"]["content"])


def test_search_failure_is_an_abstention_not_a_500(searxng, web, llm, service_factory):
    searxng.fail(500, times=None)
    llm.default = planner_or("unused")
    svc = _stack(searxng, web, llm, service_factory)
    r = httpx.post(svc.url + "/v1/chat/completions", json=chat("What does the Acme Cloud Pro plan cost?"), timeout=30)
    assert r.status_code == 200
    g = r.json()["grounding"]
    assert g["status"] == "abstained" and g["abstention"]["reason"] == "no_search_results"
    assert g["search_errors"]


def test_ungrounded_route_goes_straight_to_the_model(searxng, web, llm, service_factory):
    llm.default = "Bonjour le monde, ceci est une traduction."
    svc = _stack(searxng, web, llm, service_factory)
    text = "Translate this into French: Hello world, this is a translation of a short sentence for the test."
    body = httpx.post(svc.url + "/v1/chat/completions", json=chat(text), timeout=30).json()
    assert body["grounding"]["status"] == "ungrounded"
    assert body["grounding"]["route"]["reason"] == "text_transformation"
    assert body["choices"][0]["message"]["content"] == "Bonjour le monde, ceci est une traduction."
    assert searxng.queries() == []


def test_fetches_go_through_the_forward_proxy(searxng, web, llm, proxy, service_factory):
    urls = publish_acme(web, searxng)
    llm.default = planner_or("Acme Cloud raised the Pro plan price to $30 per month [S1][S2].")
    svc = _stack(searxng, web, llm, service_factory, **proxy.settings_overrides())
    body = httpx.post(
        svc.url + "/v1/chat/completions", json=chat("What does the Acme Cloud Pro plan cost?"), timeout=30
    ).json()
    assert body["grounding"]["status"] == "grounded"
    proxied = proxy.urls()
    assert all(any(u in p for p in proxied) for u in urls)


def test_search_results_cached_in_redis(searxng, web, llm, service_factory, redis_url):
    publish_acme(web, searxng)
    llm.default = planner_or("Acme Cloud raised the Pro plan price to $30 per month [S1][S2].")
    svc = _stack(searxng, web, llm, service_factory, redis_url=redis_url)
    first = httpx.post(
        svc.url + "/v1/chat/completions", json=chat("What does the Acme Cloud Pro plan cost?"), timeout=30
    )
    calls, fetches = len(searxng.requests), len(web.requests)
    # Another verification mode is another answer, but the same searches and pages.
    second = httpx.post(
        svc.url + "/v1/chat/completions",
        json=chat("What does the Acme Cloud Pro plan cost?", verification="flag"),
        timeout=30,
    )
    assert first.json()["grounding"]["status"] == second.json()["grounding"]["status"] == "grounded"
    assert len(searxng.requests) == calls  # no new upstream search
    assert len(web.requests) == fetches  # no new page download
    assert "search=hit" in second.headers["X-Grounding-Cache"] and "page=hit" in second.headers["X-Grounding-Cache"]
    assert second.json()["grounding"]["cost"]["search_calls"] == 0
    import redis

    keys = redis.Redis.from_url(redis_url).keys("ga:search:*")
    assert keys


def test_redis_down_never_fails_a_request(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = planner_or("Acme Cloud raised the Pro plan price to $30 per month [S1][S2].")
    svc = _stack(searxng, web, llm, service_factory, redis_url="redis://127.0.0.1:1/0")
    r = httpx.post(svc.url + "/v1/chat/completions", json=chat("What does the Acme Cloud Pro plan cost?"), timeout=30)
    assert r.status_code == 200 and r.json()["grounding"]["status"] == "grounded"
    assert httpx.get(svc.url + "/readyz").json()["checks"]["cache_ok"] is False


def test_model_classifies_an_unclear_question_as_stable(searxng, web, llm, service_factory):
    def reply(body):
        if "You plan web searches" in body["messages"][0]["content"]:
            return '{"needs_search": false, "queries": [], "freshness_days": 3650}'
        return "A prime number has exactly two divisors: one and itself."

    llm.default = reply
    svc = _stack(searxng, web, llm, service_factory)
    body = httpx.post(svc.url + "/v1/chat/completions", json=chat("What is a prime number?"), timeout=30).json()
    g = body["grounding"]
    assert g["status"] == "ungrounded" and g["route"] == {
        "needs_search": False,
        "reason": "llm_classified_stable",
        "by": "llm",
    }
    assert searxng.queries() == []
    # mode=always overrides the model's classification
    forced = httpx.post(
        svc.url + "/v1/chat/completions", json=chat("What is a prime number?", mode="always"), timeout=30
    ).json()
    assert forced["grounding"]["route"]["reason"] == "mode_always" and searxng.queries()


def test_follow_up_is_planned_as_a_standalone_question(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    llm.default = planner_or("Acme Cloud raised the Pro plan price to $30 per month [S1][S2].")
    svc = _stack(searxng, web, llm, service_factory)
    messages = [
        {"role": "user", "content": "Tell me about Acme Cloud."},
        {"role": "assistant", "content": "Acme Cloud is a hosting company."},
        {"role": "user", "content": "what about their pricing?"},
    ]
    httpx.post(svc.url + "/v1/chat/completions", json={"model": "x", "messages": messages}, timeout=30)
    planner_question = [b for b in llm.bodies() if "You plan web searches" in b["messages"][0]["content"]][0][
        "messages"
    ][-1]["content"]
    assert "Acme Cloud" in planner_question and "pricing" in planner_question


def _judge_aware(composer, judge):
    base = planner_or(composer)

    def reply(body):
        if body["messages"][0]["content"].startswith("You check whether a claim"):
            return judge(body)
        return base(body)

    return reply


def test_judge_settles_a_paraphrase_the_lexical_check_doubts(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    # A faithful paraphrase: few of its words appear in the span, so the lexical check cannot settle it.
    paraphrase = "Subscribers of Acme Cloud Pro now pay $30 monthly after the increase [S1]."
    seen = []

    def judge(body):
        seen.append(body["messages"][-1]["content"])
        return '{"supported": true, "quote": "Acme Cloud raised the price of its Pro plan to $30 per month"}'

    llm.default = _judge_aware("Acme Cloud raised the Pro plan price to $30 per month [S1][S2]. " + paraphrase, judge)
    svc = _stack(searxng, web, llm, service_factory)
    body = httpx.post(
        svc.url + "/v1/chat/completions", json=chat("What does the Acme Cloud Pro plan cost?"), timeout=30
    ).json()
    claims = body["grounding"]["claims"]
    judged = [c for c in claims if c["judged"] is not None]
    assert seen and judged and judged[0]["supported"] and "Subscribers" in judged[0]["text"]
    assert "Subscribers" in body["choices"][0]["message"]["content"]
    assert body["grounding"]["cost"]["tokens"]  # the judge's tokens are booked too


def test_judge_with_an_invented_quote_is_not_believed(searxng, web, llm, service_factory):
    publish_acme(web, searxng)
    paraphrase = "Subscribers of Acme Cloud Pro now pay $30 monthly after the increase [S1]."
    llm.default = _judge_aware(
        "Acme Cloud raised the Pro plan price to $30 per month [S1][S2]. " + paraphrase,
        lambda body: '{"supported": true, "quote": "Acme Cloud Pro subscribers pay $30 monthly."}',
    )
    svc = _stack(searxng, web, llm, service_factory)
    body = httpx.post(
        svc.url + "/v1/chat/completions", json=chat("What does the Acme Cloud Pro plan cost?"), timeout=30
    ).json()
    assert "Subscribers" not in body["choices"][0]["message"]["content"]
    assert any("Subscribers" in c["text"] and c["judged"] is False for c in body["grounding"]["dropped_claims"])
