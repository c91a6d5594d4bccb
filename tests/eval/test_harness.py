"""The harness's own pieces: case parsing, relative dates, the independent lexical measure, the
scripted model and the metrics, on small inputs whose answers are known."""

from __future__ import annotations

from datetime import date

import pytest

from eval.cases import CaseError, fill_dates, parse_case, resolve_date
from eval.metrics import score_case, states
from eval.scripted_model import NO_ANSWER, cite_top_spans, fill_site_refs, parse_evidence
from eval.text import lexical_support
from eval.web import InstalledWeb

TODAY = date(2026, 3, 10)


def test_relative_and_shifted_dates():
    assert resolve_date("-3d", None, TODAY) == "2026-03-07"
    assert resolve_date("-2w", None, TODAY) == "2026-02-24"
    assert resolve_date("-1y", None, TODAY) == "2025-03-10"
    # An absolute date keeps its distance to as_of.
    assert resolve_date("2026-01-10", date(2026, 1, 15), TODAY) == "2026-03-05"
    assert resolve_date(None, None, TODAY) is None
    assert fill_dates("Updated {date:-2d}.", TODAY) == "Updated March 8, 2026."


def test_case_validation_names_the_problem():
    with pytest.raises(CaseError, match="expected_status"):
        parse_case({"id": "x", "question": "q", "expected_status": "maybe"}, "f:1")
    with pytest.raises(CaseError, match="not one of the case's pages"):
        parse_case(
            {
                "id": "x",
                "question": "q",
                "expected_status": "abstained",
                "web": {"pages": [], "search": {"default": ["a.test/p"]}},
            },
            "f:2",
        )


def test_lexical_support_requires_numbers_and_terms():
    page = "Acme Cloud raised the Pro plan price to $30 per month. The plan includes priority support."
    assert lexical_support("The Acme Cloud Pro plan costs $30 per month", page) >= 0.6
    assert lexical_support("The Acme Cloud Pro plan costs $25 per month", page) == 0.0
    assert lexical_support("Acme was founded on the Moon by penguins", page) < 0.6


def test_scripted_model_cites_best_spans_and_fills_site_refs():
    prompt = (
        '<evidence-ab12cd34 id="S1" title="t" domain="127.0.0.2" date="2026-03-01">\n'
        "Unrelated words about gardening and tomatoes in pots.\n</evidence-ab12cd34>\n\n"
        '<evidence-ab12cd34 id="S2" title="t" domain="127.0.0.3" date="2026-03-02">\n'
        "The Zephyr X2 phone costs $799 with 256 GB of storage.\n</evidence-ab12cd34>"
    )
    spans = parse_evidence(prompt)
    assert [s.span_id for s in spans] == ["S1", "S2"]
    assert (
        cite_top_spans("How much does the Zephyr X2 cost?", spans)
        == "The Zephyr X2 phone costs $799 with 256 GB of storage [S2]."
    )
    assert cite_top_spans("Who won the cup?", spans) == NO_ANSWER
    assert fill_site_refs("x [S:b.test] y [S:nope.test]", spans, {"b.test": "127.0.0.3"}) == "x [S2] y [S99]"


def _body(content, citations, claims, status="grounded", sources=None):
    return {
        "citations": citations,
        "choices": [{"message": {"content": content, "annotations": []}}],
        "grounding": {
            "status": status,
            "abstention": None,
            "claims": claims,
            "request_id": "r",
            "sources": sources if sources is not None else [{"url": u, "also_reported_by": []} for u in citations],
            "fetches": [{"final_url": u, "outcome": "ok"} for u in citations],
            "cost": {"usd": 0},
            "timings_ms": {},
        },
    }


def test_score_case_catches_bad_citations_leaks_and_unsupported_claims():
    case = parse_case(
        {
            "id": "c",
            "question": "What does Acme Pro cost?",
            "expected_status": "grounded",
            "gold_answers": ["$30"],
            "forbidden": ["$25"],
        }
    )
    web = InstalledWeb(page_text={"http://a/p": "Acme Pro costs $30 per month since this week."})
    good = _body(
        "Acme Pro costs $30 per month [1].",
        ["http://a/p"],
        [
            {
                "text": "Acme Pro costs $30 per month.",
                "source_ids": [1],
                "quote": "Acme Pro costs $30 per month since this week.",
                "supported": True,
                "support_score": 1.0,
            }
        ],
    )
    r = score_case(case, "extractive", web, good, 10.0)
    assert r.passed and r.citations_valid and r.claims[0].precise and r.claims[0].quote_in_source
    bad = _body(
        "Acme Pro costs $25 per month [2].",
        ["http://a/p"],
        [
            {
                "text": "Acme Pro costs $25 per month.",
                "source_ids": [1],
                "quote": "",
                "supported": True,
                "support_score": 0.9,
            }
        ],
    )
    r = score_case(case, "extractive", web, bad, 10.0)
    assert not r.passed and r.leaks == ["$25"] and r.answer_ok is False
    assert r.citations_valid is False and not r.claims[0].precise


def test_the_reader_keeps_a_sentence_whole_across_abbreviations():
    """The competent reader looks for the gold inside one sentence: "Feb. 14" must not be cut."""
    from eval.text import sentences

    assert sentences("Sentencing is scheduled for Feb. 14. In a Nov. 5 letter, Dr. Ruiz wrote. Done.") == [
        "Sentencing is scheduled for Feb. 14.",
        "In a Nov. 5 letter, Dr. Ruiz wrote.",
        "Done.",
    ]


def test_a_numeric_gold_is_not_found_inside_a_longer_number():
    # docsE-028: the gold "79" was counted in "(… bpo-33679.)", an answer that does not state it.
    assert not states("contributed by x in bpo-33642 and bpo-33679.", "79")
    assert states("wrap lines so that they don't exceed 79 characters.", "79")
    assert not states("it rose 13.5% in may.", "3.5%") and states("it rose 3.5% in may.", "3.5%")
    assert states("released in python 3.8.", "3.8") and states("costs $49.95 (about £40).", "£40")
    assert states("new in version 3.8.1", "3.8")  # a longer version states its prefix: no digit follows
    assert states("uses the with_suffix() method", "With_Suffix")  # no digit at either end: a substring, any case
