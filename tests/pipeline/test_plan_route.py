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
        # A reference question: the time model may read a bare name ("acme widgets") as time-sensitive,
        # whose queries get the year (the first test above).
        question="How do acme widgets work?",
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


def test_a_follow_up_to_a_how_to_carries_the_call_the_answer_gave():
    """ "do that with a timeout" means the call the answer named; a leading "And" continues the
    conversation even in a long question."""
    q = standalone_question(
        [
            ("user", "How do I run a shell command in Python and get its output?"),
            ("assistant", "Use subprocess.run() with capture_output=True; the output is in stdout [1]."),
            ("user", "How do I do that with a timeout?"),
        ]
    )
    assert q.startswith("How do I do that with a timeout? (subprocess.run")
    q = standalone_question(
        [
            ("user", "How do I parse a JSON string in Python?"),
            ("assistant", "Use json.loads(), which turns a JSON string into Python objects [1]."),
            ("user", "And how do I go the other way, turning a dict back into a string?"),
        ]
    )
    assert "json.loads" in q and "Python" in q
    long_question = "How do I make a class whose objects can never be changed after they have been created?"
    assert standalone_question([("user", "How do I parse JSON?"), ("assistant", "…"), ("user", long_question)]) == (
        long_question
    )
