"""How much of each docs-corpus page's own text the service's extractor keeps (label-free).

    python bench/corpus_coverage.py [--worst 10]

The reference is Sphinx's main body (`div[role=main]`): its paragraphs of more than 40 characters,
except those inside list items (the FAQ pages open with a table of contents of question links, which
the extractor drops on purpose). A paragraph counts as kept when its first 60 characters appear in the
extracted text (whitespace collapsed). Reports the share over all pages and the worst pages.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from app.extract.html import extract_html  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "sample"
BASE = "https://docs.python.org/3.11/"


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _in_list_item(node) -> bool:
    node = node.parent
    while node is not None:
        if node.tag == "li":
            return True
        node = node.parent
    return False


def coverage(path: Path) -> tuple[int, int]:
    html = path.read_text(encoding="utf-8", errors="replace")
    main = LexborHTMLParser(html).css_first('div[role="main"]')
    if main is None:
        return 0, 0
    paras = [_flat(n.text()) for n in main.css("p") if not _in_list_item(n)]
    paras = [p for p in paras if len(p) > 40]
    text = _flat(" ".join(b.text for b in extract_html(html, url=BASE + str(path.relative_to(CORPUS))).blocks))
    return sum(p[:60] in text for p in paras), len(paras)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worst", type=int, default=10)
    args = ap.parse_args()
    rows = []
    for path in sorted(CORPUS.rglob("*.html")):
        kept, total = coverage(path)
        if total:
            rows.append((kept / total, kept, total, str(path.relative_to(CORPUS))))
    kept, total = sum(r[1] for r in rows), sum(r[2] for r in rows)
    if not total:
        sys.exit(f"no Sphinx main body found under {CORPUS}")
    print(f"{len(rows)} pages: {kept} of {total} main-body paragraphs kept ({kept / total:.3f})")
    for share, k, t, name in sorted(rows)[: args.worst]:
        print(f"  {share:.2f}  {k:4d} / {t:4d}  {name}")


if __name__ == "__main__":
    main()
