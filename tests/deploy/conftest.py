"""Deploy tests: promtool (Debian's `prometheus` package) runs when it is on PATH; the structural
checks always run."""

from __future__ import annotations

import shutil
import subprocess

import pytest


@pytest.fixture(scope="session")
def promtool():
    """promtool(*args) -> CompletedProcess; skips the test when promtool is not installed."""
    path = shutil.which("promtool")
    if path is None:
        pytest.skip("promtool not on PATH (apt-get install prometheus); structural checks still ran")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([path, *args], capture_output=True, text=True, timeout=60)

    return run
