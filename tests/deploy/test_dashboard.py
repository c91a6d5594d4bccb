"""The Grafana dashboard and its provisioning: structure (always) and every query's PromQL syntax
(promtool, by checking the queries as recording rules)."""

from __future__ import annotations

import yaml

from tests.deploy.promql import GRAFANA, dashboard, dashboard_expressions, dashboard_panels

REQUIRED_PANELS = {
    "Answers by grounding status",
    "Abstentions by reason",
    "Stage latency p50 / p95",
    "Answer latency p50 / p95",
    "Upstream errors by provider",
    "Cache hit ratio by layer",
    "Tokens by model",
    "USD per hour by model and kind",
    "Fetch outcomes by reason",
    "In-flight requests",
    "Redis up",
}


def _datasource():
    doc = yaml.safe_load((GRAFANA / "provisioning" / "datasources" / "prometheus.yml").read_text())
    assert doc["apiVersion"] == 1
    (source,) = doc["datasources"]
    return source


def test_datasource_provisioning_points_at_prometheus():
    source = _datasource()
    assert source["type"] == "prometheus"
    assert source["url"] == "http://prometheus:9090"
    assert source["uid"]


def test_dashboard_provisioning_reads_the_dashboards_folder():
    doc = yaml.safe_load((GRAFANA / "provisioning" / "dashboards" / "grounded-answers.yml").read_text())
    (provider,) = doc["providers"]
    assert provider["type"] == "file"
    assert provider["options"]["path"] == "/var/lib/grafana/dashboards"


def test_dashboard_structure():
    dash = dashboard()
    assert dash["uid"] and dash["title"]
    panels = dashboard_panels()
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    titles = {p["title"] for p in panels}
    assert REQUIRED_PANELS <= titles, REQUIRED_PANELS - titles
    uid = _datasource()["uid"]
    for panel in panels:
        pos = panel["gridPos"]
        assert 0 <= pos["x"] and pos["x"] + pos["w"] <= 24 and pos["h"] > 0, panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": uid}, panel["title"]
        assert panel["targets"], panel["title"]
        ref_ids = [t["refId"] for t in panel["targets"]]
        assert len(ref_ids) == len(set(ref_ids)), panel["title"]
        for target in panel["targets"]:
            assert target["expr"].strip() and target["datasource"]["uid"] == uid, panel["title"]


def test_panels_do_not_overlap():
    cells: dict[tuple[int, int], str] = {}
    for panel in dashboard_panels():
        pos = panel["gridPos"]
        for x in range(pos["x"], pos["x"] + pos["w"]):
            for y in range(pos["y"], pos["y"] + pos["h"]):
                assert (x, y) not in cells, f"{panel['title']!r} overlaps {cells[(x, y)]!r}"
                cells[(x, y)] = panel["title"]


def test_dashboard_queries_are_valid_promql(promtool, tmp_path):
    exprs = dashboard_expressions()
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [{"record": f"dashboard:query_{i}", "expr": expr} for i, (_, expr) in enumerate(exprs)],
            }
        ]
    }
    path = tmp_path / "dashboard_rules.yml"
    path.write_text(yaml.safe_dump(rules))
    result = promtool("check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(exprs)} rules found" in result.stdout
