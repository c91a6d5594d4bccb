"""Shared pieces of the inspector tests: the scenario on the simulated web, the key, screenshots."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from simulators.searxng import searx_result
from tests.api.helpers import TODAY

CHROMIUM = Path(os.environ.get("GA_TEST_CHROMIUM", "/usr/bin/chromium"))
SHOTS = Path(__file__).resolve().parents[2] / ".artifacts" / "inspector"
KEY = "inspector-test-key"
QUESTION = "What is the current price of the Acme Cloud Pro plan?"
STALE_DAYS = 1000
# The page's age as the service states it: STALE_DAYS, or one more when the run crosses midnight
# after the scenario was dated (TODAY is fixed at import).
STALE_REASON = re.compile(rf"stale:{STALE_DAYS}d>|stale:{STALE_DAYS + 1}d>")


@dataclass
class Scenario:
    fresh: str  # the page the answer cites
    stale: str  # dropped as stale at selection
    robots: str  # skipped: robots.txt disallows it


def publish_scenario(web, searxng) -> Scenario:
    fresh = web.site("new-news.test").add_article(
        "/acme",
        "Acme Cloud Pro price change",
        [
            "Acme Cloud now charges $30 per month for its Pro plan after a price change announced to customers this week.",
            "The new Pro plan adds unlimited projects and priority support, according to the announcement from Acme Cloud.",
        ],
        published=TODAY - timedelta(days=3),
    )
    stale = web.site("old-news.test").add_article(
        "/acme",
        "Acme Cloud Pro pricing",
        [
            "Acme Cloud charges $25 per month for its Pro plan, the company said when it announced the plan to customers.",
            "The Pro plan includes ten projects, email support and a shared workspace for small teams in one region.",
        ],
        published=TODAY - timedelta(days=STALE_DAYS),
    )
    walled = web.site("walled.test")
    robots = walled.add_article(
        "/acme",
        "Acme Cloud Pro price (walled)",
        ["Acme Cloud Pro costs $30 per month, says this site that asks robots to stay away from every page."],
        published=TODAY - timedelta(days=1),
    )
    walled.set_robots("User-agent: *\nDisallow: /\n")
    searxng.set_default(
        [
            searx_result(fresh, "Acme Pro price change", "Acme Cloud Pro plan price"),
            searx_result(stale, "Acme Pro pricing", "Acme Cloud Pro plan price"),
            searx_result(robots, "Acme Pro price (walled)", "Acme Cloud Pro plan price"),
        ]
    )
    return Scenario(fresh, stale, robots)


def shot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
