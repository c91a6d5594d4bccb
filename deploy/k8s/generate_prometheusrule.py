"""Write components/monitoring/prometheusrule.yaml from deploy/alerts.yml (the one source of the rules).

    python deploy/k8s/generate_prometheusrule.py          # rewrite the file
    python deploy/k8s/generate_prometheusrule.py --check  # exit 1 if it is out of date

tests/deploy/test_k8s.py runs the check, so a change to deploy/alerts.yml without regenerating fails CI.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ALERTS = HERE.parent / "alerts.yml"
TARGET = HERE / "components" / "monitoring" / "prometheusrule.yaml"
HEADER = """\
# GENERATED from deploy/alerts.yml by deploy/k8s/generate_prometheusrule.py: do not edit by hand.
# The same recording rules and alerts as the compose stack's Prometheus (docs/OPERATIONS.md).
"""


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def render() -> str:
    rules = yaml.safe_load(ALERTS.read_text())
    doc = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "grounded-answers", "labels": {"app.kubernetes.io/name": "grounded-answers"}},
        "spec": {"groups": rules["groups"]},
    }
    return HEADER + yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=120, allow_unicode=True)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text() != text:
            print(f"{TARGET} is out of date: run python {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
