"""A second opinion from trafilatura on pages where our own extraction is unsure (issue 13).

Our extractor (app/extract/html.py) is fast and was tuned on half of the benchmark; on unseen pages
its typical miss is a wrong element: a comment section, a teaser list or another story chosen
instead of the article. trafilatura is slower (5-8x) but steadier on unseen pages. So:

1. **Confidence** comes from our own extraction, almost for free: it is *low* when the page is an
   empty shell to us, when we kept under a tenth of the page's visible text (``LOW_DENSITY``), or
   when a region outside our selection weighs at least ``RIVAL_SHARE`` of the one we chose. A
   confident page never reaches trafilatura.
2. On a low-confidence page trafilatura runs on the *same pruned DOM* our walk left behind: scripts,
   navigation and the hidden elements (app/extract/hidden.py) are already gone, so its text cannot
   bring hidden text back; invisible characters are stripped from its blocks as from ours.
3. **Agreement**: when at least ``AGREE_SHARE`` of our words are also in trafilatura's text the two
   chose the same part of the page and ours is kept (it is the more precise of the two there). Below
   that they chose different parts, and trafilatura's text is taken. A shell of ours is replaced by
   trafilatura's text when that is not a shell itself.

Set on the even half of the benchmark only (bench/extraction.py). There every page agrees (the
lowest share is 0.73, a page where trafilatura missed a third of the article), so any
``AGREE_SHARE`` up to 0.73 leaves the even half as it is; 0.6 keeps a margin below that.
``RIVAL_SHARE`` was set on the even half by cost. Held out (odd half, run once): shingle F1 0.941
-> 0.964. ``LOW_DENSITY`` was 0.5 until 2026-12-07 (36 % of all pages asked), when it was set again
on the 200 pages of the dates benchmark, never used to tune extraction, without gold text: where the
0.5 gate asks trafilatura there, its text replaces ours on 14 of 133 pages; the gate that asks least
while still making 13 of those 14 replacements (a grid over density 0.05-0.50 and rival share
0.25-1.0) is density 0.11 with rival share 0.25. Asking less loses no F1 on either half of the
extraction benchmark (on every asked page there that the lower density no longer asks, the two
agreed), and a page's mean extraction CPU falls from 5.5 to 3.7 ms (`python -m bench.fallback_gate`).
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from app.domain.types import TextBlock
from app.extract.html import Extraction, extract_html, looks_like_shell, parse_html
from app.extract.text_clean import collapse_spaces, strip_invisible

LOW_DENSITY = 0.11  # kept chars / visible chars under this: almost all of the page is something else
RIVAL_SHARE = 0.25  # a region outside the selection weighing this share of the winner: a close call
AGREE_SHARE = 0.6  # share of our words found in trafilatura's text at which the two agree

_WORD_RE = re.compile(r"\w+")
_HEADING_LEVEL_RE = re.compile(r"h([1-6])")


def low_confidence(ext: Extraction) -> bool:
    """Whether our extraction is unsure enough to ask trafilatura (see the module docstring)."""
    return ext.is_shell or ext.density < LOW_DENSITY or ext.rival_share >= RIVAL_SHARE


def word_share(ours: str, other: str) -> float:
    """Share of the words of ``ours`` (as a multiset, lower-cased) that ``other`` also has."""
    mine = Counter(_WORD_RE.findall(ours.lower()))
    total = sum(mine.values())
    if not total:
        return 0.0
    theirs = Counter(_WORD_RE.findall(other.lower()))
    return sum((mine & theirs).values()) / total


def choose(ours: Extraction, other: list[TextBlock]) -> Extraction:
    """Our extraction, or one made of trafilatura's blocks when they disagree (or ours is a shell)."""
    other_chars = sum(len(b.text) for b in other)
    if not other_chars or looks_like_shell(other, other_chars):
        return ours
    if not ours.is_shell and word_share(ours.text, "\n".join(b.text for b in other)) >= AGREE_SHARE:
        return ours
    density = min(1.0, other_chars / ours.visible_chars) if ours.visible_chars else 0.0
    return Extraction(
        title=ours.title,
        blocks=other,
        density=density,
        is_shell=False,
        visible_chars=ours.visible_chars,
        rival_share=ours.rival_share,
    )


def extract_with_fallback(
    html: str | bytes, url: str | None = None, *, parser: LexborHTMLParser | None = None, enabled: bool = True
) -> Extraction:
    """``extract_html``, with trafilatura asked on low-confidence pages when ``enabled``."""
    parser = parser if parser is not None else parse_html(html)
    ext = extract_html(html, url=url, parser=parser)
    if not enabled or parser.body is None or not low_confidence(ext):
        return ext
    try:
        other = trafilatura_blocks(parser.html or "", url)
    except Exception:  # a second opinion that fails leaves the first one standing
        return ext
    return choose(ext, other)


def warm_up_fallback() -> bool:
    """Import trafilatura now (Settings.warm_up) rather than in the first low-confidence page's
    request (~0.3 s); False when it is not installed."""
    try:
        import trafilatura  # noqa: F401
    except ImportError:
        return False
    return True


# lxml parsers are not thread-safe, and trafilatura and htmldate each parse with one module-level
# parser: extraction runs in worker threads, and two pages at once crashed the process (segfaults in
# etree.so, seen in soaks and a CI run). Every call into them holds this lock.
LXML_LOCK = threading.Lock()


def trafilatura_blocks(pruned_html: str, url: str | None = None) -> list[TextBlock]:
    """trafilatura's main text of an (already pruned) page as blocks: headings, list items, table
    rows and paragraphs, each cleaned of invisible characters."""
    with LXML_LOCK:
        return _trafilatura_blocks(pruned_html, url)


def _trafilatura_blocks(pruned_html: str, url: str | None) -> list[TextBlock]:
    import trafilatura  # at start-up with Settings.warm_up, else on the first low-confidence page (~0.3 s, ~20 MB)

    # fast=True skips trafilatura's own fallbacks (readability, justext): the same F1 on both halves
    # of the benchmark here, at about two thirds of the CPU.
    doc = trafilatura.bare_extraction(pruned_html, url=url, include_comments=False, with_metadata=False, fast=True)
    body = getattr(doc, "body", None)
    if body is None:
        return []
    for lb in body.iter("lb"):
        lb.text = "\n"  # a line break separates words
    blocks: list[TextBlock] = []
    _add(blocks, "paragraph", body.text or "")
    for el in body:
        _add_blocks(el, blocks)
        _add(blocks, "paragraph", el.tail or "")  # loose text after a block is a paragraph of its own
    return blocks


def _add_blocks(el: Any, blocks: list[TextBlock]) -> None:
    tag = el.tag
    if not isinstance(tag, str):  # an XML comment or processing instruction
        return
    if tag == "list":
        for item in el.iter("item"):
            _add(blocks, "list", _text(item, skip="list"))
    elif tag == "table":
        for row in el.iter("row"):
            _add(blocks, "table", " ".join(_text(cell) for cell in row))
    elif tag == "head":
        match = _HEADING_LEVEL_RE.fullmatch(el.get("rend") or "")
        _add(blocks, "heading", _text(el), int(match.group(1)) if match else 2)
    else:
        _add(blocks, "pre" if tag == "code" else "paragraph", _text(el))


def _text(el: Any, skip: str | None = None) -> str:
    """Text of an element; with ``skip``, without the text of nested elements of that tag (a
    nested list's items are blocks of their own)."""
    if skip is None:
        return "".join(el.itertext())
    parts = [el.text or ""]
    for child in el:
        if child.tag != skip:
            parts.append("".join(child.itertext()))
        parts.append(child.tail or "")
    return "".join(parts)


def _add(blocks: list[TextBlock], kind: str, raw: str, level: int = 0) -> None:
    text = collapse_spaces(strip_invisible(raw))
    if text:
        blocks.append(TextBlock(kind=kind, text=text, level=level))
