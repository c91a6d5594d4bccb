"""Where the near-duplicate threshold sits: 5-word-shingle Jaccard of syndicated copies versus
independent pages in the evaluation cases and the test web.

    python bench/near_duplicates.py
"""
from __future__ import annotations

import glob
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.pipeline.select import NEAR_DUP_THRESHOLD  # noqa: E402
from app.text import words  # noqa: E402


def shingles(text: str) -> set[str]:
    w = words(text)
    return {" ".join(w[i:i + 5]) for i in range(max(1, len(w) - 4))}


def jaccard(a: str, b: str) -> float:
    x, y = shingles(a), shingles(b)
    return len(x & y) / len(x | y) if x | y else 0.0


def main() -> None:
    from tests.api.helpers import ACME
    from tests.servers.web_site import near_duplicate_variants

    copies = [" ".join(p) for _, p in near_duplicate_variants("Acme price", ACME, 3)]
    syndicated = [jaccard(copies[0], c) for c in copies[1:]]
    independent = []
    for path in glob.glob("eval/cases/*.jsonl"):
        for line in open(path):
            case = json.loads(line)
            pages = [" ".join(p["paragraphs"]) for p in case["web"]["pages"]]
            pairs = [jaccard(pages[i], pages[j]) for i in range(len(pages)) for j in range(i + 1, len(pages))]
            (syndicated if "syndicated" in case.get("tags", []) else independent).extend(
                j for j in pairs if "syndicated" not in case.get("tags", []) or j > 0.5)
    print(f"threshold {NEAR_DUP_THRESHOLD}")
    print(f"syndicated copies: n={len(syndicated)} min={min(syndicated):.2f} max={max(syndicated):.2f}")
    print(f"independent pages: n={len(independent)} min={min(independent):.2f} max={max(independent):.2f}")


if __name__ == "__main__":
    main()
