"""The inspector without a browser: the page and its two files are self-contained (nothing loaded
from another host), it is off when configured so, it loads without a key while the API it calls
keeps its auth, and the stored trace says what happened to every search result."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import httpx

from tests.api.helpers import chat
from tests.inspect.helpers import KEY, QUESTION, STALE_REASON

ASSETS = ("/inspect", "/inspect/inspector.js", "/inspect/inspector.css")
URL = re.compile(r"""https?://[^\s"'<>)`]+""", re.I)


def test_page_is_self_contained_and_behind_the_apis_auth(service_factory):
    svc = service_factory(api_keys=[KEY])
    page = httpx.get(svc.url + "/inspect")  # no key: the page itself loads, then asks for one
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert "connect-src 'self'" in page.headers["content-security-policy"]
    refs = re.findall(r"""(?:src|href)="([^"]+)\"""", page.text)
    assert set(refs) >= {"/inspect/inspector.js", "/inspect/inspector.css"}
    assert all(ref.startswith(("/inspect/", "#", "data:")) for ref in refs), refs  # same origin, no //host
    for path in ASSETS:
        r = httpx.get(svc.url + path)
        assert r.status_code == 200, path
        text = r.text
        # No URL to any host in the HTML, the script or the stylesheet (no CDN, no web font).
        assert not URL.findall(text), (path, URL.findall(text))
        assert "@import" not in text and "@font-face" not in text
    css = httpx.get(svc.url + "/inspect/inspector.css").text
    assert all(u.startswith(("data:", "#")) for u in re.findall(r"url\(\s*['\"]?([^'\")]+)", css))
    assert httpx.get(svc.url + "/inspect/settings.py").status_code == 404  # only the three files
    # The API the page calls is not opened by it.
    assert httpx.get(svc.url + "/v1/models").status_code == 401
    assert httpx.get(svc.url + "/v1/models", headers={"Authorization": f"Bearer {KEY}"}).status_code == 200


def test_off_when_disabled(service_factory):
    svc = service_factory(inspector_enabled=False)
    for path in ASSETS:
        r = httpx.get(svc.url + path)
        assert r.status_code == 404, path
        assert r.json()["error"]["code"] == "not_found"
    assert "/inspect" not in httpx.get(svc.url + "/openapi.json").text


def test_trace_records_the_fate_of_every_search_result(scenario, searxng, web, service_factory):
    svc = service_factory(**searxng.settings_overrides(), **web.settings_overrides())

    def trace(**grounding):
        r = httpx.post(svc.url + "/v1/grounded-answers", json=chat(QUESTION, cache="bypass", **grounding), timeout=30)
        return httpx.get(f"{svc.url}/v1/traces/{r.headers['x-request-id']}").json()

    def fates(t):
        first = {}
        for row in t["results"]:
            first.setdefault(row["url"], row)
        return {url: (row["fate"], row["reason"]) for url, row in first.items()}

    t = trace(min_sources=1)
    seen = fates(t)
    assert seen[scenario.fresh][0] == "cited"
    assert seen[scenario.stale][0] == "stale" and STALE_REASON.match(seen[scenario.stale][1])
    assert seen[scenario.robots][0] == "robots"
    # Every hit of every query has a row; a URL another query already returned is a repeat.
    assert len(t["results"]) == sum(len(s["hits"]) for s in t["search"])
    repeats = [r for r in t["results"] if r["fate"] == "duplicate"]
    assert all(r["reason"].startswith("duplicate_url_of:") and r["stage"] == "search" for r in repeats)
    assert t["citations"] == [scenario.fresh] and t["options"]["min_sources"] == 1
    assert t["sources"][0]["url"] == scenario.fresh and "$30" in t["content"]

    stale_host = urlsplit(scenario.stale).hostname
    t = trace(min_sources=1, exclude_domains=[stale_host], max_fetches=1)
    seen = fates(t)
    assert seen[scenario.stale] == ("excluded_domain", "exclude_domains")
    assert seen[scenario.robots] == ("over_budget", "max_fetches:1")
    assert seen[scenario.fresh][0] == "cited"
