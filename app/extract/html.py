"""Main-content extraction from HTML on the Lexbor parser (selectolax).

How it works (details in docs/EXTRACTION.md):
1. parse (bytes are decoded by BOM / <meta charset>, else utf-8 with replacement);
2. one DOM walk (html_blocks.build_tree) yields text blocks and the element tree, skipping
   scripts, styles, navigation, form controls and hidden elements;
3. html_select scores every element by the blocks inside it and keeps the clean blocks of the
   best one (plus strong siblings); html_furniture drops bylines, datelines, credits, prompts,
   "other content" sections and the repeated title;
4. density = kept chars / visible chars; a page with too little kept text, or whose kept text
   is a cookie / paywall / enable-JavaScript notice, is flagged as an empty shell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from selectolax.lexbor import LexborHTMLParser

from app.domain.types import TextBlock
from app.extract.html_blocks import build_tree
from app.extract.html_furniture import drop_title_repeat
from app.extract.html_select import block_value, select_main_blocks  # noqa: F401  (re-exported)
from app.extract.text_clean import collapse_spaces, strip_invisible

MIN_MAIN_CHARS = 200  # under this much kept text a page is an empty shell, whatever else it has
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
    visible_chars: int = 0  # all visible text chars of the page (after hidden-element removal)
    rival_share: float = 0.0  # best region outside the selection / the winner (html_select)

    @property
    def text(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)


def parse_html(html: str | bytes) -> LexborHTMLParser:
    """Parse; bytes honour a BOM or <meta charset> and fall back to utf-8 with replacement."""
    if isinstance(html, bytes):
        return LexborHTMLParser(html, encoding=True)
    return LexborHTMLParser(html)


def extract_html(html: str | bytes, url: str | None = None, *, parser: LexborHTMLParser | None = None) -> Extraction:
    """Main content of a page as heading/paragraph/list/pre/table blocks. ``url`` is reserved for
    resolving links and is not used for site-specific rules (there are none)."""
    parser = parser if parser is not None else parse_html(html)
    title = page_title(parser)
    body = parser.body
    if body is None:
        return Extraction(title=title)
    tree = build_tree(body)
    blocks = select_main_blocks(tree, title)
    text_blocks = [TextBlock(kind=b.kind, text=b.text, level=b.level) for b in blocks]
    text_blocks = drop_title_repeat(text_blocks, title)
    main_chars = sum(len(b.text) for b in text_blocks)
    density = min(1.0, main_chars / tree.all_chars) if tree.all_chars else 0.0
    return Extraction(
        title=title,
        blocks=text_blocks,
        density=density,
        is_shell=looks_like_shell(text_blocks, main_chars),
        visible_chars=tree.all_chars,
        rival_share=tree.rival_share,
    )


def page_title(parser: LexborHTMLParser) -> str:
    for selector, attr in (('meta[property="og:title"]', "content"), ("title", None), ("h1", None)):
        node = parser.css_first(selector)
        if node is None:
            continue
        value = node.attributes.get(attr) if attr else node.text()
        if value and value.strip():
            return collapse_spaces(strip_invisible(value))
    return ""


def looks_like_shell(blocks: list[TextBlock], main_chars: int) -> bool:
    """An empty shell: a JavaScript app, a cookie wall or a paywall with no article behind it."""
    if main_chars < MIN_MAIN_CHARS:
        return True
    if main_chars < 1500:
        notices = sum(len(b.text) for b in blocks if _SHELL_RE.search(b.text))
        return notices * 2 >= main_chars
    return False
