"""The PromQL name reader the exported-metrics test relies on."""

from __future__ import annotations

import pytest

from tests.deploy.promql import Selector, grouping_labels, plain_promql, selectors


def test_finds_metrics_not_functions_keywords_or_labels():
    expr = (
        'histogram_quantile(0.95, sum by (le, route) (rate(a_bucket{route=~"/v1/(x|y)", b!="{c}"}[5m] '
        "offset 1h))) > 2 * on() group_left sum without (d) (b_total) and ignoring(e) rec:ord:x unless f"
    )
    assert selectors(expr) == [
        Selector("a_bucket", frozenset({"route", "b"})),
        Selector("b_total", frozenset()),
        Selector("rec:ord:x", frozenset()),
        Selector("f", frozenset()),
    ]
    assert grouping_labels(expr) == {"le", "route", "d", "e"}


def test_numbers_durations_and_subqueries_are_not_metrics():
    assert selectors("max_over_time(rate(x_total[5m])[1h:1m]) * 3600 > 1e3") == [Selector("x_total", frozenset())]


def test_grafana_variables():
    assert plain_promql("rate(x[$__rate_interval])") == "rate(x[1m])"
    with pytest.raises(ValueError):
        plain_promql('x{job="$job"}')


def test_nameless_selectors_are_refused():
    with pytest.raises(ValueError):
        selectors('{__name__="x"}')
