"""Small statistics and formatting helpers shared by the figure modules."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping

from bench.common import percentile


def pcts(values: Iterable[float], qs: tuple[float, ...] = (0.5, 0.95, 0.99)) -> dict[str, float]:
    data = list(values)
    return {f"p{round(q * 100)}": percentile(data, q) for q in qs}


def spread(values: Iterable[float]) -> dict[str, float]:
    """min / median / max over repeated runs."""
    data = [v for v in values if v is not None]
    if not data:
        return {"min": float("nan"), "median": float("nan"), "max": float("nan"), "n": 0}
    return {"min": min(data), "median": statistics.median(data), "max": max(data), "n": len(data)}


def fmt_spread(s: dict, digits: int = 2, unit: str = "") -> str:
    """'median (min–max)', the way every repeated figure is shown."""
    if not s or s.get("n", 0) == 0:
        return "n/a"
    if s["n"] == 1:
        return f"{s['median']:.{digits}f}{unit}"
    return f"{s['median']:.{digits}f}{unit} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


def verdict(met: bool | None) -> str:
    return "n/a" if met is None else ("**met**" if met else "**missed**")


def target_lines(
    targets: dict[str, dict], what: str, digits: int = 2, unmet_note: str = "", unit: str = ""
) -> list[str]:
    """The "Targets:" tail of a figure: one line per target, `- name: **met** (what value)`.
    `unmet_note` is added where a target could not be judged (met is None)."""
    lines = ["Targets:", ""]
    for name, t in targets.items():
        value = "not measured" if t["value"] is None else f"{t['value']:.{digits}f}"
        note = unmet_note if t["met"] is None else ""
        lines.append(f"- {name}: {verdict(t['met'])} ({what} {value}{unit}){note}")
    return lines


def alternate(modes: Mapping[str, str], runs: int, one_run: Callable[[int, str], dict]) -> dict[str, list[dict]]:
    """one_run(k, value) for every mode, `runs` times, alternating so that the machine's noise falls on
    all of them; k counts the runs (0, 1, …) so each can take workload items of its own."""
    results: dict[str, list[dict]] = {mode: [] for mode in modes}
    k = 0
    for _ in range(runs):
        for mode, value in modes.items():
            results[mode].append(one_run(k, value))
            k += 1
    return results


def spread_row(label: str, runs: list[dict], columns: Iterable[tuple[str, int]]) -> str:
    """A markdown row: the label, 'median (min–max)' of each (key, digits) column over the runs, then
    the runs' errors summed."""
    cells = [fmt_spread(spread(r[key] for r in runs), digits) for key, digits in columns]
    return "| " + " | ".join([label, *cells, str(sum(r["errors"] for r in runs))]) + " |"
