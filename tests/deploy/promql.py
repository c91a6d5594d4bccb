"""Just enough PromQL reading for the deploy tests: which metric names (and which label names in
their selectors) an expression refers to, and the expressions in deploy/alerts.yml and the Grafana
dashboard. promtool checks the syntax; this only has to find names in expressions that parse."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
ALERTS = REPO_ROOT / "deploy" / "alerts.yml"
PROMETHEUS_CONFIG = REPO_ROOT / "deploy" / "prometheus.yml"
ALERT_TESTS = Path(__file__).resolve().parent / "alerts_test.yml"
GRAFANA = REPO_ROOT / "deploy" / "grafana"
DASHBOARD = GRAFANA / "dashboards" / "grounded-answers.json"

# Grafana's interval variables, replaced by a duration so the expression is plain PromQL.
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$__interval": "1m", "$__range": "1h"}

KEYWORDS = frozenset(
    {
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "offset",
        "bool",
        "and",
        "or",
        "unless",
        "atan2",
        "inf",
        "nan",
        "start",
        "end",
    }
)
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`')
_TOKEN = re.compile(
    r"""
    (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[smhdwy]*)   # numbers and durations
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<matchers>\{[^{}]*\})
  | (?P<range>\[[^\[\]]*\])
  | (?P<other>.)
""",
    re.VERBOSE | re.DOTALL,
)
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^()]*)\)")
_LABEL_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)")


@dataclass(frozen=True)
class Selector:
    metric: str
    labels: frozenset[str]  # label names used in its {...} matchers


def _blank_strings(expr: str) -> str:
    # Keep the quotes (matchers still look like name="…") but drop their content: braces,
    # identifiers or parentheses inside a regex must not be read as PromQL.
    return _STRING.sub(lambda m: m.group(0)[0] * 2, expr)


def selectors(expr: str) -> list[Selector]:
    """Every metric selector in `expr`: `name{…}` or bare `name`, not functions, keywords or labels."""
    text = _blank_strings(expr)
    # Label lists in by(...)/on(...) are label names, not metrics; dropping the whole clause also
    # leaves `sum by (x) (...)` as `sum (...)`, a call.
    text = _GROUPING.sub(" ", text)
    tokens = [(m.lastgroup, m.group(0)) for m in _TOKEN.finditer(text) if not m.group(0).isspace()]
    found: list[Selector] = []
    for i, (kind, value) in enumerate(tokens):
        if kind == "matchers" and (i == 0 or tokens[i - 1][0] != "ident"):
            raise ValueError(f"selector without a metric name ({{__name__=...}}) not supported: {expr!r}")
        if kind != "ident" or value.lower() in KEYWORDS:
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ("", "")
        if nxt[1] == "(":  # a function or an aggregation
            continue
        labels = frozenset(_LABEL_NAME.findall(nxt[1])) if nxt[0] == "matchers" else frozenset()
        found.append(Selector(value, labels))
    return found


def grouping_labels(expr: str) -> set[str]:
    """Label names in by(...), without(...), on(...), ignoring(...) and group_left/right(...)."""
    text = _blank_strings(expr)
    return {label.strip() for m in _GROUPING.finditer(text) for label in m.group(2).split(",") if label.strip()}


def alert_rules() -> list[dict]:
    doc = yaml.safe_load(ALERTS.read_text())
    return [rule for group in doc["groups"] for rule in group["rules"]]


def recorded_names() -> set[str]:
    return {rule["record"] for rule in alert_rules() if "record" in rule}


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def dashboard_panels() -> list[dict]:
    out = []
    for panel in dashboard()["panels"]:
        out.append(panel)
        out.extend(panel.get("panels", []))  # collapsed rows keep their panels inside
    return out


def plain_promql(expr: str) -> str:
    for var, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(var, value)
    if "$" in expr:
        raise ValueError(f"unsupported Grafana variable in {expr!r}")
    return expr


def dashboard_expressions() -> list[tuple[str, str]]:
    """(panel title, PromQL) for every query in the dashboard."""
    return [(p["title"], plain_promql(t["expr"])) for p in dashboard_panels() for t in p.get("targets", [])]


def rule_expressions() -> list[tuple[str, str]]:
    return [(rule.get("alert") or rule["record"], rule["expr"]) for rule in alert_rules()]
