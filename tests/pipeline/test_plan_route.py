from app.pipeline.plan import clean_queries, heuristic_plan, standalone_question
from app.pipeline.route import route_request
from tests.pipeline.helpers import TODAY


def test_heuristic_plan_adds_year_for_time_sensitive_and_primary_query():
    p = heuristic_plan(
        "What is the latest price of the Acme Pro plan?",
        max_queries=3,
        freshness_days=None,
        today=TODAY,
        primary_domains=["acme.example"],
        default_window=365,
    )
    assert 2 <= len(p.queries) <= 3
    assert all("2026" in q for q in p.queries)
    assert any("site:acme.example" in q for q in p.queries)
    assert p.freshness_days == 30


def test_stable_question_gets_no_year_and_wide_window():
    p = heuristic_plan(
        "When was Python 3.11 released?",
        max_queries=3,
        freshness_days=None,
        today=TODAY,
        primary_domains=[],
        default_window=365,
    )
    assert not any("2026" in q for q in p.queries)
    assert p.freshness_days == 3650


def test_clean_queries_dedupes_drops_short_and_caps():
    qs = clean_queries(
        ["  acme   widgets ", "widgets acme", "", "ab", 7, "acme pro plan", "x y z w", "more"],
        cap=2,
        question="acme widgets",
        today=TODAY,
        primary_domains=[],
    )
    assert qs == ["acme widgets", "acme pro plan"]


def test_follow_up_is_made_standalone():
    q = standalone_question(
        [("user", "What is new in Python 3.12?"), ("assistant", "…"), ("user", "what about its performance?")]
    )
    assert "Python" in q and "3.12" in q


def test_router():
    assert route_request("hi", "auto", given_text_chars=0, llm_available=True).needs_search is False
    assert (
        route_request(
            "Summarize this text: " + "x " * 100, "auto", given_text_chars=200, llm_available=True
        ).needs_search
        is False
    )
    assert route_request(
        "What is the latest Python release?", "auto", given_text_chars=0, llm_available=True
    ).needs_search
    assert route_request("hi", "always", given_text_chars=0, llm_available=True).needs_search
    assert (
        route_request("What is the latest Python?", "never", given_text_chars=0, llm_available=True).needs_search
        is False
    )
    # Without a model nothing can answer ungrounded.
    assert route_request("hi", "auto", given_text_chars=0, llm_available=False).needs_search
