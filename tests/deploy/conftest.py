"""Deploy tests: promtool (Debian's `prometheus` package) runs when it is on PATH; the structural
checks always run. hadolint and kubectl (kustomize) come from PyPI wheels in the `test` extra."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

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


def registry_tool(name: str, package: str) -> str:
    """Path of a linter/renderer installed from PyPI by the `test` extra (its console script lands
    next to the interpreter: .venv/bin). Skips when it is missing (e.g. a platform without a wheel);
    on CI (CI set) it fails instead, so CI never passes without running the check."""
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        reason = f"{name} not installed (pip install -e '.[test]' brings {package})"
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return path
