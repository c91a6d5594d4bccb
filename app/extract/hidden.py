"""Hidden text: elements a browser would not show to a sighted reader are removed before the walk.

A page can carry text that no visitor sees and that a model would still read: planted instructions,
false facts for answer engines. Removed here (docs/SECURITY.md lists every technique with its test):

- attributes: ``hidden``, ``aria-hidden="true"`` in any case, closed ``<details>`` (all but its
  ``<summary>``), screen-reader-only classes (``sr-only``, ``visually-hidden``, ...) and the
  display-none utility classes (``hidden``, ``d-none``, ``invisible``) unless the element also has a
  responsive class that shows it again (``md:block``, ``d-md-block``);
- inline ``style`` and ``<style>`` rules with simple selectors (``.c``, ``#i``, ``tag``, ``tag.c``,
  ``.a.b``): ``display:none``, ``visibility:hidden|collapse``, ``opacity:0``, font size under 2 px,
  off-screen offsets (``left``/``top``/``right``/``margin-*``/``text-indent`` <= -500 px, -100 % or
  -100 vw/vh), ``transform: scale(0)`` or a far ``translate``, a zero-area ``clip: rect(...)``,
  ``clip-path: inset(50%)``/``circle(0)``, width/height/max-* <= 1 px with ``overflow: hidden|clip``,
  and text coloured like its own background.

Stylesheets are read only where they can hide something: tokenising whole sheets with tinycss2 took
26 ms at p90 (408 ms max) on the benchmark pages, against an extraction budget of a few ms. So a
regex finds the candidate declarations, the rule around each one is cut out, its selector list is
kept only if it is a list of simple selectors (a strict regex is the whole grammar for those), and
its declaration block is parsed by tinycss2 (strings, escapes, comments, ``!important``). The
result is cached per stylesheet digest (sites repeat their inline CSS on every page).
Rules inside ``@media`` count where their query holds: an element is removed only when it is hidden
both on a phone and on a laptop screen (app/extract/media.py evaluates the queries); rules inside
other at-rules (``@supports``, ``@container``, ``@keyframes``) are ignored. A rule never removes ``html``/``body`` (anti-flicker snippets fade the whole page in), and
an inline style on the element that sets the same property visibly wins over the rule.
"""

from __future__ import annotations

import hashlib
import re
import threading
from bisect import bisect_right
from collections import OrderedDict
from functools import lru_cache

import tinycss2
from selectolax.lexbor import LexborNode

from app.extract.media import VIEWPORTS, media_applies

# Screen-reader-only text is heard, never seen; it is mostly UI labels ("opens in a new tab") and a
# known way to plant text for machines, so it goes (decision documented in docs/SECURITY.md).
SR_ONLY_CLASSES = (
    "sr-only",
    "visually-hidden",
    "visuallyhidden",
    "screen-reader-text",
    "screen-reader-only",
    "element-invisible",
    "a11y-hidden",
    "hidden-visually",
    "u-visually-hidden",
    "show-for-sr",
    "cdk-visually-hidden",
)
# display:none utilities of common CSS frameworks (their stylesheets are external, so the class name
# is all there is); skipped when a responsive class on the same element shows it again.
UTILITY_HIDDEN_CLASSES = ("hidden", "d-none", "invisible", "is-hidden", "u-hidden", "display-none")
_RESPONSIVE_SHOW_RE = re.compile(r":|^d-\w+-(?:block|inline|flex|grid|table|contents)|^(?:visible|show)-")
HIDDEN_CLASS_SELECTOR = ",".join(f".{c}" for c in SR_ONLY_CLASSES + UTILITY_HIDDEN_CLASSES)
_SR_ONLY = frozenset(SR_ONLY_CLASSES)
_UTILITY = frozenset(UTILITY_HIDDEN_CLASSES)

# Words that must appear in an inline style for it to be able to hide anything (a cheap pre-check).
_STYLE_HINT_RE = re.compile(r"none|hidden|collapse|opacity|font|clip|indent|-\s*\d|scale|height|width|color", re.I)
_LENGTH_RE = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(px|pt|pc|em|rem|ex|ch|%|vw|vh|vmin|vmax|cm|mm|in|q)?$")
_PX_PER = {"px": 1.0, "pt": 4 / 3, "pc": 16.0, "em": 16.0, "rem": 16.0, "ex": 8.0, "ch": 8.0}
_PX_PER.update({"cm": 37.8, "mm": 3.78, "q": 0.945, "in": 96.0})
OFFSCREEN_PX = 500.0  # an offset at least this far left/up puts the element outside any viewport
OFFSCREEN_PERCENT = 100.0  # -100 % / -100 vw / -100 vh: one whole container or viewport away
MIN_FONT_PX = 2.0  # text under 2 px is unreadable
_OFFSET_PROPS = ("left", "top", "right", "margin-left", "margin-top", "text-indent")
_SCALE_ZERO_RE = re.compile(r"scale(?:x|y|3d)?\(\s*(?:[+-]?0*\.?0+)\s*(?:[,)]|\s)")
_TRANSLATE_RE = re.compile(r"translate(?:x|y|3d)?\(\s*([^,)\s]+)(?:\s*,\s*([^,)\s]+))?")
_CLIP_RECT_RE = re.compile(r"rect\(\s*([^,\s)]+)[\s,]+([^,\s)]+)[\s,]+([^,\s)]+)[\s,]+([^,\s)]+)\s*\)")
_CLIP_PATH_RE = re.compile(
    r"inset\(\s*(\d+(?:\.\d+)?)%|circle\(\s*0*\.?0+(?:px|%)?\s*[)a]|ellipse\(\s*0*\.?0+(?:px|%)?\s"
)
_NAMED_COLOURS = {"white": "#ffffff", "black": "#000000", "transparent": "transparent"}


def length(value: str) -> tuple[float, str] | None:
    """'-9999px' → (-9999.0, 'px'); a bare number has unit ''; not a length → None."""
    m = _LENGTH_RE.match(value.strip())
    return (float(m.group(1)), m.group(2) or "") if m else None


def _far_negative(value: str) -> bool:
    got = length(value.split()[0]) if value.strip() else None
    if got is None:
        return False
    number, unit = got
    if unit in ("%", "vw", "vh", "vmin", "vmax"):
        return number <= -OFFSCREEN_PERCENT
    return number * _PX_PER.get(unit, 1.0) <= -OFFSCREEN_PX


def _at_most_px(value: str, limit: float) -> bool:
    got = length(value)
    if got is None:
        return False
    number, unit = got
    if unit in ("%", "vw", "vh", "vmin", "vmax"):
        return number == 0
    return number * _PX_PER.get(unit, 1.0) <= limit


def _colour(value: str) -> str:
    value = value.replace(" ", "")
    value = _NAMED_COLOURS.get(value, value)
    if len(value) == 4 and value[0] == "#":
        value = "#" + "".join(c * 2 for c in value[1:])
    m = re.fullmatch(r"rgba?\((\d+),(\d+),(\d+)(?:,1(?:\.0*)?)?\)", value)
    if m:
        value = "#" + "".join(f"{int(x):02x}" for x in m.groups())
    return value


def hiding_reason(decls: dict[str, str]) -> str | None:
    """Why these declarations (lower-case names and values, ``!important`` dropped) hide an
    element, or None."""
    if decls.get("display") == "none":
        return "display:none"
    if decls.get("visibility") in ("hidden", "collapse"):
        return "visibility"
    opacity = decls.get("opacity")
    if opacity is not None:
        got = length(opacity)
        if got is not None and got[0] == 0:
            return "opacity:0"
    if "opacity(0" in decls.get("filter", ""):
        return "opacity:0"
    size = decls.get("font-size")
    if size is not None and _at_most_px(size, MIN_FONT_PX - 0.01):
        return "font-size"
    for prop in _OFFSET_PROPS:
        value = decls.get(prop)
        if value is not None and _far_negative(value):
            return "text-indent" if prop == "text-indent" else "off-screen"
    transform = decls.get("transform")
    if transform:
        if _SCALE_ZERO_RE.search(transform):
            return "scale(0)"
        for tm in _TRANSLATE_RE.finditer(transform):
            if any(v and _far_negative(v) for v in tm.groups()):
                return "off-screen"
    clip = decls.get("clip")
    if clip:
        rect = _CLIP_RECT_RE.search(clip)
        if rect:
            top, right, bottom, left = (length(v) for v in rect.groups())
            if top and right and bottom and left and (bottom[0] <= top[0] or right[0] <= left[0]):
                return "clip"
    clip_path = decls.get("clip-path")
    if clip_path:
        shape = _CLIP_PATH_RE.search(clip_path)
        if shape and (shape.group(1) is None or float(shape.group(1)) >= 50):
            return "clip-path"
    overflow = " ".join(decls.get(p, "") for p in ("overflow", "overflow-x", "overflow-y"))
    if "hidden" in overflow or "clip" in overflow:
        for prop in ("height", "max-height", "width", "max-width"):
            value = decls.get(prop)
            if value is not None and _at_most_px(value, 1.0):
                return "zero-size"
    colour = decls.get("color")
    background = decls.get("background-color") or decls.get("background")
    if colour and background and _colour(colour) == _colour(background.split()[0]):
        return "same-colour"
    return None


def inline_decls(style: str) -> dict[str, str]:
    """An inline ``style`` attribute as {property: value}, lower-cased, last one wins."""
    out: dict[str, str] = {}
    for part in style.lower().split(";"):
        name, sep, value = part.partition(":")
        if sep:
            out[name.strip()] = value.replace("!important", "").strip()
    return out


def inline_hiding_reason(style: str | None) -> str | None:
    if not style or not _STYLE_HINT_RE.search(style):
        return None
    return hiding_reason(inline_decls(style))


def class_hiding_reason(classes: str | None) -> str | None:
    """Screen-reader-only and display-none utility classes (see the module docstring)."""
    if not classes:
        return None
    names = classes.split()
    if not _SR_ONLY.isdisjoint(names):
        return "sr-only"
    if not _UTILITY.isdisjoint(names) and not any(_RESPONSIVE_SHOW_RE.search(n) for n in names):
        return "utility-class"
    return None


# --- <style> blocks ------------------------------------------------------------------------------

_COMMENT_RE = re.compile(r"/\*.*?\*/", re.S)
# An at-rule block with at most one level of nested rules (@media, @supports, @font-face, ...).
_AT_BLOCK_RE = re.compile(r"@[^{};]*\{(?:[^{}]*\{[^{}]*\})*[^{}]*\}")
# Declarations that may hide: only the rules holding one are parsed. Matched on the lower-cased
# sheet without re.I, and without a leading alternation of property names: both cost 15x here.
_CANDIDATE_RE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)|opacity\s*:\s*[0.]|opacity\(\s*0"
    r"|font-size\s*:\s*(?:0|\.|1(?:\.\d+)?p[xt])|clip|text-indent\s*:\s*-|:\s*-\d"
    r"|scale[xy3d]*\(\s*[0.]|translate[xy3d]*\(\s*-|height\s*:\s*(?:0(?!\d)|1px)|width\s*:\s*(?:0(?!\d)|1px)"
)
_SIMPLE_SELECTOR_RE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9]*)?(?:[.#]-?[A-Za-z_][A-Za-z0-9_-]*)*$")
_NEVER_REMOVED = frozenset({"html", "body", "head"})
MAX_RULES = 300  # hiding selectors kept per page: bounds the cost of a stylesheet written to slow us down
MAX_PARSED_BLOCK = 2000  # declaration blocks longer than this are split on ";" instead
MAX_CANDIDATE_RULES = 1000  # rules read per stylesheet (a 1 MB sheet has ~600 candidates)
_CACHE_SIZE = 512
_cache_lock = threading.Lock()
_rules_cache: OrderedDict[bytes, tuple[tuple[str, dict[str, str]], ...]] = OrderedDict()


def stylesheet_rules(css: str) -> tuple[tuple[str, dict[str, str]], ...]:
    """(simple selector, its declarations) for every top-level rule of ``css`` that hides what it
    matches. Same-selector rules merge in source order (a later ``display:block`` undoes an earlier
    ``display:none``). Cached by a digest of the text (sites repeat their inline CSS on every page;
    the cache holds digests and results, never the CSS itself)."""
    key = hashlib.blake2b(css.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    with _cache_lock:  # extraction runs in worker threads
        cached = _rules_cache.get(key)
        if cached is not None:
            _rules_cache.move_to_end(key)
            return cached
    result = _parse_hiding_rules(css)
    with _cache_lock:
        _rules_cache[key] = result
        while len(_rules_cache) > _CACHE_SIZE:
            _rules_cache.popitem(last=False)
    return result


def _parse_hiding_rules(css: str) -> tuple[tuple[str, dict[str, str]], ...]:
    low = _lower_aligned(css)
    if not _CANDIDATE_RE.search(low):
        return ()
    if "/*" in css:
        css = _COMMENT_RE.sub("", css)
    css, media = _unfold_media(css) if "@" in css else (css, [])
    low = _lower_aligned(css)
    spans: dict[int, tuple[int, int]] = {}  # rule's "{" → (selector start, "}")
    for m in _CANDIDATE_RE.finditer(low):
        _add_rule_around(css, m.start(), spans, in_block=True)
        if len(spans) >= MAX_CANDIDATE_RULES:
            break
    parsed: dict[int, list[tuple[str, dict[str, str]]]] = {}
    found: dict[str, None] = {}  # selectors of rules that hide somewhere, in source order
    for start in sorted(spans):
        parsed[start] = rules = _parse_rule(css, *spans[start], start)
        found.update((selector, None) for selector, decls in rules if hiding_reason(decls))
    names = list(found)[:MAX_RULES]
    if not names:
        return ()
    # Other rules naming the same selectors may undo the hiding later in the sheet ("display:block").
    for name in names:
        pos = css.find(name)
        while pos != -1:
            _add_rule_around(css, pos, spans, in_block=False)
            pos = css.find(name, pos + len(name))
    wanted = set(names)
    # One cascade per reference viewport: the top-level rules and the @media rules that hold there.
    merged: list[dict[str, dict[str, str]]] = [{} for _ in VIEWPORTS]
    starts = [r[0] for r in media]
    for start in sorted(spans):
        got = parsed.get(start)
        rules = got if got is not None else _parse_rule(css, *spans[start], start)
        mask = _mask_at(start, media, starts)
        for selector, decls in rules:
            if selector in wanted:
                for i, cascade in enumerate(merged):
                    if mask >> i & 1:
                        cascade.setdefault(selector, {}).update(decls)
    # Hidden only where a visitor sees it on no reference viewport.
    return tuple((s, d) for s, d in merged[-1].items() if all(s in c and hiding_reason(c[s]) for c in merged))


_ALL_VIEWPORTS = (1 << len(VIEWPORTS)) - 1


def _unfold_media(css: str) -> tuple[str, list[tuple[int, int, int]]]:
    """The sheet with every at-rule block replaced by nothing, except the rules of an ``@media``
    block whose query holds at some reference viewport; with (start, end, viewport bit mask) of
    each such run of rules in the returned text."""
    pieces: list[str] = []
    ranges: list[tuple[int, int, int]] = []
    pos = size = 0
    for m in _AT_BLOCK_RE.finditer(css):
        pieces.append(css[pos : m.start()])
        size += m.start() - pos
        pos = m.end()
        block = m.group(0)
        if block[:6].lower() != "@media":
            continue  # @supports, @keyframes, @font-face...: not evaluated
        brace = block.index("{")
        mask = _media_mask(block[6:brace])
        if mask:
            inner = block[brace + 1 : -1]
            ranges.append((size, size + len(inner), mask))
            pieces.append(inner)
            size += len(inner)
    pieces.append(css[pos:])
    return "".join(pieces), ranges


@lru_cache(maxsize=1024)  # sites repeat the same few breakpoints in every block
def _media_mask(prelude: str) -> int:
    return sum(1 << i for i, vp in enumerate(VIEWPORTS) if media_applies(prelude, vp))


def _mask_at(pos: int, media: list[tuple[int, int, int]], starts: list[int]) -> int:
    i = bisect_right(starts, pos) - 1
    return media[i][2] if i >= 0 and pos < media[i][1] else _ALL_VIEWPORTS


def _lower_aligned(css: str) -> str:
    low = css.lower()
    if len(low) == len(css):
        return low
    # a rare character whose lower case is longer ("İ"): keep positions aligned with the original
    return "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in css)


def _add_rule_around(css: str, pos: int, spans: dict[int, tuple[int, int]], *, in_block: bool) -> None:
    """Record the rule whose block (``in_block``) or selector list holds position ``pos``."""
    if in_block:
        start = css.rfind("{", 0, pos)
        if start < 0 or start in spans or css.find("}", start, pos) != -1:
            return  # outside any block, or a rule already read
    else:
        start = css.find("{", pos)
        if start < 0 or start in spans or css.find("}", pos, start) != -1:
            return  # the name sits inside a block (a value), not in a selector list
    end = css.find("}", start)
    if end < 0:
        return
    head = max(css.rfind("}", 0, start), css.rfind("{", 0, start), css.rfind(";", 0, start)) + 1
    spans[start] = (head, end)


def _parse_rule(css: str, head: int, end: int, start: int) -> list[tuple[str, dict[str, str]]]:
    """The simple selectors of one rule with its declarations (parsed by tinycss2)."""
    selectors = _simple_selectors(css[head:start])
    if not selectors:
        return []
    block = css[start + 1 : end]
    if len(block) > MAX_PARSED_BLOCK:  # an inlined font or image: split, do not tokenise 100 KB of base64
        decls = inline_decls(block)
    else:
        decls = {}
        for d in tinycss2.parse_blocks_contents(block, skip_comments=True, skip_whitespace=True):
            if d.type == "declaration":
                decls[d.lower_name] = tinycss2.serialize(d.value).strip().lower()
    return [(selector, decls) for selector in selectors] if decls else []


def _simple_selectors(prelude: str) -> list[str]:
    """`.a, #b, p.c, div` → those selectors; one with a combinator, attribute, pseudo-class or
    escape is skipped (the cascade is not evaluated that far)."""
    out = []
    for part in prelude.split(","):
        part = part.strip()
        if part and _SIMPLE_SELECTOR_RE.match(part) and part.lower() not in _NEVER_REMOVED:
            out.append(part.lower() if part[0] not in ".#" and "." not in part and "#" not in part else part)
    return out


def page_stylesheet(root: LexborNode) -> str:
    """The text of every <style> element of the document (head and body)."""
    return "\n".join(node.text(deep=True) for node in root.css("style"))


def drop_stylesheet_hidden(root: LexborNode, body: LexborNode) -> int:
    """Remove the elements of ``body`` that the page's own <style> rules hide; returns how many.
    One combined query walks the tree once; only an element with its own ``style`` is checked rule
    by rule (its inline declarations may show it again)."""
    css = page_stylesheet(root)
    if not css:
        return 0
    rules = stylesheet_rules(css)
    if not rules:
        return 0
    try:
        nodes = body.css(",".join(selector for selector, _ in rules))
    except Exception:  # a selector Lexbor rejects: never fail the page for it
        return 0
    removed = 0
    for node in nodes:
        style = node.attributes.get("style")
        if style:
            inline = inline_decls(style)
            if not any(node.css_matches(sel) and hiding_reason({**decls, **inline}) for sel, decls in rules):
                continue  # the element's own style shows it again
        node.decompose()
        removed += 1
    return removed


def drop_closed_details(node: LexborNode) -> None:
    """A <details> without ``open`` shows only its <summary>."""
    for child in list(node.iter(include_text=True)):
        if child.tag != "summary":
            child.decompose()
