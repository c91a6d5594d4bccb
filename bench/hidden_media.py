"""What evaluating @media changes in the hidden-text filter, on the aeb benchmark pages.

    .venv/bin/python bench/hidden_media.py

For every page's inline stylesheet: the selectors the filter hides with @media rules evaluated at
the reference screens (app/extract/media.py), against the same sheet with every at-rule block
dropped, which is what the filter did before (rules inside @media were ignored). Prints how many
sheets lose or gain hiding selectors, and the first few differences.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from app.extract.hidden import _AT_BLOCK_RE, _COMMENT_RE, _parse_hiding_rules, page_stylesheet  # noqa: E402
from bench.extraction import load_pages  # noqa: E402


def main() -> None:
    pages = load_pages(None)
    sheets = [css for _, _, html, _ in pages if (css := page_stylesheet(LexborHTMLParser(html).root))]
    lost = gained = differing = 0
    examples = []
    for css in sheets:
        now = {s for s, _ in _parse_hiding_rules(css)}
        without_media = {s for s, _ in _parse_hiding_rules(_AT_BLOCK_RE.sub("", _COMMENT_RE.sub("", css)))}
        lost += bool(without_media - now)
        gained += bool(now - without_media)
        differing += now != without_media
        if now - without_media or (now != without_media and len(examples) < 5):
            examples.append((sorted(without_media - now)[:4], sorted(now - without_media)[:4]))
    print(f"{len(pages)} pages, {len(sheets)} inline stylesheets, {sum('@media' in s for s in sheets)} with @media")
    print(f"sheets that differ: {differing}; losing hiding selectors: {lost}; gaining: {gained}")
    for minus, plus in examples:
        print(f"  - {minus}  + {plus}")


if __name__ == "__main__":
    main()
