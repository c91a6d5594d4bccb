"""Figure 4 — extraction and dates: runs bench/extraction.py and bench/dates.py (their own
one-core, warm-up-then-timed protocol) and keeps their tables and summary numbers."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from bench.common import REPO_ROOT
from bench.config import BenchConfig
from bench.procs import PYTHON

NAME = "quality"
TITLE = "4. Extraction and dates"


def _run_script(script: str, limit: int | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [PYTHON, f"bench/{script}", "--json", str(out)] + (["--limit", str(limit)] if limit else [])
        proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=900, check=True)
        data = json.loads(out.read_text())
    for entry in data.values():  # per-page detail stays out of the committed JSON (size)
        if isinstance(entry, dict):
            entry.pop("per_page", None)
    return {
        "command": " ".join(
            ["python", f"bench/{script}", "--json", "out.json"] + (["--limit", str(limit)] if limit else [])
        ),
        "table": proc.stdout.strip(),
        "results": data,
    }


def run(cfg: BenchConfig) -> dict:
    return {
        "extraction": _run_script("extraction.py", cfg.quality_limit),
        "dates": _run_script("dates.py", cfg.quality_limit),
    }


def render(res: dict) -> str:
    parts = []
    for key in ("extraction", "dates"):
        r = res[key]
        parts += [f"`{r['command']}` (one core pinned, second pass):", "", r["table"], ""]
    return "\n".join(parts).rstrip()
