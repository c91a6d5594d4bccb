"""CI regression gate: the `ci` slice of eval/cases in both modes, against fixed thresholds.

The thresholds and the numbers they were set from are in docs/EVALUATION.md; change them there and
here together. Cases the service fails today are kept out of the slice (they stay in the full set).
"""

from __future__ import annotations

import pytest

from eval.cases import load_cases
from eval.runner import DEFAULT_CASES, MODES, failures_text, run_mode

MIN_CITATION_PRECISION = 0.95  # harness-measured, micro over cited claims (today: 1.0 in both modes)
MAX_WRONG_STATUS = 0  # false abstentions + false answers per mode (today: 0 of 34)
MAX_FORBIDDEN_LEAKS = 0  # stale values and injected canaries never reach an answer (today: 0)
MIN_CITATION_VALIDITY = 1.0  # every [n] resolves and every citation was fetched (today: 1.0)


@pytest.fixture(scope="module")
def ci_cases():
    cases = load_cases([DEFAULT_CASES], tags=["ci"])
    assert 15 <= len(cases) <= 40, f"the CI slice should stay small and meaningful, has {len(cases)}"
    return cases


@pytest.mark.parametrize("mode", MODES)
def test_ci_slice_meets_thresholds(ci_cases, mode):
    run = run_mode(ci_cases, mode)
    s = run.summary
    detail = f"\n{mode} summary: {s}\n" + failures_text([run])
    assert s["errors"] == 0, detail
    assert s["citation_precision"] is not None and s["citation_precision"] >= MIN_CITATION_PRECISION, detail
    assert s["false_abstentions"] + s["false_answers"] <= MAX_WRONG_STATUS, detail
    assert s["forbidden_leaks"] <= MAX_FORBIDDEN_LEAKS, detail
    assert s["citation_validity"] is not None and s["citation_validity"] >= MIN_CITATION_VALIDITY, detail
