"""deploy/alerts.yml and deploy/prometheus.yml: structure (always) and promtool (when installed):
syntax, and unit tests that feed series and say which alerts fire (tests/deploy/alerts_test.yml)."""

from __future__ import annotations

import re

import yaml

from tests.deploy.promql import ALERT_TESTS, ALERTS, PROMETHEUS_CONFIG, alert_rules, selectors

EXPECTED_ALERTS = {
    "GroundedServiceDown",
    "GroundedHigh5xxRate",
    "GroundedAnswerLatencyP95High",
    "GroundedAbstentionRateJump",
    "GroundedCostBurnHigh",
    "GroundedRedisDown",
    "GroundedProviderErrorRate",
}
_DURATION = re.compile(r"^(\d+(ms|s|m|h|d|w|y))+$")
_RECORD_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def test_rules_file_structure():
    doc = yaml.safe_load(ALERTS.read_text())
    assert set(doc) == {"groups"}
    names = [g["name"] for g in doc["groups"]]
    assert len(names) == len(set(names)), "group names must be unique"
    for group in doc["groups"]:
        assert set(group) <= {"name", "interval", "rules", "limit"}
        for rule in group["rules"]:
            assert ("alert" in rule) != ("record" in rule), rule
            assert isinstance(rule.get("expr"), str) and rule["expr"].strip(), rule
            assert rule["expr"].count("(") == rule["expr"].count(")"), rule["expr"]
            if "record" in rule:
                assert _RECORD_NAME.match(rule["record"]) and ":" in rule["record"], rule["record"]
                assert set(rule) <= {"record", "expr", "labels"}
                continue
            assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule["alert"]
            assert _DURATION.match(rule["for"]), rule["alert"]
            assert rule["labels"]["severity"] in {"critical", "warning"}, rule["alert"]
            assert rule["annotations"]["summary"] and rule["annotations"]["description"], rule["alert"]
    assert EXPECTED_ALERTS <= {r["alert"] for r in alert_rules() if "alert" in r}


def test_recording_rules_are_defined_before_alerts_use_them():
    recorded: set[str] = set()
    for rule in alert_rules():
        for sel in selectors(rule["expr"]):
            if ":" in sel.metric:
                assert sel.metric in recorded, f"{rule.get('alert') or rule.get('record')} uses unknown {sel.metric}"
        if "record" in rule:
            recorded.add(rule["record"])


def test_prometheus_config_loads_the_rules():
    config = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
    assert "alerts.yml" in config["rule_files"]
    assert (PROMETHEUS_CONFIG.parent / "alerts.yml").is_file()
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    # GroundedServiceDown selects up{job="grounded-answers"}.
    assert jobs["grounded-answers"]["metrics_path"] == "/metrics"


def test_promtool_check_rules(promtool):
    result = promtool("check", "rules", str(ALERTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(alert_rules())} rules found" in result.stdout


def test_promtool_check_config(promtool):
    result = promtool("check", "config", str(PROMETHEUS_CONFIG))
    assert result.returncode == 0, result.stdout + result.stderr


def test_alerts_fire_when_and_only_when_expected(promtool):
    result = promtool("test", "rules", str(ALERT_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout
