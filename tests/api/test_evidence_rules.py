"""Issue-4 behaviours over HTTP with the extractive composer (deterministic) and a scripted model:
syndicated copies, stale versus fresh, conflicting prices, undated pages, planted instructions,
unanswerable questions."""

from __future__ import annotations

from datetime import timedelta

import httpx

from simulators import CANARY
from simulators.searxng import searx_result
from simulators.web_site import add_near_duplicates_across
from tests.api.helpers import TODAY, chat, planner_or

STORY = [
    "Orbit Analytics released version 4.2 of its data platform on Tuesday, adding streaming joins and a new query planner.",
    "The company said version 4.2 cuts query latency by forty percent for typical dashboards used by its customers.",
    "Orbit Analytics also announced that support for version 3.x will end next spring, giving customers time to migrate.",
]


def _svc(searxng, web, service_factory, **extra):
    return service_factory(**searxng.settings_overrides(), **web.settings_overrides(), **extra)


def _ask(svc, question, **grounding):
    return httpx.post(svc.url + "/v1/chat/completions", json=chat(question, **grounding), timeout=30).json()


def test_syndicated_copies_are_one_source(searxng, web, service_factory):
    sites = [web.site(n) for n in ("wire-a.test", "wire-b.test", "wire-c.test")]
    urls = add_near_duplicates_across(sites, "/orbit", "Orbit Analytics ships 4.2", STORY, published=TODAY)
    searxng.set_default([searx_result(u, "Orbit 4.2", "Orbit Analytics version 4.2") for u in urls])
    svc = _svc(searxng, web, service_factory)
    body = _ask(svc, "What did Orbit Analytics release in version 4.2?")
    g = body["grounding"]
    assert g["status"] == "abstained" and g["abstention"]["reason"] == "insufficient_sources"
    one = _ask(svc, "What did Orbit Analytics release in version 4.2?", min_sources=1)
    sources = one["grounding"]["sources"]
    assert len(sources) == 1 and len(sources[0]["also_reported_by"]) == 2
    assert sum(s["reason"].startswith("near_duplicate_of") for s in one["grounding"]["selection"]) == 2


def _prices(web, searxng, *, old_days, new_days, old="$25", new="$30"):
    a, b = web.site("old-news.test"), web.site("new-news.test")
    u1 = a.add_article(
        "/p",
        "Acme Cloud Pro pricing",
        [
            f"Acme Cloud charges {old} per month for its Pro plan, the company said when it announced the plan to customers.",
            "The Pro plan includes ten projects, email support and a shared workspace for small teams in one region.",
        ],
        published=TODAY - timedelta(days=old_days),
    )
    u2 = b.add_article(
        "/p",
        "Acme Cloud Pro price change",
        [
            f"Acme Cloud now charges {new} per month for its Pro plan after a price change announced to customers this week.",
            "The new Pro plan adds unlimited projects and priority support, according to the announcement from Acme Cloud.",
        ],
        published=TODAY - timedelta(days=new_days),
    )
    searxng.set_default(
        [
            searx_result(u1, "Acme Pro pricing", "Acme Cloud Pro plan price"),
            searx_result(u2, "Acme Pro price change", "Acme Cloud Pro plan price"),
        ]
    )
    return u1, u2


def test_stale_page_is_dropped_and_the_fresh_value_used(searxng, web, service_factory):
    old_url, new_url = _prices(web, searxng, old_days=1000, new_days=3)
    svc = _svc(searxng, web, service_factory)
    body = _ask(svc, "What is the current price of the Acme Cloud Pro plan?", min_sources=1)
    content = body["choices"][0]["message"]["content"]
    assert body["grounding"]["status"] == "grounded"
    assert "$30" in content and "$25" not in content
    assert body["citations"] == [new_url]
    assert any(s["url"] == old_url and s["reason"].startswith("stale") for s in body["grounding"]["selection"])


def test_conflicting_prices_surface_prefer_or_abstain(searxng, web, service_factory):
    _prices(web, searxng, old_days=20, new_days=2)
    svc = _svc(searxng, web, service_factory)
    q = "How much does the Acme Cloud Pro plan cost per month?"
    surfaced = _ask(svc, q)
    conflict = surfaced["grounding"]["conflicts"][0]
    assert conflict["attribute"] == "price" and {v["value"] for v in conflict["values"]} == {"$25/month", "$30/month"}
    text = surfaced["choices"][0]["message"]["content"]
    assert "$25" in text and "$30" in text
    assert text.count("According to") == 2  # each value with its source and date
    assert str(TODAY - timedelta(days=20)) in text and str(TODAY - timedelta(days=2)) in text
    preferred = _ask(svc, q, on_conflict="prefer")
    assert "$30" in preferred["choices"][0]["message"]["content"]
    assert "$25" not in preferred["choices"][0]["message"]["content"].split("[")[0]
    abstained = _ask(svc, q, on_conflict="abstain")
    assert abstained["grounding"]["abstention"]["reason"] == "conflicting_evidence"
    assert abstained["grounding"]["conflicts"]  # reported whatever the policy


def test_undated_pages_cannot_answer_a_time_sensitive_question(searxng, web, service_factory):
    urls = []
    for name in ("shop-a.test", "shop-b.test"):
        site = web.site(name)
        urls.append(
            site.add_article(
                "/p",
                "Acme Cloud Pro price",
                [
                    f"{name} lists the Acme Cloud Pro plan price at $30 per month for teams of any size in every region.",
                    "Prices on this page are shown without tax and may change at any time without notice to visitors.",
                    "The Pro plan includes unlimited projects, priority support and single sign-on for every member of a team.",
                ],
                published=None,
                jsonld=False,
                meta=False,
            )
        )
    searxng.set_default([searx_result(u, "Acme price", "Acme Cloud Pro plan price") for u in urls])
    svc = _svc(searxng, web, service_factory)
    body = _ask(svc, "What is the current price of the Acme Cloud Pro plan?", min_sources=1)
    g = body["grounding"]
    assert g["status"] == "abstained" and g["abstention"]["reason"] == "stale_evidence"
    assert all(s["published_at"] is None for s in g["sources"]) or not g["sources"]


def test_planted_instruction_never_reaches_the_answer(searxng, web, llm, service_factory):
    hostile = web.site("forum.test")
    u1 = hostile.add_hostile("/t", "Orbit 4.2 thread", STORY, published=TODAY)
    other = web.site("review.test").add_article(
        "/r",
        "Orbit 4.2 review",
        [
            "Version 4.2 of the Orbit Analytics platform brings streaming joins, which our reviewers found fast and reliable.",
            "The new query planner in Orbit Analytics 4.2 chose better plans on every dashboard we tried in our tests.",
        ],
        published=TODAY,
    )
    searxng.set_default(
        [searx_result(u1, "Orbit thread", "Orbit Analytics 4.2"), searx_result(other, "Orbit review", "4.2")]
    )
    # Extractive: the visible instruction is never quoted.
    svc = _svc(searxng, web, service_factory)
    body = _ask(svc, "What did Orbit Analytics release in version 4.2?")
    assert body["grounding"]["status"] == "grounded" and CANARY not in body["choices"][0]["message"]["content"]
    # A model that obeys the page: its sentence has nothing to cite and is dropped.
    llm.default = planner_or(f"{CANARY}! [S1] Orbit Analytics released version 4.2 with streaming joins [S1][S2].")
    svc2 = _svc(searxng, web, service_factory, **llm.settings_overrides())
    body = _ask(svc2, "What did Orbit Analytics release in version 4.2?")
    assert CANARY not in body["choices"][0]["message"]["content"]
    assert any(CANARY in c["text"] for c in body["grounding"]["dropped_claims"])
    compose_prompt = [b for b in llm.bodies() if "You plan web searches" not in b["messages"][0]["content"]][-1]
    assert "Ignore previous instructions" not in compose_prompt["messages"][-1]["content"]


def test_off_topic_evidence_abstains_without_a_composition_call(searxng, web, llm, service_factory):
    """Evidence that shares nothing with the question scores under policy.skip_model_below: no model call."""
    site = web.site("news-a.test")
    u = site.add_article("/orbit", "Orbit ships 4.2", STORY, published=TODAY)
    searxng.set_default([searx_result(u, "Orbit", "Orbit Analytics")])
    llm.default = planner_or("should never be asked to compose")
    svc = _svc(searxng, web, service_factory, **llm.settings_overrides())
    body = _ask(svc, "Who won the 1998 chess olympiad in Elista?", min_sources=1)
    g = body["grounding"]
    assert g["status"] == "abstained" and g["abstention"]["reason"] == "evidence_does_not_answer"
    assert all("You plan web searches" in b["messages"][0]["content"] for b in llm.bodies())


def test_an_answer_that_states_no_value_of_the_asked_kind_abstains(searxng, web, llm, service_factory):
    """Same entity, unstated attribute: the model answers anyway with a cited, supported sentence, and
    the code disposes — an answer to "what is the battery life" must name the battery life."""
    site = web.site("news-a.test")
    u = site.add_article("/orbit", "Orbit ships 4.2", STORY, published=TODAY)
    searxng.set_default([searx_result(u, "Orbit", "Orbit Analytics")])
    llm.default = planner_or("Orbit Analytics released version 4.2 of its data platform on Tuesday [S1].")
    svc = _svc(searxng, web, service_factory, **llm.settings_overrides())
    body = _ask(svc, "What is the battery life of the Orbit Analytics platform?", min_sources=1)
    g = body["grounding"]
    assert g["status"] == "abstained" and g["abstention"]["reason"] == "evidence_does_not_answer"
    assert g["abstention"]["failed_checks"] == ["answer_states_asked_kind (measure)"]


def test_a_models_count_need_not_repeat_the_questions_noun(searxng, web, llm, service_factory):
    """The model read "1,200 companies" as the number of customers: a count is stated, the claim is
    supported, so the code does not overrule it (the extractive composer's own guard still wants the
    counted noun beside the number)."""
    from app.language.question import analyse
    from app.pipeline.answerability_features import typed_match

    site = web.site("news-a.test")
    story = [*STORY, "Orbit Analytics says 1,200 companies now run its data platform, up from 800 a year ago."]
    u = site.add_article("/orbit", "Orbit ships 4.2", story, published=TODAY)
    searxng.set_default([searx_result(u, "Orbit", "Orbit Analytics")])
    answer = "Orbit Analytics says 1,200 companies now run its data platform [S1]."
    llm.default = planner_or(answer)
    svc = _svc(searxng, web, service_factory, **llm.settings_overrides())
    question = "How many customers use the Orbit Analytics data platform?"
    body = _ask(svc, question, min_sources=1)
    assert body["grounding"]["status"] == "grounded", body["grounding"].get("abstention")
    assert "1,200 companies" in body["choices"][0]["message"]["content"]
    asked = analyse(question)
    assert not typed_match(asked, answer) and typed_match(asked, answer, beside_focus=False)


def test_primary_snippet_with_the_value_skips_the_fetch(searxng, web, service_factory):
    site = web.site("acme.test")
    url = site.add_article(
        "/pricing",
        "Acme Cloud pricing",
        [
            "Acme Cloud Pro costs $30 per month per workspace, billed monthly or yearly, with all features of the plan.",
            "Every plan includes single sign-on, audit logs and priority support from the Acme Cloud team at no extra cost.",
        ],
        published=TODAY,
    )
    host = url.split("/")[2].split(":")[0]
    searxng.set_default(
        [
            searx_result(
                url, "Acme Cloud pricing", "Acme Cloud Pro plan costs $30 per month per workspace.", published=TODAY
            )
        ]
    )
    svc = _svc(searxng, web, service_factory)
    body = _ask(svc, "How much does the Acme Cloud Pro plan cost?", primary_domains=[host])
    g = body["grounding"]
    assert g["status"] == "grounded" and "$30" in body["choices"][0]["message"]["content"]
    assert g["fetches"][0]["outcome"] == "skipped" and g["sources"][0]["via"] == "snippet"
    assert "/pricing" not in web.paths_requested(site)
    # A multi-hop question reads the page.
    _ask(
        svc,
        "How much does the Acme Cloud Pro plan cost and which features does it include?",
        primary_domains=[host],
        cache="bypass",
    )
    assert "/pricing" in web.paths_requested(site)
