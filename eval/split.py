"""Assign each labelled case to dev or test, once, before any tuning.

    python -m eval.split eval/labelled/*.jsonl

A case keeps the split it has; a case without one gets it from a hash of its id (half and half),
so adding cases never moves old ones. Tuning reads dev only; test figures are reported first.
A test case that needed a fix moves to dev by hand ("split": "dev", "moved": "<why>"), after its
test figure was reported.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path


def split_of(case_id: str) -> str:
    return "dev" if int(hashlib.sha1(case_id.encode()).hexdigest(), 16) % 2 == 0 else "test"


def assign(path: Path) -> tuple[int, int]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out, added = [], 0
    for line in lines:
        if not line.strip():
            continue
        raw = json.loads(line)
        if not raw.get("split"):
            raw["split"] = split_of(raw["id"])
            added += 1
        out.append(json.dumps(raw, ensure_ascii=False))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return len(out), added


if __name__ == "__main__":
    for name in sys.argv[1:]:
        total, added = assign(Path(name))
        print(f"{name}: {total} cases, {added} newly assigned")
