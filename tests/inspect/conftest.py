"""Fixtures for the answer inspector: a scenario on the simulated web, the service behind an API key,
and a real headless browser (Debian's /usr/bin/chromium driven by playwright; skipped without it).
Screenshots go to .artifacts/inspector/ for review."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.inspect.helpers import CHROMIUM, KEY, Scenario, publish_scenario


@pytest.fixture
def scenario(web, searxng) -> Scenario:
    return publish_scenario(web, searxng)


@pytest.fixture
def inspected(scenario, searxng, web, service_factory):
    """The service on the simulated web, behind an API key, with the scenario published."""
    return service_factory(**searxng.settings_overrides(), **web.settings_overrides(), api_keys=[KEY])


# --- the browser ---------------------------------------------------------------------------------


# Module scope, not session: while it runs, sync playwright holds an event loop in this thread, which
# the asyncio tests collected after these must not find.
@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run these")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install '.[test]')")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page_for(browser):
    """page_for(svc, width=1280) -> a fresh page (own context, own sessionStorage). Every request the
    page makes is recorded; the test fails if one leaves the service's origin."""
    contexts = []
    origins: list[tuple[str, set[str]]] = []

    def make(svc, *, width: int = 1280, height: int = 900):
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(20_000)
        seen: set[str] = set()
        page.on("request", lambda req: seen.add(f"{urlsplit(req.url).scheme}://{urlsplit(req.url).netloc}"))
        origins.append((svc.url, seen))
        return page

    yield make
    for context in contexts:
        context.close()
    for origin, seen in origins:
        assert seen <= {origin}, f"the inspector made requests outside {origin}: {sorted(seen - {origin})}"
