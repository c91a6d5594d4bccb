"""Media queries, evaluated the way a visitor's browser would at two reference viewports.

A rule inside ``@media`` hides text from a visitor only if its query holds on that visitor's screen.
The hidden-text filter (app/extract/hidden.py) removes an element only when a sighted visitor would
not see it on a phone *and* on a laptop, so it asks this module whether a query holds at each of
REFERENCE_VIEWPORTS. The grammar is Media Queries level 4 as pages use it: comma lists, ``only`` /
``not``, media types, ``and``, ``(min-|max-)width|height``, ``orientation`` and the range syntax
(``width >= 600px``, ``400px <= width <= 700px``). A feature this module cannot judge
(``prefers-color-scheme``, ``hover``, ``resolution``, ...) makes its query not apply: the rule is
then ignored, which keeps text — the same side the filter takes with every rule it cannot read.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass

# One phone held upright and one laptop screen, both "screen" media, in CSS pixels.
REFERENCE_VIEWPORTS: tuple[tuple[int, int], ...] = ((375, 667), (1280, 800))
_PX_PER = {"px": 1.0, "em": 16.0, "rem": 16.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 37.8, "mm": 3.78}
_LENGTH_RE = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))\s*([a-z]*)$")
_RANGE_RE = re.compile(r"^(?:(\S+)\s*(<=|<|>=|>|=)\s*)?(width|height)(?:\s*(<=|<|>=|>|=)\s*(\S+))?$")
_FEATURE_RE = re.compile(r"^\(\s*([a-z-]+)\s*(?::\s*([^()]+?))?\s*\)$|^\(\s*([^():]+?)\s*\)$")
_ALWAYS_TYPES = frozenset({"all", "screen"})
_SCREEN_NEVER_TYPES = frozenset(
    {"print", "speech", "tty", "tv", "projection", "handheld", "braille", "embossed", "aural"}
)
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "=": operator.eq}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}


@dataclass(frozen=True)
class Viewport:
    width: float
    height: float


def _px(value: str) -> float | None:
    m = _LENGTH_RE.match(value.strip().lower())
    if not m:
        return None
    number, unit = float(m.group(1)), m.group(2)
    if unit == "" and number == 0:
        return 0.0
    per = _PX_PER.get(unit)
    return None if per is None else number * per


def _compare(a: float, op: str, b: float) -> bool:
    return _OPS[op](a, b)


def _feature(expr: str, vp: Viewport) -> bool | None:
    """One parenthesised feature at this viewport; None when it cannot be judged."""
    m = _FEATURE_RE.match(expr.strip())
    if not m:
        return None
    if m.group(3) is not None:  # range syntax
        r = _RANGE_RE.match(" ".join(m.group(3).split()))
        if not r or not (r.group(2) or r.group(4)):
            return None
        size = vp.width if r.group(3) == "width" else vp.height
        ok = True
        if r.group(2):  # "600px <= width": width >= 600px
            bound = _px(r.group(1))
            if bound is None:
                return None
            ok = ok and _compare(size, _FLIP[r.group(2)], bound)
        if r.group(4):
            bound = _px(r.group(5))
            if bound is None:
                return None
            ok = ok and _compare(size, r.group(4), bound)
        return ok
    name, value = m.group(1), (m.group(2) or "").strip().lower()
    if name == "orientation":
        if value not in ("portrait", "landscape"):
            return None
        return (value == "portrait") == (vp.height >= vp.width)
    for prefix, op in (("min-", ">="), ("max-", "<="), ("", "=")):
        if name.startswith(prefix) and name[len(prefix) :] in ("width", "height"):
            bound = _px(value) if value else None
            if bound is None:
                return None
            size = vp.width if name.endswith("width") else vp.height
            return _compare(size, op, bound)
    return None


def _query(query: str, vp: Viewport) -> bool | None:
    """One query of a comma list (``not screen and (max-width: 600px)``)."""
    words = query.strip().lower()
    negate = False
    if words.startswith("only "):
        words = words[5:]
    elif words.startswith("not "):
        negate, words = True, words[4:]
    result = True
    for part in re.split(r"\s+and\s+", words.strip()):
        part = part.strip()
        if not part:
            return None
        if part.startswith("("):
            got = _feature(part, vp)
        elif part in _ALWAYS_TYPES:
            got = True
        elif part in _SCREEN_NEVER_TYPES:
            got = False
        else:
            return None
        if got is None:
            return None
        result = result and got
    return result != negate


def media_applies(prelude: str, vp: Viewport) -> bool:
    """Does ``@media <prelude>`` hold at this viewport? A query that cannot be judged does not."""
    if prelude.count("(") != prelude.count(")"):
        return False
    return any(_query(q, vp) is True for q in _split_queries(prelude) if q.strip())


def _split_queries(prelude: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, ch in enumerate(prelude):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(prelude[start:i])
            start = i + 1
    out.append(prelude[start:])
    return out


VIEWPORTS = tuple(Viewport(w, h) for w, h in REFERENCE_VIEWPORTS)
