"""The provider chain inside the real service: GA_SEARCH_PROVIDERS=brave,searxng with both local
servers, pages on the `web` fixture, no LLM (the embedded extractive composer answers)."""

from __future__ import annotations

from datetime import date

import httpx

from simulators import searx_result
from simulators.search_apis import api_hit

QUESTION = "When was Foo 2.0 released?"
PARAGRAPHS = [
    "The Foo project released Foo 2.0 on 4 March 2025, its first major release in three years.",
    "Foo 2.0 adds a faster parser and drops support for Python 3.8, the maintainers said.",
    "The new parser is twice as fast on large files, and the old configuration format keeps "
    "working for one more release before it is removed.",
]


def _publish(web, *names: str) -> list[str]:
    urls = []
    for name in names:
        site = web.site(name)
        site.add_article("/foo-2", "Foo 2.0 released", PARAGRAPHS, published=date(2025, 3, 4))
        urls.append(site.url_for("/foo-2"))
    return urls


def _service(service_factory, brave, searxng, web):
    return service_factory(
        search_providers=["brave", "searxng"],
        brave_api_key=brave.api_key,
        brave_url=brave.url + brave.path,
        searxng_url=searxng.url,
        default_freshness_days=100_000,
        **web.settings_overrides(),
    )


async def _ask(svc, **grounding) -> dict:
    body = {
        "model": "x",
        "messages": [{"role": "user", "content": QUESTION}],
        "grounding": {"mode": "always", "min_sources": 1, **grounding},
    }
    async with httpx.AsyncClient(trust_env=False, timeout=30) as client:
        resp = await client.post(f"{svc.url}/v1/chat/completions", json=body)
    assert resp.status_code == 200, resp.text  # an abstention is an answer, never a 5xx
    return resp.json()


def _cited(reply: dict) -> set[str]:
    return set(reply["citations"]) | {s["url"] for s in reply["grounding"]["sources"]}


async def test_rate_limited_brave_falls_back_to_searxng(brave, searxng, web, service_factory):
    urls = _publish(web, "news-a.test", "blog-b.test")
    brave.fail(429, times=None)
    searxng.set_default([searx_result(u, "Foo 2.0 released", "Foo 2.0 released on 4 March 2025") for u in urls])
    reply = await _ask(_service(service_factory, brave, searxng, web))

    g = reply["grounding"]
    assert brave.requests.all() and searxng.requests.all()
    assert len(brave.queries()) == len(searxng.queries())  # every query failed over
    assert g["status"] == "grounded", g.get("abstention")
    assert reply["citations"] and set(reply["citations"]) <= set(urls)
    assert "4 March 2025" in reply["choices"][0]["message"]["content"]
    assert any(e.startswith("brave:") and "429" in e for e in g["search_errors"])


async def test_brave_answers_first_and_searxng_is_not_asked(brave, searxng, web, service_factory):
    urls = _publish(web, "news-a.test")
    brave.set_default([api_hit(u, "Foo 2.0 released", "Foo 2.0 released on 4 March 2025") for u in urls])
    reply = await _ask(_service(service_factory, brave, searxng, web))
    assert reply["grounding"]["status"] == "grounded"
    assert brave.requests.all() and searxng.requests.all() == []


async def test_empty_brave_answer_moves_on_to_searxng(brave, searxng, web, service_factory):
    urls = _publish(web, "news-a.test")
    searxng.set_default([searx_result(u, "Foo 2.0 released", "Foo 2.0 released on 4 March 2025") for u in urls])
    reply = await _ask(_service(service_factory, brave, searxng, web))
    assert brave.requests.all() and searxng.requests.all()
    assert reply["grounding"]["status"] == "grounded"
    assert set(reply["citations"]) <= set(urls)


async def test_both_providers_failing_is_an_abstention(brave, searxng, web, service_factory):
    brave.fail(500, times=None)
    searxng.fail(429, times=None)
    reply = await _ask(_service(service_factory, brave, searxng, web))
    g = reply["grounding"]
    assert g["status"] == "abstained"
    assert g["abstention"]["reason"] == "no_search_results"
    assert reply["citations"] == [] and web.requests.all() == []
    assert {e.split(":")[0] for e in g["search_errors"]} == {"brave", "searxng"}


async def test_search_errors_list_what_failed(brave, searxng, web, service_factory):
    brave.fail(429, times=None)
    searxng.json_enabled = False
    reply = await _ask(_service(service_factory, brave, searxng, web))
    errors = reply["grounding"]["search_errors"]
    assert any(e.startswith("brave:") and "429" in e for e in errors)
    assert any(e.startswith("searxng:") and "format=json" in e for e in errors)


async def test_domain_filters_hold_when_the_provider_ignores_them(brave, searxng, web, service_factory):
    """Brave (scripted) returns an excluded site and a site outside include_domains: the service
    drops both in code and counts them in grounding.filtered."""
    good, excluded, outside = _publish(web, "news-a.test", "blog-b.test", "other-c.test")
    include = [web.site("news-a.test").ip, web.site("blog-b.test").ip]
    excluded_host = web.site("blog-b.test").ip
    brave.set_default(
        [api_hit(u, "Foo 2.0 released", "Foo 2.0 released on 4 March 2025") for u in (excluded, outside, good)]
    )
    reply = await _ask(
        _service(service_factory, brave, searxng, web), include_domains=include, exclude_domains=[excluded_host]
    )

    g = reply["grounding"]
    assert g["status"] == "grounded", g.get("abstention")
    assert _cited(reply) == {good}
    assert g["filtered"].get("exclude_domains", 0) >= 1 and g["filtered"].get("include_domains", 0) >= 1
    fetched = {r.site for r in web.requests.all()}
    assert "blog-b.test" not in fetched and "other-c.test" not in fetched


def test_the_chat_model_is_chosen_through_the_registry():
    import pytest

    from app.errors import GroundingError
    from app.providers.llm.base import build_chat_model
    from app.settings import Settings
    from app.state import load_builtin_providers

    load_builtin_providers()
    settings = Settings(llm_base_url="http://127.0.0.1:9/v1")
    assert build_chat_model(settings.llm_provider, settings).name
    with pytest.raises(GroundingError, match="unknown chat-model provider"):
        build_chat_model("no-such-provider", settings)
