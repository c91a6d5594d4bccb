"""Second opinion for pages where our own selection found (almost) nothing.

When the scoring walk keeps next to no text on a page that has plenty of visible text, the page
is usually built in a way the scorer misreads (the article sits under a negatively named wrapper,
or in markup the block walk does not expect). readability-lxml is slower (~10x) but selects
differently; it runs on those pages only, so the median time is ours and only the slow tail grows.
Its summary HTML goes through our own block walk, so the block kinds and the cleaning stay ours.
"""
from __future__ import annotations

import logging

from selectolax.lexbor import LexborHTMLParser

from app.extract.html_blocks import RawBlock, build_tree

log = logging.getLogger(__name__)

LINK_HEAVY = 0.5


def readability_blocks(html: str | bytes) -> list[RawBlock]:
    """Blocks of readability-lxml's summary, link lists dropped; [] if it fails or finds nothing."""
    try:
        from readability import Document

        summary = Document(html).summary(html_partial=True)
    except Exception as exc:  # a page readability cannot parse: keep our (empty) result
        log.debug("readability fallback failed: %s", exc)
        return []
    body = LexborHTMLParser(f"<html><body>{summary}</body></html>").body
    if body is None:
        return []
    tree = build_tree(body)
    return [b for b in tree.blocks if b.text and b.link_chars <= LINK_HEAVY * len(b.text)]
