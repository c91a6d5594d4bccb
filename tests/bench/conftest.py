"""The benchmark smoke tests read real pages from ../shared/bench-data (beside the clone, never copied
into the repository). Without it they fail on CI and are skipped, with the reason, elsewhere."""

from __future__ import annotations

import os

import pytest

from bench.common import BENCH_DATA


@pytest.fixture
def bench_data():
    if not (BENCH_DATA / "aeb" / "ground-truth.json").is_file():
        message = f"benchmark data not found at {BENCH_DATA} (../shared/bench-data beside the repository)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return BENCH_DATA
