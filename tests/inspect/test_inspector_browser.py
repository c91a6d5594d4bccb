"""The answer inspector end to end, in a real headless browser, against the service on the simulated
web: ask and follow a marker to its quote and source, open an abstained request by id, read a
dropped page's fate in the trace, see a flagged sentence struck through, and use it in a narrow
window. Each test leaves a screenshot in .artifacts/inspector/ for review."""

from __future__ import annotations

import httpx

from tests.api.helpers import chat, planner_or
from tests.inspect.helpers import KEY, QUESTION, STALE_REASON, shot


def _open(page, svc):
    """Load /inspect (no key needed for the page), then give it the key it asks for."""
    page.goto(svc.url + "/inspect")
    page.wait_for_selector("#key-panel:not([hidden])")
    page.fill("#key-input", KEY)
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("#key-panel", state="hidden")
    assert page.evaluate("sessionStorage.getItem('ga-inspector-key')") == KEY
    assert page.evaluate("localStorage.length") == 0  # the key never leaves the tab's session


def _ask(page, question, *, min_sources="1", verification="drop"):
    page.fill("#q", question)
    page.fill("#opt-min-sources", min_sources)
    page.select_option("#opt-verification", verification)
    page.click("#ask-button")
    page.wait_for_selector("#view-read:not([hidden]) #answer-status")
    return page.inner_text("#read-rid")


def _trace(svc, rid):
    r = httpx.get(f"{svc.url}/v1/traces/{rid}", headers={"Authorization": f"Bearer {KEY}"}, timeout=10)
    r.raise_for_status()
    return r.json()


def test_ask_then_follow_a_marker_to_its_quote_and_source(inspected, scenario, page_for):
    page = page_for(inspected)
    _open(page, inspected)
    rid = _ask(page, QUESTION)
    assert page.inner_text("#answer-status") == "grounded"
    trace = _trace(inspected, rid)
    assert trace["citations"] == [scenario.fresh]
    source = next(s for s in trace["sources"] if s["id"] == 1)
    claim = next(c for c in trace["claims"] if 1 in c["source_ids"])
    assert "$30" in claim["quote"]

    marker = page.locator("#answer button.marker[data-n='1']").first
    # Hover: a tooltip with the quote, the source's title, domain and date (and its source).
    marker.hover()
    tip = page.locator("#cite-tip")
    tip.wait_for(state="visible")
    assert claim["quote"] in tip.inner_text()
    assert tip.locator(".source-title").inner_text() == source["title"]
    assert source["title"].startswith("Acme Cloud Pro price change")
    assert tip.locator(".source-domain").inner_text() == source["domain"]
    assert source["published_at"] in tip.locator(".source-date").inner_text()
    assert source["date_source"] in tip.locator(".source-date").inner_text()
    shot(page, "read-hover-marker")

    # Keyboard: focus the marker and press Enter: the passage opens with the quote highlighted.
    page.mouse.move(0, 0)
    marker.focus()
    assert tip.is_visible()  # focus shows the same tooltip as hover
    page.keyboard.press("Enter")
    detail = page.locator("#citation-detail")
    detail.locator(".passage mark").wait_for()
    assert marker.get_attribute("aria-expanded") == "true"
    assert detail.locator(".quote").inner_text() == claim["quote"]
    assert detail.locator(".source-title").inner_text() == source["title"]
    assert "$30 per month" in detail.locator(".passage mark").inner_text()
    assert detail.locator(f"a[href='{scenario.fresh}']").count() == 1
    page.keyboard.press("Escape")
    shot(page, "read-citation-passage")


def test_open_an_abstained_request_by_id(inspected, page_for):
    # Asked through the API (as any client would), opened later in the inspector by its request id.
    r = httpx.post(
        inspected.url + "/v1/grounded-answers",
        json=chat(QUESTION, min_sources=2),
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=30,
    )
    body = r.json()
    abstention = body["grounding"]["abstention"]
    assert body["grounding"]["status"] == "abstained" and abstention["reason"] == "insufficient_sources"
    rid = r.headers["x-request-id"]

    page = page_for(inspected)
    _open(page, inspected)
    page.fill("#rid", rid)
    page.click("#open-form button[type=submit]")
    page.wait_for_selector("#abstention")
    assert page.inner_text("#answer-status") == "abstained"
    assert page.inner_text("#abstention-reason") == "insufficient_sources"
    assert page.inner_text("#abstention-message") == abstention["message"]
    shown_checks = page.locator("#abstention .failed-check").all_inner_texts()
    assert shown_checks == abstention["failed_checks"] and shown_checks
    for query in abstention["queries_run"]:
        assert query in page.inner_text("#abstention")
    assert page.url.endswith(f"#read/{rid}")  # the address opens the same request again
    shot(page, "read-abstained")

    # A shared address opens the request in a fresh tab once the key is given.
    other = page_for(inspected)
    other.goto(f"{inspected.url}/inspect#trace/{rid}")
    other.wait_for_selector("#key-panel:not([hidden])")
    other.fill("#key-input", KEY)
    other.click("#key-form button[type=submit]")
    other.wait_for_selector("#view-trace:not([hidden]) #trace-rid")
    assert other.inner_text("#trace-rid") == rid
    assert "insufficient_sources" in other.inner_text("#trace-body")


def test_trace_shows_why_each_page_was_dropped(inspected, scenario, page_for):
    page = page_for(inspected)
    _open(page, inspected)
    _ask(page, QUESTION)
    page.click("#tab-trace")
    page.wait_for_selector("#view-trace:not([hidden]) #results-table")

    def row(url):
        return page.locator(f"#results-table tbody tr[data-url='{url}']").first

    stale = row(scenario.stale)
    assert stale.locator(".fate").inner_text() == "dropped: stale"
    assert STALE_REASON.match(stale.locator(".reason code").inner_text())
    walled = row(scenario.robots)
    assert walled.locator(".fate").inner_text() == "skipped: robots.txt"
    assert walled.locator(".reason code").inner_text().startswith("robots")
    cited = row(scenario.fresh)
    assert cited.locator(".fate").inner_text() == "cited in the answer"
    assert cited.locator("td").nth(6).inner_text() != "—"  # the page's evidence score
    # The waterfall, the cost and the cache are there too.
    for stage in ("search", "fetch", "select", "compose", "verify"):
        assert page.locator(f".waterfall tr[data-stage='{stage}']").count() == 1
    assert "search" in page.inner_text("#trace-body")
    # Filtering by fate keeps only those rows.
    page.select_option("#fate-filter", "stale")
    assert page.locator("#results-table tbody tr:visible").count() == 1
    page.select_option("#fate-filter", "")
    shot(page, "trace")


def test_flagged_sentence_is_struck_through_with_its_reason(scenario, searxng, web, llm, service_factory, page_for):
    def composer(body):
        prompt = body["messages"][-1]["content"]
        sid = next(part.split('"')[1] for part in prompt.split("<evidence-")[1:] if "$30" in part)
        return (
            f"Acme Cloud now charges $30 per month for its Pro plan [{sid}]. "
            f"Every Pro customer also receives a free hot-air balloon ride each summer [{sid}]."
        )

    llm.default = planner_or(composer)
    svc = service_factory(
        **searxng.settings_overrides(), **web.settings_overrides(), **llm.settings_overrides(), api_keys=[KEY]
    )
    page = page_for(svc)
    _open(page, svc)
    _ask(page, QUESTION, verification="flag")
    flagged = page.locator("#answer .claim.flagged")
    assert flagged.count() == 1
    assert "hot-air balloon" in flagged.locator("del").first.inner_text()
    assert "unsupported" in flagged.locator(".why").inner_text()
    assert page.locator("#answer .claim:not(.flagged) button.marker").count() == 1
    shot(page, "read-flagged")


def test_narrow_window(inspected, page_for):
    page = page_for(inspected, width=380, height=800)
    _open(page, inspected)
    shot(page, "narrow-ask")
    _ask(page, QUESTION)
    page.locator("#answer button.marker").first.click()
    page.locator("#citation-detail .passage").wait_for()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    shot(page, "narrow-read")
    page.click("#tab-trace")
    page.wait_for_selector("#results-table")
    # Wide tables scroll inside their own region, not the page.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    shot(page, "narrow-trace")


def test_keyboard_and_labels(inspected, page_for):
    page = page_for(inspected)
    _open(page, inspected)
    # Every control has an accessible name; every view has a heading that takes focus.
    unlabelled = page.evaluate(
        """() => [...document.querySelectorAll('input, select, textarea')]
                 .filter((el) => !el.labels || el.labels.length === 0).map((el) => el.id)"""
    )
    assert unlabelled == []
    nameless = page.evaluate(
        """() => [...document.querySelectorAll('button')]
                 .filter((b) => !(b.getAttribute('aria-label') || b.textContent.trim())).length"""
    )
    assert nameless == 0
    # Ask with the keyboard alone: type, Ctrl+Enter submits.
    page.focus("#q")
    page.keyboard.type(QUESTION)
    page.focus("#opt-min-sources")
    page.keyboard.type("1")
    page.focus("#q")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#view-read:not([hidden]) #answer button.marker")
    # Tab reaches the first marker from the answer heading; Enter pins it, Escape closes the tooltip.
    page.focus("#read-title")
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('marker')"):
            break
    assert page.evaluate("document.activeElement.classList.contains('marker')")
    assert page.locator("#cite-tip").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator("#cite-tip").is_visible()
    page.keyboard.press("Enter")
    page.locator("#citation-detail .passage mark").wait_for()
    ids = page.evaluate("[...document.querySelectorAll('[id]')].map((el) => el.id)")
    assert len(ids) == len(set(ids))  # labels and aria references point at one element each
    # The tabs are links with aria-current on the shown view.
    page.click("#tab-trace")
    assert page.get_attribute("#tab-trace", "aria-current") == "page"
    assert page.get_attribute("#tab-read", "aria-current") is None
    shot(page, "keyboard-trace")
