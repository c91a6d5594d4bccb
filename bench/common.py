"""Shared helpers for the extraction and date benchmarks: data loading, timing, tables.

The data lives read-only in ../shared/bench-data (never copied into the repository).
"""

from __future__ import annotations

import gzip
import json
import os
import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
BENCH_DATA = REPO_ROOT.parent / "shared" / "bench-data"


def pin_one_core() -> None:
    """Run on one core so timings compare with the figures in bench-data/README.md."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})


def read_gz(path: Path) -> bytes:
    with gzip.open(path, "rb") as fh:
        return fh.read()


def decode_lenient(raw: bytes) -> str:
    """Bytes -> str the way the benchmarks feed every extractor: utf-8 with replacement."""
    return raw.decode("utf-8", errors="replace")


def timed_run(fn: Callable[[Any], Any], inputs: list[Any], repeats: int = 1) -> tuple[list[Any], list[float]]:
    """Warm-up pass, then ``repeats`` timed passes; returns the first timed pass's outputs and,
    per item, the fastest of its timed runs in ms (the minimum filters out interference from
    other processes on a shared machine; every extractor is measured the same way)."""
    for item in inputs:
        _safe(fn, item)
    outputs: list[Any] = []
    times: list[float] = []
    for rep in range(max(1, repeats)):
        for i, item in enumerate(inputs):
            start = time.perf_counter()
            out = _safe(fn, item)
            elapsed = (time.perf_counter() - start) * 1000.0
            if rep == 0:
                outputs.append(out)
                times.append(elapsed)
            else:
                times[i] = min(times[i], elapsed)
    return outputs, times


def _safe(fn: Callable[[Any], Any], item: Any) -> Any:
    try:
        return fn(item)
    except Exception:  # an extractor crashing on one page scores that page as empty
        return None


def percentile(values: Iterable[float], q: float) -> float:
    data = sorted(values)
    if not data:
        return 0.0
    idx = min(len(data) - 1, max(0, int(round(q * (len(data) - 1)))))
    return data[idx]


def median(values: Iterable[float]) -> float:
    data = list(values)
    return statistics.median(data) if data else 0.0


def markdown_table(headers: list[str], rows: list[list[Any]]) -> str:
    def fmt(v: Any) -> str:
        return f"{v:.3f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_json(path: str | None, payload: dict) -> None:
    if path:
        Path(path).write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
