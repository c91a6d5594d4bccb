"""Every metric the alert rules and the dashboard query is really exported by the running service's
/metrics, with the label names the queries use; and HTTP metric labels stay bounded."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.parser import text_string_to_metric_families

from app import metrics
from app.metrics_export import install_http_metrics, render_metrics
from tests.deploy.promql import dashboard_expressions, grouping_labels, recorded_names, rule_expressions, selectors

# Series Prometheus makes itself for each target, and the labels it attaches to every series.
SCRAPE_SERIES = {"up", "scrape_duration_seconds", "scrape_samples_scraped", "scrape_series_added"}
TARGET_LABELS = {"job", "instance"}
QUESTION = {"model": "x", "messages": [{"role": "user", "content": "What is asyncio.TaskGroup?"}]}


def _app_with_http_metrics(settings):
    from app.main import create_app

    return install_http_metrics(create_app(settings))  # idempotent: right before and after main.py installs it


@pytest.fixture(scope="module")
def exposition():
    """(text of GET /metrics, samples) from the real service after a few requests of each kind."""
    from simulators import ServiceServer

    with ServiceServer(app_factory=_app_with_http_metrics) as svc, httpx.Client(base_url=svc.url, timeout=30) as client:
        assert client.post("/v1/chat/completions", json=QUESTION).status_code == 200
        assert client.post("/v1/chat/completions", json={"messages": "not a list"}).status_code == 400
        assert client.get("/v1/models").status_code == 200
        assert client.get("/v1/traces/req_no_such_trace").status_code == 404
        assert client.get("/no/such/path?q=secret").status_code == 404
        resp = client.get("/metrics")
    assert resp.status_code == 200
    return resp.text


def _exported(text: str) -> tuple[dict[str, str], set[str]]:
    """(family name -> type, sample names). prometheus_client's parser names counter families
    without `_total`; samples keep their full names."""
    families, samples = {}, set()
    for fam in text_string_to_metric_families(text):
        families[fam.name] = fam.type
        samples.update(s.name for s in fam.samples)
    return families, samples


def _is_exported(name: str, families: dict[str, str], samples: set[str]) -> bool:
    if name in samples or families.get(name) in {"gauge", "untyped", "unknown"}:
        return True
    for suffix, types in (
        ("_total", {"counter"}),
        ("_bucket", {"histogram"}),
        ("_sum", {"histogram", "summary"}),
        ("_count", {"histogram", "summary"}),
        ("_created", {"counter", "histogram", "summary"}),
    ):
        if name.endswith(suffix) and families.get(name.removesuffix(suffix)) in types:
            return True
    return False


def _declared_labels() -> dict[str, set[str]]:
    """Metric family -> label names, from app/metrics.py's own declarations."""
    out = {}
    for value in vars(metrics).values():
        if isinstance(value, MetricWrapperBase):
            base = value._name  # noqa: SLF001 - the declared name without _total
            out[base] = set(value._labelnames) | ({"le"} if value._type == "histogram" else set())  # noqa: SLF001
    return out


def _family_of(name: str, declared: dict[str, set[str]]) -> str | None:
    for suffix in ("", "_total", "_bucket", "_sum", "_count"):
        if suffix == "" or name.endswith(suffix):
            base = name.removesuffix(suffix) if suffix else name
            if base in declared:
                return base
    return None


QUERIES = [("rule " + title, expr) for title, expr in rule_expressions()] + [
    ("panel " + title, expr) for title, expr in dashboard_expressions()
]


def test_queries_name_some_metrics():
    names = {sel.metric for _, expr in QUERIES for sel in selectors(expr)}
    assert len(names) >= 15, names  # the reader must really find names, or the next test proves nothing


@pytest.mark.parametrize("where,expr", QUERIES, ids=[q[0] for q in QUERIES])
def test_every_queried_metric_is_exported(exposition, where, expr):
    families, samples = _exported(exposition)
    recorded = recorded_names()
    missing = [
        sel.metric
        for sel in selectors(expr)
        if sel.metric not in recorded
        and sel.metric not in SCRAPE_SERIES
        and not _is_exported(sel.metric, families, samples)
    ]
    assert not missing, f"{where}: not in /metrics: {missing}"


@pytest.mark.parametrize("where,expr", QUERIES, ids=[q[0] for q in QUERIES])
def test_every_queried_label_is_declared(where, expr):
    declared = _declared_labels()
    used_metrics = [sel for sel in selectors(expr) if _family_of(sel.metric, declared)]
    available = set(TARGET_LABELS)
    for sel in used_metrics:
        labels = declared[_family_of(sel.metric, declared)] | TARGET_LABELS
        assert sel.labels <= labels, f"{where}: {sel.metric} has no label {sel.labels - labels}"
        available |= labels
    if used_metrics:
        assert grouping_labels(expr) <= available, f"{where}: grouping by unknown {grouping_labels(expr) - available}"


def test_http_metric_labels_are_route_templates(exposition):
    routes = {
        s.labels["route"]
        for fam in text_string_to_metric_families(exposition)
        if fam.name == "grounded_http_requests"
        for s in fam.samples
    }
    assert {"/v1/chat/completions", "/v1/models", "/v1/traces/{trace_id}", "unmatched"} <= routes
    assert not any("req_no_such_trace" in r or "secret" in r or "/no/such" in r for r in routes), routes
    classes = {
        (s.labels["route"], s.labels["status_class"])
        for fam in text_string_to_metric_families(exposition)
        if fam.name == "grounded_http_requests"
        for s in fam.samples
        if s.name.endswith("_total")
    }
    assert {("/v1/chat/completions", "2xx"), ("/v1/chat/completions", "4xx"), ("unmatched", "4xx")} <= classes


def test_single_process_rendering_matches_the_route(exposition):
    body, content_type = render_metrics()
    assert content_type.startswith("text/plain")  # Prometheus text format
    assert set(_exported(body.decode())[0]) == set(_exported(exposition)[0])
