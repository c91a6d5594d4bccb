"""Shared builders for the HTTP-level tests."""

from __future__ import annotations

import json
from datetime import date, timedelta

from simulators.searxng import searx_result
from simulators.web_pages import ACME

TODAY = date.today()


def chat(question: str, **grounding) -> dict:
    body = {"model": "grounded-answer", "messages": [{"role": "user", "content": question}]}
    if grounding:
        body["grounding"] = grounding
    return body


def planner_or(composer):
    """An LLM script: planner calls get JSON queries, composer calls get `composer(body)`."""

    def reply(body: dict):
        system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
        if "You plan web searches" in system:
            question = body["messages"][-1]["content"]
            return json.dumps(
                {"needs_search": True, "queries": [question, question + " details"], "freshness_days": 365}
            )
        return composer(body) if callable(composer) else composer

    return reply


# Independent reports of one fact: same facts, each publisher's own words (not near-duplicates).
ACME_REPORTS = [
    ACME,
    [
        "Blog B has learned that the Acme Cloud Pro plan now costs $30 per month, up from $25 earlier this year.",
        "The Pro plan includes unlimited projects and priority support, which our reviewers rate highly for teams.",
        "Customers who signed up before the change will pay the old price until their plan renews, Acme Cloud told us.",
    ],
    [
        "Starting this month the Pro tier of Acme Cloud is billed at $30 per month for each workspace on the service.",
        "Wire C compared the Pro tier with rival hosting offers and found the new price in the middle of the market.",
        "Acme Cloud has not changed the limits of its free tier, according to the notice sent to all customers.",
    ],
]


def publish_acme(web, searxng, *, sites=("news-a.test", "blog-b.test"), published=None):
    """One story from several publishers in their own words, answered by searxng for any query."""
    urls = []
    for i, name in enumerate(sites):
        site = web.site(name)
        urls.append(
            site.add_article(
                f"/acme-{i}",
                f"Acme Cloud Pro price ({name})",
                ACME_REPORTS[i],
                published=published or (TODAY - timedelta(days=2)),
            )
        )
    searxng.set_default(
        [searx_result(u, f"Acme Cloud Pro price {i}", "Acme Cloud Pro plan price") for i, u in enumerate(urls)]
    )
    return urls
