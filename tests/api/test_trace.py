"""The retrieval trace makes a wrong answer explainable: from the answer back to the page that misled it."""

from __future__ import annotations

import httpx

from simulators.searxng import searx_result
from tests.api.helpers import TODAY, chat, planner_or


def test_trace_explains_a_scripted_wrong_answer(searxng, web, llm, service_factory):
    stale = web.site("mirror.test").add_article(
        "/acme",
        "Acme Cloud Pro plan",
        [
            "The Acme Cloud Pro plan costs $99 per month and includes unlimited projects for every team in the company.",
            "This mirror copies vendor price lists and does not say when it last checked them with the vendor itself.",
        ],
        published=None,
        jsonld=False,
        meta=False,
    )
    fresh = web.site("acme-news.test").add_article(
        "/acme",
        "Acme Cloud cuts Pro price",
        [
            "Acme Cloud cut the price of its Pro plan to $30 per month this week, according to its announcement to customers.",
            "The Pro plan keeps unlimited projects and priority support for every member of the team after the change.",
        ],
        published=TODAY,
    )
    searxng.set_default(
        [
            searx_result(stale, "Acme Cloud Pro plan", "Acme Cloud Pro $99"),
            searx_result(fresh, "Acme Cloud cuts Pro price", "Acme Cloud Pro $30"),
        ]
    )

    def composer(body):
        prompt = body["messages"][-1]["content"]
        # The model trusts the mirror: whichever span holds "$99" is cited.
        sid = next(part.split('"')[1] for part in prompt.split("<evidence-")[1:] if "$99" in part)
        return f"The Acme Cloud Pro plan costs $99 per month [{sid}]."

    llm.default = planner_or(composer)
    svc = service_factory(**searxng.settings_overrides(), **web.settings_overrides(), **llm.settings_overrides())
    r = httpx.post(
        svc.url + "/v1/chat/completions",
        json=chat("How much does the Acme Cloud Pro plan cost?", min_sources=1),
        timeout=30,
    )
    assert "$99" in r.json()["choices"][0]["message"]["content"]  # the wrong answer went out
    trace = httpx.get(svc.url + "/v1/traces/" + r.headers["X-Request-Id"]).json()
    # What was searched and found,
    assert trace["plan"]["queries"] and {h["url"] for s in trace["search"] for h in s["hits"]} == {stale, fresh}
    # which pages were read,
    assert {f["url"]: f["outcome"] for f in trace["fetches"]} == {stale: "ok", fresh: "ok"}
    # what the composer saw, with each span's source, date and size,
    spans = {e["url"]: e for e in trace["evidence"]}
    assert "$99" in spans[stale]["text"] and spans[stale]["tokens"] > 0
    # and the verdict on the sentence: supported by a quote from the undated mirror.
    claim = trace["claims"][0]
    assert claim["supported"] and "$99" in claim["quote"]
    sources = {s["url"]: s for s in r.json()["grounding"]["sources"]}
    assert sources[stale]["published_at"] is None and sources[stale]["date_source"] == "unknown"
    assert trace["evidence_tokens"] > 0 and trace["timings_ms"]["total"] > 0
    assert trace["conflicts"] and trace["conflicts"][0]["attribute"] == "price"  # the disagreement was visible
    # The trace is behind the API's auth like everything else under /v1.
    locked = service_factory(api_keys=["k"], **searxng.settings_overrides(), **web.settings_overrides())
    assert httpx.get(locked.url + "/v1/traces/wrong-1").status_code == 401
