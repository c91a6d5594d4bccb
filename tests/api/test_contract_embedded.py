"""The service out of the box: local sample corpus, extractive composer, in-process cache."""

from __future__ import annotations

import re

import httpx
import pytest

from app.domain.types import AbstentionReason
from tests.api.helpers import chat


@pytest.fixture(scope="module")
def embedded(request):
    from simulators import ServiceServer

    svc = ServiceServer().start()  # all embedded defaults
    request.addfinalizer(svc.stop)
    return svc


def test_cited_answer_from_the_sample_corpus(embedded):
    r = httpx.post(embedded.url + "/v1/chat/completions", json=chat("What is asyncio.TaskGroup?"), timeout=30)
    assert r.status_code == 200
    body = r.json()
    g = body["grounding"]
    assert g["status"] == "grounded", g["abstention"]
    assert g["composer"] == "extractive"
    content = body["choices"][0]["message"]["content"]
    assert "TaskGroup" in content
    markers = [int(n) for n in re.findall(r"\[(\d+)\]", content)]
    assert markers and set(markers) == set(range(1, len(body["citations"]) + 1))
    assert all(u.startswith("https://docs.python.org/3.11/") for u in body["citations"])
    for ann in body["choices"][0]["message"]["annotations"]:
        cite = ann["url_citation"]
        sentence = content[cite["start_index"] : cite["end_index"]]
        assert cite["url"] in body["citations"]
        assert re.search(r"\[\d+\]", sentence), sentence
    assert all(c["supported"] for c in g["claims"])
    assert r.headers["X-Grounding-Status"] == "grounded"
    assert float(r.headers["X-Grounding-Cost-USD"]) == 0.0
    assert int(r.headers["X-Grounding-Searches"]) >= 1
    for name in (
        "X-Request-Id",
        "X-Grounding-Prompt-Tokens",
        "X-Grounding-Completion-Tokens",
        "X-Grounding-Fetches",
        "X-Grounding-Cache",
    ):
        assert name in r.headers
    assert set(g["timings_ms"]) >= {
        "route",
        "plan",
        "search",
        "fetch",
        "extract",
        "select",
        "gate",
        "compose",
        "cite",
        "verify",
        "total",
    }


def test_structured_abstention_for_an_uncovered_question(embedded):
    r = httpx.post(embedded.url + "/v1/grounded-answers", json=chat("What is the price of Bitcoin today?"), timeout=30)
    assert r.status_code == 200
    body = r.json()
    ab = body["grounding"]["abstention"]
    assert body["grounding"]["status"] == "abstained"
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["choices"][0]["message"]["content"] == ab["message"]
    assert ab["reason"] in {r.value for r in AbstentionReason}
    assert ab["queries_run"] and isinstance(ab["failed_checks"], list) and ab["failed_checks"]
    assert body["citations"] == []
    assert r.headers["X-Grounding-Status"] == "abstained"


def test_both_routes_share_one_handler(embedded):
    a = httpx.post(
        embedded.url + "/v1/chat/completions", json=chat("What does the tomllib module do?"), timeout=30
    ).json()
    b = httpx.post(
        embedded.url + "/v1/grounded-answers", json=chat("What does the tomllib module do?"), timeout=30
    ).json()
    assert a["choices"][0]["message"]["content"] == b["choices"][0]["message"]["content"]
    assert a["citations"] == b["citations"]


def test_request_ids_are_made_here_and_a_client_id_is_echoed(embedded):
    for header in ("X-Client-Request-Id", "X-Request-Id"):
        r = httpx.post(
            embedded.url + "/v1/chat/completions",
            json=chat("What is tomllib?"),
            headers={header: "client-42"},
            timeout=30,
        )
        # The client's id is echoed, never used as ours (ours keys the trace).
        assert r.headers["X-Client-Request-Id"] == "client-42"
        assert r.headers["X-Request-Id"].startswith("req_")
        assert r.json()["grounding"]["request_id"] == r.headers["X-Request-Id"]
    r2 = httpx.get(embedded.url + "/healthz")
    assert r2.headers["X-Request-Id"].startswith("req_") and "X-Client-Request-Id" not in r2.headers


def test_trace_explains_the_answer(embedded):
    r = httpx.post(
        embedded.url + "/v1/chat/completions",
        json=chat("What is asyncio.TaskGroup?"),
        timeout=30,
    )
    trace = httpx.get(embedded.url + "/v1/traces/" + r.headers["X-Request-Id"]).json()
    assert trace["plan"]["queries"] == r.json()["grounding"]["queries"]
    assert trace["search"] and trace["fetches"] and trace["evidence"]
    assert any(d["decision"] == "kept" for d in trace["selection"])
    missing = httpx.get(embedded.url + "/v1/traces/nope")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_service_endpoints(embedded):
    assert httpx.get(embedded.url + "/healthz").json() == {"status": "ok"}
    ready = httpx.get(embedded.url + "/readyz")
    assert ready.status_code == 200 and ready.json()["checks"]["search_providers"] == ["local"]
    models = httpx.get(embedded.url + "/v1/models").json()
    assert models["object"] == "list" and models["data"][0]["id"] == "grounded-answer"
    metrics = httpx.get(embedded.url + "/metrics")
    assert metrics.status_code == 200 and "grounded_requests_total" in metrics.text


def test_sample_corpus_answers_come_from_the_page_about_the_subject(embedded):
    """The out-of-the-box demo: questions the sample corpus covers are answered from the right page."""
    cases = {
        "What is asyncio.TaskGroup?": "library/asyncio-task.html",
        "What does the tomllib module do?": "library/tomllib.html",
        "When was Python 3.10 released?": "whatsnew/3.10.html",
    }
    for question, page in cases.items():
        body = httpx.post(embedded.url + "/v1/chat/completions", json=chat(question), timeout=30).json()
        assert body["grounding"]["status"] == "grounded", (question, body["grounding"]["abstention"])
        assert body["citations"][0].endswith(page), (question, body["citations"])
    released = httpx.post(
        embedded.url + "/v1/chat/completions", json=chat("When was Python 3.10 released?"), timeout=30
    ).json()
    assert "October 4, 2021" in released["choices"][0]["message"]["content"]


def test_a_corpus_page_is_extracted_once_even_when_the_cache_is_bypassed(embedded):
    # Extraction is a pure function of the page's bytes: the memo serves `cache: bypass` too, and the
    # answer is the same as when the page was extracted.
    from app import metrics

    def memo(outcome: str) -> float:
        return metrics.EXTRACTION_MEMO.labels(outcome=outcome)._value.get()

    body = {**chat("How do I read a TOML file with tomllib?"), "grounding": {"cache": "bypass"}}
    first = httpx.post(embedded.url + "/v1/chat/completions", json=body, timeout=30).json()
    hits, misses = memo("hit"), memo("miss")
    second = httpx.post(embedded.url + "/v1/chat/completions", json=body, timeout=30).json()
    assert memo("miss") == misses and memo("hit") > hits
    assert second["choices"][0]["message"]["content"] == first["choices"][0]["message"]["content"]
    assert second["citations"] == first["citations"] and second["grounding"]["cache"].get("answer") != "hit"
