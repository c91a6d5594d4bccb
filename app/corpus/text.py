"""Plain text for indexing: title, main heading and the visible text of one stored document, cut
into passages (one per section, long sections in windows) so that ranking and snippets point at the
part of a long page that answers, not at the page as a whole.

Deliberately simple: the service's real extractor (app/extract/) works on the raw content that the
corpus serves; this text only feeds the full-text index and its snippets.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser

# Boilerplate that never holds the page's subject. Sphinx puts its sidebars in div.sphinxsidebar and
# its prev/next bars in div.related, so those go too.
_DROP_TAGS = ["script", "style", "noscript", "template", "nav", "header", "footer", "svg", "iframe"]
_DROP_CSS = "a.headerlink, div.sphinxsidebar, div.related, div.footer, [role=navigation]"
# Where a page's own content lives, most specific first (Sphinx, then generic HTML5).
_MAIN_CSS = ("div[role=main]", "div.body", "main", "article", "[role=main]")

# Block elements get a line break after them so that words of adjacent blocks never fuse, while
# inline markup (Sphinx wraps every code token in a <span>) joins without invented spaces.
_BLOCKS = ("p, div, li, dt, dd, h1, h2, h3, h4, h5, h6, tr, td, th, pre, br, hr, section, article,"
           " table, ul, ol, dl, blockquote, figcaption, caption")
_SECTION_HEADINGS = "h1, h2, h3, h4"
_SECTION_MARK = "\x1e"  # ASCII record separator: never in visible text
PASSAGE_CHARS = 1500  # longer sections are cut into windows of about this size
# A shorter section joins the next one under its own heading: tiny passages would otherwise win on
# bm25's length normalisation ("Release date: 2022-10-24" keeps the changes that follow it).
MIN_PASSAGE_CHARS = 200
_WS = re.compile(r"\s+")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_CHARSET = re.compile(rb"""charset\s*=\s*["']?([A-Za-z0-9_\-]+)""", re.I)
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)


@dataclass(slots=True)
class Passage:
    section: str  # the heading of the section it comes from ("" before the first heading)
    text: str


@dataclass(slots=True)
class PageText:
    title: str  # as a search engine shows it (<title>)
    heading: str  # what the page is about (<h1>), ranked with a higher weight
    passages: list[Passage]

    @property
    def body(self) -> str:
        return " ".join(p.text for p in self.passages)


def squash(text: str) -> str:
    """One line, single spaces."""
    return _WS.sub(" ", text).strip()


def decode_html(data: bytes, header_charset: str | None = None) -> str:
    charset = header_charset
    if not charset:
        found = _CHARSET.search(data[:4096])
        charset = found.group(1).decode("ascii") if found else "utf-8"
    try:
        return data.decode(charset, errors="replace")
    except LookupError:  # unknown charset name in the page
        return data.decode("utf-8", errors="replace")


def html_text(html: str) -> PageText:
    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = squash(title_node.text()) if title_node else ""
    tree.strip_tags(_DROP_TAGS)
    for node in tree.css(_DROP_CSS):
        node.decompose()
    main = None
    for selector in _MAIN_CSS:
        main = tree.css_first(selector)
        if main is not None:
            break
    if main is None:
        main = tree.body or tree.root
    if main is None:
        return PageText(title=title, heading=title, passages=[])
    for node in main.css(_BLOCKS):
        node.insert_after("\n")
    h1 = main.css_first("h1")
    heading = squash(h1.text()) if h1 else ""
    for node in main.css(_SECTION_HEADINGS):
        node.insert_before(_SECTION_MARK)
    sections = []
    for i, chunk in enumerate(main.text().split(_SECTION_MARK)):
        section, _, rest = chunk.strip().partition("\n") if i else ("", "", chunk)
        sections.append((squash(section), squash(rest)))
    return PageText(title=title or heading, heading=heading or title, passages=_passages(sections))


def plain_text(text: str, *, fallback_title: str, markdown: bool = False) -> PageText:
    """Title of a text file: its first Markdown heading, else its first non-empty line."""
    title = ""
    if markdown:
        found = _MD_HEADING.search(text)
        if found:
            title = squash(found.group(1))
    if not title:
        first = next((line for line in text.splitlines() if line.strip()), "")
        title = squash(first)[:200]
    title = title or fallback_title
    sections = []
    if markdown:  # Markdown headings delimit sections
        starts = [m.start() for m in _MD_HEADING.finditer(text)]
        for start, end in zip([0, *starts], [*starts, len(text)], strict=True):
            found = _MD_HEADING.match(text, start)
            section = squash(found.group(1)) if found else ""
            sections.append((section, squash(text[found.end():end] if found else text[start:end])))
    else:  # paragraphs (blank-line separated) are the units that short ones merge from
        sections.extend(("", squash(par)) for par in _PARAGRAPH_BREAK.split(text))
    return PageText(title=title, heading=title, passages=_passages(sections))


def _passages(sections: list[tuple[str, str]]) -> list[Passage]:
    """(heading, text) sections -> passages: short sections absorb the next, long ones are cut."""
    out: list[Passage] = []
    carry_heading, carry_text = None, ""
    for heading, text in sections:
        if not heading and not text:
            continue
        if carry_heading is not None:
            heading, text = carry_heading, " ".join(t for t in (carry_text, heading, text) if t)
            carry_heading, carry_text = None, ""
        if len(text) < MIN_PASSAGE_CHARS:
            carry_heading, carry_text = heading, text
            continue
        out.extend(_windows(heading, text))
    if carry_heading is not None and (carry_heading or carry_text):
        if out and not carry_heading:
            out[-1].text += " " + carry_text
        else:
            out.append(Passage(carry_heading, carry_text))
    return out


def _windows(section: str, text: str) -> list[Passage]:
    """The section as one passage, or cut at spaces into ~PASSAGE_CHARS windows (linear time)."""
    if not text:
        return [Passage(section, "")] if section else []
    out, start, n = [], 0, len(text)
    while start < n:
        end = n if n - start <= PASSAGE_CHARS * 5 // 4 else start + PASSAGE_CHARS
        if end < n:
            cut = text.rfind(" ", start + PASSAGE_CHARS // 2, end)
            end = cut if cut > 0 else end
        out.append(Passage(section, text[start:end].strip()))
        start = end + 1 if end < n and text[end] == " " else end
    return out
