"""Main-content extraction from HTML on the Lexbor parser (selectolax).

How it works (details in docs/EXTRACTION.md):
1. parse (bytes are decoded by BOM / <meta charset>, else utf-8 with replacement);
2. one DOM walk (html_blocks.build_tree) yields text blocks and the element tree, skipping
   scripts, styles, navigation, form controls and hidden elements;
3. every block gets a value: long, link-poor text is positive, link lists, short fragments and
   blocks under negative class/id hints are negative; each element's score is the sum over the
   blocks inside it plus a bonus for positive hints, and the best-scoring element is the article;
4. blocks inside the winner are kept unless they are boilerplate on their own (link-heavy,
   under a negative hint); invisible characters are stripped.
5. density = kept chars / visible chars; a page with too little kept text, or whose kept text
   is a cookie / paywall / enable-JavaScript notice, is flagged as an empty shell.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from selectolax.lexbor import LexborHTMLParser

from app.extract.fallback import readability_blocks
from app.extract.html_blocks import PageTree, RawBlock, build_tree
from app.extract.text_clean import collapse_spaces, strip_invisible
from app.pipeline.types import TextBlock

MIN_MAIN_CHARS = 200  # under this much kept text a page is an empty shell, whatever else it has
# Our selection kept under FALLBACK_MAX_CHARS of a page showing at least FALLBACK_MIN_PAGE_CHARS:
# ask readability-lxml too (slow, so only here) and take its answer if it finds much more.
FALLBACK_MAX_CHARS = 200
FALLBACK_MIN_PAGE_CHARS = 1000
FALLBACK_SHARE = 0.0
_SHELL_RE = re.compile(
    r"enable javascript|javascript is (?:disabled|required)|turn on javascript|"
    r"you need to enable|browser (?:is not|isn't) supported|"
    r"(?:we|this site) uses? cookies|accept (?:all )?cookies|cookie (?:settings|policy|preferences)|"
    r"consent to (?:the use of|our use of)|manage (?:your )?(?:privacy|consent)|"
    r"subscribe to (?:continue|read)|to continue reading|already a subscriber|"
    r"create a free account|sign in to (?:continue|read)|this content is for subscribers",
    re.I,
)


@dataclass(slots=True)
class Extraction:
    title: str
    blocks: list[TextBlock] = field(default_factory=list)
    density: float = 0.0  # main text chars / all visible text chars
    is_shell: bool = True

    @property
    def text(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)


def parse_html(html: str | bytes) -> LexborHTMLParser:
    """Parse; bytes honour a BOM or <meta charset> and fall back to utf-8 with replacement."""
    if isinstance(html, bytes):
        return LexborHTMLParser(html, encoding=True)
    return LexborHTMLParser(html)


def extract_html(html: str | bytes, url: str | None = None) -> Extraction:
    """Main content of a page as heading/paragraph/list/pre/table blocks. ``url`` is reserved for
    resolving links and is not used for site-specific rules (there are none)."""
    parser = parse_html(html)
    title = page_title(parser)
    body = parser.body
    if body is None:
        return Extraction(title=title)
    tree = build_tree(body)
    blocks = select_main_blocks(tree, title)
    if needs_second_opinion(blocks, tree.all_chars):
        other = [b for b in readability_blocks(html) if not is_furniture(b.text)]
        if sum(len(b.text) for b in other) > 2 * sum(len(b.text) for b in blocks):
            blocks = other
    text_blocks = [TextBlock(kind=b.kind, text=b.text, level=b.level) for b in blocks]
    text_blocks = _drop_title_repeat(text_blocks, title)
    main_chars = sum(len(b.text) for b in text_blocks)
    density = min(1.0, main_chars / tree.all_chars) if tree.all_chars else 0.0
    return Extraction(title=title, blocks=text_blocks, density=density,
                      is_shell=looks_like_shell(text_blocks, main_chars))


def needs_second_opinion(blocks: list[RawBlock], page_chars: int) -> bool:
    kept = sum(len(b.text) for b in blocks)
    return page_chars >= FALLBACK_MIN_PAGE_CHARS and (kept < FALLBACK_MAX_CHARS or kept < FALLBACK_SHARE * page_chars)


def page_title(parser: LexborHTMLParser) -> str:
    for selector, attr in (('meta[property="og:title"]', "content"), ("title", None), ("h1", None)):
        node = parser.css_first(selector)
        if node is None:
            continue
        value = node.attributes.get(attr) if attr else node.text()
        if value and value.strip():
            return collapse_spaces(strip_invisible(value))
    return ""


def block_value(block: RawBlock) -> float:
    """How much a block argues for an element holding it (no negative hint between) being the article."""
    size = len(block.text)
    link_density = block.link_chars / size if size else 1.0
    if link_density > 0.5:
        return -float(size)
    if size < 25 and block.kind != "heading":
        return -5.0
    return size * (1.0 - link_density)


def select_main_blocks(tree: PageTree, title: str = "") -> list[RawBlock]:
    """Score every element by the blocks inside it and keep the clean blocks of the best one.

    Climbing from a block to the root, the block counts for its ancestors until the climb passes
    an element with a negative hint; from there up it counts against them. So a comment section
    weighs against the page wrapper holding it, while a negatively named page wrapper cannot sink
    the article inside it. A weak negative name ("meta", "menu") does not flip the climb once a
    positive name ("article-body") has been passed; a strong one ("comments", "related") does.
    """
    if not tree.blocks:
        return []
    hint, parent = tree.hint, tree.parent
    score = [0.0] * len(parent)
    for block in tree.blocks:
        good = block_value(block)
        bad = -0.5 * len(block.text) if good > 0 else good
        value, protected, node = good, False, block.owner
        while node >= 0:
            h = hint[node]
            if h < 0 and value is good and (h == -2 or not protected):
                value = bad
            elif h > 0:
                protected = True
            score[node] += value
            node = parent[node]
    boost = (1.0, 1.15, 3.0)
    weighted = [score[i] * boost[max(0, hint[i])] for i in range(len(score))]
    best = max(range(len(score)), key=weighted.__getitem__)
    near = _near_title(tree, title)
    if near is not None:
        lo, hi = near
        alt = max(range(lo, hi + 1), key=weighted.__getitem__)
        if alt != best and weighted[alt] >= TITLE_SHARE * weighted[best]:
            best = alt
    if score[best] <= 0:
        return []
    spans = [(best, tree.end[best])] + _strong_siblings(tree, score, best)
    inside: list[tuple[RawBlock, int, bool]] = []
    for b in tree.blocks:
        for root, end in spans:
            if root <= b.owner <= end:
                inside.append((b, root, _keep(b, tree, root)))
                break
    return _cut_other_content(tree, _drop_link_containers(tree, inside))


# A short heading-like line that opens a list of *other* content: the article ended above it.
_OTHER_CONTENT_RE = re.compile(
    r"^(?:most popular|most read|popular|trending|related|more from|more on|more stories|more news"
    r"|recommended|you may also like|you might also like|read more|read next|what to read next"
    r"|don'?t miss|latest news|latest stories|top stories|also read|tell us what you think"
    r"|comments?|leave a (?:comment|reply)|join the conversation|share this)\b",
    re.I,
)
_OTHER_CONTENT_MAX_CHARS = 40


def _cut_other_content(tree: PageTree, blocks: list[RawBlock]) -> list[RawBlock]:
    """Drop an "other content" heading and what follows it inside the heading's container."""
    out: list[RawBlock] = []
    stop_end = -1
    for b in blocks:
        if b.owner <= stop_end:
            continue
        if len(b.text) <= _OTHER_CONTENT_MAX_CHARS and _OTHER_CONTENT_RE.search(b.text):
            stop_end = tree.end[tree.parent[b.owner]]
            continue
        out.append(b)
    return out


LINK_CONTAINER_DENSITY = 0.5


def _drop_link_containers(tree: PageTree, inside: list[tuple[RawBlock, int, bool]]) -> list[RawBlock]:
    """Inside the article, a container whose text is mostly links (a teaser grid, "more stories"
    made of headline + blurb pairs) goes as a whole even when each block alone passed."""
    chars: dict[int, int] = {}
    links: dict[int, int] = {}
    parent = tree.parent
    for b, root, _ in inside:
        node = b.owner
        while node > root:
            chars[node] = chars.get(node, 0) + len(b.text)
            links[node] = links.get(node, 0) + b.link_chars
            node = parent[node]
    out = []
    for b, root, keep in inside:
        if not keep:
            continue
        node, ok = b.owner, True
        while node > root:
            if links[node] > LINK_CONTAINER_DENSITY * chars[node]:
                ok = False
                break
            node = parent[node]
        if ok:
            out.append(b)
    return out


TITLE_SHARE = 0.5
TITLE_UP = 4


def _near_title(tree: PageTree, title: str) -> tuple[int, int] | None:
    """Span of the region around the heading that repeats the page title (a few levels up)."""
    if not title:
        return None
    low = title.lower()
    for b in tree.blocks:
        if b.kind == "heading" and b.level <= 2 and len(b.text) >= 15 and b.text.lower() in low:
            node = b.owner
            for _ in range(TITLE_UP):
                if tree.parent[node] <= 0:
                    break
                node = tree.parent[node]
            return node, tree.end[node]
    return None


SIBLING_SHARE = 0.2


def _strong_siblings(tree: PageTree, score: list[float], best: int) -> list[tuple[int, int]]:
    """Siblings of the winner that score well on their own: an article split into several
    containers (text, then an ad slot, then more text) keeps all its parts."""
    par = tree.parent[best]
    if par < 0:
        return []
    threshold = max(SIBLING_MIN, SIBLING_SHARE * score[best])
    out, node, end = [], par + 1, tree.end[par]
    while node <= end:
        if node != best and score[node] >= threshold and tree.hint[node] >= 0:
            out.append((node, tree.end[node]))
        node = tree.end[node] + 1
    return out


SIBLING_MIN = 100.0


# Short lines that are page furniture on any site: bylines, datelines, credits, calls to action.
_BOILERPLATE_RE = re.compile(
    r"^(?:photo:|image:|credit:|source:|related:|read more|see also"
    r"|advertisement|sponsored|share this|follow us|sign up|subscribe|click here|you may also like"
    r"|have a tip|recommended|more from|copyright|\(c\) )"
    r"|©|all rights reserved|getty images|\bap photo\b|/ reuters\b|newsletter|terms of (?:use|service)"
    r"|privacy policy|user agreement|subject to copyright|\((?:image|photo|picture|pic)s?:"
    r"|^advert\b|^explore further|requires javascript",
    re.I,
)
_BOILERPLATE_MAX_CHARS = 220
# Byline / dateline openers only mark furniture on a short line ("Posted on social media by ..."
# can open a real paragraph).
_BYLINE_RE = re.compile(r"^(?:by|posted|updated|published|last updated|first published)\b", re.I)
_BYLINE_MAX_CHARS = 100
# A line that is only a date and time ("November 19, 2019 6:30 AM", "18 Nov 2019, 19:09 GMT").
_DATE_WORDS_RE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
    r"|\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?|\b(?:am|pm|a\.m\.|p\.m\.|at|on|gmt|utc|bst|cet"
    r"|[ecmp][sd]t|et)\b|\d",
    re.I,
)
_DATELINE_MAX_CHARS = 60


def _keep(block: RawBlock, tree: PageTree, winner: int) -> bool:
    """Drop boilerplate inside the article: link lists, furniture lines, blocks under a negative element."""
    size = len(block.text)
    if not size or block.link_chars / size > 0.5 or is_furniture(block.text):
        return False
    protected, node = False, block.owner
    while node > winner:
        h = tree.hint[node]
        if h == -2 or (h == -1 and not protected):
            return False
        protected = protected or h > 0
        node = tree.parent[node]
    return True


def is_furniture(text: str) -> bool:
    """A short line that is page furniture wherever it appears: byline, dateline, credit, prompt."""
    size = len(text)
    if size <= _BOILERPLATE_MAX_CHARS and _BOILERPLATE_RE.search(text):
        return True
    if size <= _BYLINE_MAX_CHARS and _BYLINE_RE.search(text):
        return True
    return size <= _DATELINE_MAX_CHARS and _is_dateline(text)


def _is_dateline(text: str) -> bool:
    if not any(c.isdigit() for c in text):
        return False
    rest = _DATE_WORDS_RE.sub("", text)
    return sum(c.isalpha() for c in rest) <= 2


TITLE_LOOKAHEAD = 4  # the title heading can follow a kicker, a dateline or a breadcrumb
KICKER_MAX_CHARS = 80


def _drop_title_repeat(blocks: list[TextBlock], title: str) -> list[TextBlock]:
    """The page title repeated as a heading at the top is not body text, nor are the short
    kicker/dateline lines above it."""
    out = [TextBlock(kind=b.kind, text=strip_invisible(b.text), level=b.level) for b in blocks]
    out = [b for b in out if b.text]
    low = title.lower()
    for i, b in enumerate(out[:TITLE_LOOKAHEAD]):
        if b.kind == "heading" and (b.level == 1 or (low and b.text.lower() in low)):
            if all(len(x.text) <= KICKER_MAX_CHARS for x in out[:i]):
                return out[i + 1:]
            return out[:i] + out[i + 1:]
    return out


def looks_like_shell(blocks: list[TextBlock], main_chars: int) -> bool:
    """An empty shell: a JavaScript app, a cookie wall or a paywall with no article behind it."""
    if main_chars < MIN_MAIN_CHARS:
        return True
    if main_chars < 1500:
        notices = sum(len(b.text) for b in blocks if _SHELL_RE.search(b.text))
        return notices * 2 >= main_chars
    return False
