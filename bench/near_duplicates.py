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

from app.language.text import words  # noqa: E402
from app.pipeline.select import NEAR_DUP_THRESHOLD, shingles  # noqa: E402
from app.pipeline.select import jaccard as set_jaccard  # noqa: E402


def jaccard(a: str, b: str) -> float:
    return set_jaccard(shingles(a), shingles(b))


def timing(rounds: int = 20) -> None:
    """Exact Jaccard (what the service does) against datasketch MinHash on 6 real pages."""
    import gzip
    import time

    from app.extract.html import extract_html

    files = sorted(Path("../shared/bench-data/aeb/html").glob("*.html.gz"))[:6]
    texts = [extract_html(gzip.open(f).read()).text for f in files]

    def exact():
        sets = [shingles(t) for t in texts]
        return [set_jaccard(a, b) for i, a in enumerate(sets) for b in sets[:i]]

    def minhash_batch():
        from datasketch import MinHash

        hashes = []
        for t in texts:
            m = MinHash(num_perm=64, seed=7)
            w = words(t)[:3000]
            m.update_batch([" ".join(w[i : i + 5]).encode() for i in range(max(1, len(w) - 4))])
            hashes.append(m)
        return [a.jaccard(b) for i, a in enumerate(hashes) for b in hashes[:i]]

    for name, fn in (("exact Jaccard", exact), ("datasketch MinHash update_batch", minhash_batch)):
        fn()
        t0 = time.perf_counter()
        for _ in range(rounds):
            fn()
        print(f"{name}: {(time.perf_counter() - t0) / rounds * 1000:.1f} ms per 6 pages")


def main() -> None:
    from simulators.web_pages import ACME
    from simulators.web_site import near_duplicate_variants

    copies = [" ".join(p) for _, p in near_duplicate_variants("Acme price", ACME, 3)]
    syndicated = [jaccard(copies[0], c) for c in copies[1:]]
    independent = []
    for path in glob.glob("eval/cases/*.jsonl"):
        for line in open(path):
            case = json.loads(line)
            pages = [" ".join(p["paragraphs"]) for p in case["web"]["pages"]]
            pairs = [jaccard(pages[i], pages[j]) for i in range(len(pages)) for j in range(i + 1, len(pages))]
            (syndicated if "syndicated" in case.get("tags", []) else independent).extend(
                j for j in pairs if "syndicated" not in case.get("tags", []) or j > 0.5
            )
    print(f"threshold {NEAR_DUP_THRESHOLD}")
    print(f"syndicated copies: n={len(syndicated)} min={min(syndicated):.2f} max={max(syndicated):.2f}")
    print(f"independent pages: n={len(independent)} min={min(independent):.2f} max={max(independent):.2f}")


if __name__ == "__main__":
    if "--timing" in sys.argv:
        timing()
    else:
        main()
