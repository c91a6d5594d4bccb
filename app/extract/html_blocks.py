"""One pass over a Lexbor DOM that turns it into text blocks plus the element tree they hang on.

The walker records, for every element, its parent, its pre-order span and a class/id hint (+1 for
article/content-like names, -1 for comment/sidebar/share-like names). Text is collected into the
innermost block-level element (paragraph, heading, list item, ...), so inline markup does not split
paragraphs. Link text is counted per block for link density. Scripts, styles, forms controls and
hidden elements (attributes, inline styles, classes and the page's own <style> rules: see
app/extract/hidden.py) are removed first; comments never reach the text; invisible characters
(zero-width, bidi controls, tag characters) are stripped from every block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from selectolax.lexbor import LexborNode

from app.extract.hidden import (
    HIDDEN_CLASS_SELECTOR,
    class_hiding_reason,
    drop_closed_details,
    drop_stylesheet_hidden,
    inline_hiding_reason,
)
from app.extract.text_clean import strip_invisible
from app.memo import short_input_cache

SKIP_TAGS = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "iframe",
        "object",
        "embed",
        "canvas",
        "button",
        "select",
        "option",
        "input",
        "textarea",
        "label",
        "head",
        "title",
        "meta",
        "link",
        "audio",
        "video",
        "source",
        "picture",
        "img",
        "map",
        "dialog",
        "nav",
    }
)
BLOCK_TAGS = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "aside",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "li",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "pre",
        "blockquote",
        "table",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "caption",
        "figure",
        "figcaption",
        "address",
        "hr",
        "form",
        "fieldset",
        "details",
        "summary",
        "center",
        "body",
        "html",
    }
)
KIND_BY_TAG = {
    "h1": "heading",
    "h2": "heading",
    "h3": "heading",
    "h4": "heading",
    "h5": "heading",
    "h6": "heading",
    "li": "list",
    "dt": "list",
    "dd": "list",
    "pre": "pre",
    "tr": "table",
    "caption": "table",
}
LEAF_TAGS = frozenset({"p", "span", "a", "li", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "b", "i"})
# Structural tags that say "not the article" as loudly as a class name would.
NEGATIVE_TAGS = frozenset({"aside", "footer", "form", "figcaption", "address"})
STRONG_NEGATIVE_TAGS = frozenset({"aside", "footer"})
HINTED_TAGS = NEGATIVE_TAGS | {"blockquote"}  # tags hinted even without attributes (a footnote <aside> is not negative)
_SLUG_SEP_RE = re.compile(r"[-_]")

# Class/id names are lower-cased before matching (case-insensitive alternations are several
# times slower in ``re``); "ad"/"ads" are matched as whole name parts, not substrings ("header").
_NEGATIVE_RE = re.compile(
    r"comment|sidebar|side-bar|footer|share|sharing|social|related|recommend|newsletter|subscri"
    r"|promo|advert|sponsor|breadcrumb|cookie|consent|popup|modal|masthead|menu|navbar|nav-|-nav"
    r"|disqus|outbrain|taboola|banner|signup|sign-up|byline|author|caption|credit|tags|toolbar"
    r"|skip|print|meta|more-|most-|trending|popular|pagination|pager|hidden|sr-only|screen-reader"
    r"|teaser|tooltip|login|paywall"
)
_AD_PARTS = frozenset({"ad", "ads", "adv", "advertisement", "dfp", "gpt"})
_NAME_PARTS_RE = re.compile(r"[\s_\-]+")
# Names that mark non-article content even when they also say "content" or "body"
# ("comment-body", "related-content"); content inside them stays negative.
_STRONG_NEGATIVE_RE = re.compile(
    r"comment|disqus|related|sidebar|share|sharing|newsletter|outbrain|taboola|recommend"
    r"|respond|reply|trending|popular|most-read|mostread|read-next|more-stories"
)
_POSITIVE_RE = re.compile(r"article|content|entry|post|story|body|main|text|blog|prose|rich-?text|paragraph")


@dataclass(slots=True)
class RawBlock:
    owner: int  # element index of the innermost block-level element holding this text
    kind: str
    level: int
    text: str
    link_chars: int


@dataclass(slots=True)
class PageTree:
    parent: list[int] = field(default_factory=list)
    end: list[int] = field(default_factory=list)  # last descendant index (pre-order span)
    hint: list[int] = field(default_factory=list)  # +1 positive, -1 negative, 0 none
    tag: list[str] = field(default_factory=list)
    blocks: list[RawBlock] = field(default_factory=list)
    all_chars: int = 0  # visible text chars on the page (for density)
    rival_share: float = 0.0  # best element outside the selection, as a share of the winner (html_select)
    hint_cache: dict[str, int] = field(default_factory=dict)


class _Buffer:
    __slots__ = ("parts", "link_chars", "owner", "kind", "level")

    def __init__(self, owner: int, kind: str, level: int) -> None:
        self.parts: list[str] = []
        self.link_chars = 0
        self.owner, self.kind, self.level = owner, kind, level


def _hint(attrs: dict[str, str | None], tag: str, cache: dict[str, int]) -> int:
    if tag in NEGATIVE_TAGS:
        if tag == "aside" and _is_footnote(attrs):
            return 0  # docutils/Sphinx put footnotes in <aside>: part of the text they annotate
        return -2 if tag in STRONG_NEGATIVE_TAGS else -1
    ident = attrs.get("id") if tag == "section" else None
    if ident and (_SLUG_SEP_RE.search(ident) or _name_hint(ident) != -2):
        # A <section>'s id is usually its heading's anchor, a slug of the heading ("more-on-lists",
        # "how-do-i-share-global-variables", "pprint"), not a layout name: it is not read, except a
        # one-word id that is a strong negative on its own ("comments", "sidebar").
        attrs = {k: v for k, v in attrs.items() if k != "id"}
    if attrs.get("itemprop") == "articleBody":  # schema.org says it outright
        return 2
    if tag == "blockquote":
        # a quotation (an embedded post included) is part of the article around it, even inside
        # a weakly negative wrapper ("social-media-embed"); a strongly negative name still wins
        hint = _hint_for_names(attrs, cache)
        return hint if hint == -2 else 1
    if tag in LEAF_TAGS:
        # "paragraph"/"text" on a <p> says nothing about the region it is in; only negatives count
        hint = _hint_for_names(attrs, cache)
        return hint if hint < 0 else 0
    return _hint_for_names(attrs, cache)


def _is_footnote(attrs: dict[str, str | None]) -> bool:
    # docutils: <aside class="footnote brackets" role="note">; DPUB-ARIA roles. role="note" alone
    # is any aside note (a "related" box may carry it): not enough.
    role = (attrs.get("role") or "").lower()
    return role in ("doc-footnote", "doc-endnotes") or "footnote" in (attrs.get("class") or "").lower()


def _hint_for_names(attrs: dict[str, str | None], cache: dict[str, int]) -> int:
    cls, ident = attrs.get("class"), attrs.get("id")
    names = f"{cls} {ident}" if cls and ident else (cls or ident)
    if not names:
        return 0
    cached = cache.get(names)
    if cached is None:  # class names repeat a lot within a page; the regexes are the hot spot
        cached = cache[names] = _name_hint(names)
    return cached


# class/id strings recur across pages of a site and across sites (CMS themes): remembered, but only
# strings up to NAME_HINT_CACHE_CHARS, so the memo is bounded in bytes too (16,384 entries of at
# most 256 characters, ~4 MiB at 1 byte a character), whatever class attributes a hostile page sends.
NAME_HINT_CACHE_SIZE = 16384
NAME_HINT_CACHE_CHARS = 256


@short_input_cache(NAME_HINT_CACHE_SIZE, NAME_HINT_CACHE_CHARS)
def _name_hint(names: str) -> int:
    names = names.lower()
    if _STRONG_NEGATIVE_RE.search(names):
        return -2
    negative = _NEGATIVE_RE.search(names) or not _AD_PARTS.isdisjoint(_NAME_PARTS_RE.split(names))
    if negative and not _POSITIVE_RE.search(names):
        return -1
    if _POSITIVE_RE.search(names):
        return 1
    return 0


def _is_hidden(attrs: dict[str, str | None]) -> bool:
    if "hidden" in attrs:
        return True
    aria = attrs.get("aria-hidden")
    if aria is not None and aria.strip().lower() == "true":
        return True
    return bool(inline_hiding_reason(attrs.get("style")) or class_hiding_reason(attrs.get("class")))


# Removed in C before the walk: cheaper than testing every element in Python. Elements with a
# style attribute or a hiding class are then judged in Python (app/extract/hidden.py).
_JUNK_SELECTOR = ",".join(sorted(SKIP_TAGS - {"head", "title", "meta", "link"})) + (
    ",[hidden],[aria-hidden],[style],details:not([open])," + HIDDEN_CLASS_SELECTOR
)


def drop_junk(body: LexborNode) -> None:
    """Remove scripts, styles, navigation, form controls and hidden elements from the tree: hidden by
    attribute, by inline style, by a class, by the page's own <style> rules, or inside a closed
    <details> (see app/extract/hidden.py)."""
    root = body.parent if body.parent is not None else body
    drop_stylesheet_hidden(root, body)  # before the <style> elements in the body are removed
    for node in body.css(_JUNK_SELECTOR):
        tag = node.tag
        if tag in SKIP_TAGS:
            node.decompose()
            continue
        attrs = node.attributes
        if _is_hidden(attrs):
            node.decompose()
        elif tag == "details" and "open" not in attrs:
            drop_closed_details(node)


def build_tree(body: LexborNode) -> PageTree:
    drop_junk(body)
    tree = PageTree()
    _enter(tree, -1, "body", 0)
    buf = _Buffer(0, "paragraph", 0)
    buf = _walk(body, 0, tree, buf, False)
    _flush(tree, buf)
    tree.end[0] = len(tree.parent) - 1
    return tree


def _enter(tree: PageTree, parent: int, tag: str, hint: int) -> int:
    tree.parent.append(parent)
    tree.end.append(0)
    tree.hint.append(hint)
    tree.tag.append(tag)
    return len(tree.parent) - 1


def _flush(tree: PageTree, buf: _Buffer) -> None:
    text = " ".join(strip_invisible("".join(buf.parts)).split())
    if text:
        tree.all_chars += len(text)
        tree.blocks.append(RawBlock(buf.owner, buf.kind, buf.level, text, buf.link_chars))
    buf.parts = []
    buf.link_chars = 0


def _walk(node: LexborNode, idx: int, tree: PageTree, buf: _Buffer, in_link: bool) -> _Buffer:
    for child in node.iter(include_text=True):
        tag = child.tag
        if tag == "-text":
            text = child.text_content
            if text:
                buf.parts.append(text)
                if in_link:
                    buf.link_chars += len(text.strip())
            continue
        # comments; anything drop_junk left; tag None: a processing instruction (<?php …?>, Word's <?xml:namespace …?>)
        if tag is None or tag[0] == "-" or tag in SKIP_TAGS:
            continue
        if tag == "br":
            buf.parts.append("\n")
            continue
        if tag == "td" or tag == "th":
            buf.parts.append(" ")  # cells are words of their row's block
        attrs = child.attributes
        hint = _hint(attrs, tag, tree.hint_cache) if attrs or tag in HINTED_TAGS else 0
        child_idx = _enter(tree, idx, tag, hint)
        if child.first_child is not None:
            if tag in BLOCK_TAGS:
                if buf.parts:
                    _flush(tree, buf)
                kind = KIND_BY_TAG.get(tag, "paragraph")
                inner = _Buffer(child_idx, kind, int(tag[1]) if kind == "heading" else 0)
                inner = _walk(child, child_idx, tree, inner, in_link)
                if inner.parts:
                    _flush(tree, inner)
            else:
                buf = _walk(child, child_idx, tree, buf, in_link or tag == "a")
        tree.end[child_idx] = len(tree.parent) - 1
    return buf
