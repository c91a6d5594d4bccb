"""Choosing the article among the elements of a page tree (see html_blocks for the tree).

1. Every block gets a value (non-link characters of real text; negative for link lists and
   fragments) that is added to each ancestor while climbing to the root -- and subtracted above
   an element with a negative class/id hint, so a comment section weighs against its wrapper.
2. The best-weighted element wins; if the heading that repeats the page title sits elsewhere and
   its region holds a candidate at least half as good, that candidate wins (the article is near
   its headline).
3. Siblings of the winner that score well on their own join it (an article split by ad slots).
4. Inside, blocks are dropped when link-heavy, furniture, under a negative element, inside a
   container that is mostly links (teaser grids), or after an "other content" heading.
"""

from __future__ import annotations

from app.extract.html_blocks import PageTree, RawBlock
from app.extract.html_furniture import is_furniture, opens_other_content

LINK_HEAVY = 0.5  # a block (or, inside the article, a container) with more link text than this
TITLE_SHARE = 0.5  # a candidate near the title heading wins with this share of the best score
TITLE_UP = 4  # the title's region: this many levels above the heading
SIBLING_SHARE = 0.2  # a sibling joins the winner with this share of its score ...
SIBLING_MIN = 100.0  # ... and at least this much


def block_value(block: RawBlock) -> float:
    """How much a block argues for an element holding it (no negative hint between) being the article."""
    size = len(block.text)
    link_density = block.link_chars / size if size else 1.0
    if link_density > LINK_HEAVY:
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
    rival = -1  # the overall best, when the title's region overrules it
    near = _near_title(tree, title)
    if near is not None:
        lo, hi = near
        alt = max(range(lo, hi + 1), key=weighted.__getitem__)
        if alt != best and weighted[alt] >= TITLE_SHARE * weighted[best]:
            best, rival = alt, best
    if score[best] <= 0:
        return []
    siblings = [s for s in _strong_siblings(tree, score, best) if not s[0] <= rival <= s[1]]
    spans = [(best, tree.end[best])] + siblings
    tree.rival_share = _rival_share(tree, weighted, best, spans)
    inside: list[tuple[RawBlock, int, bool]] = []
    for b in tree.blocks:
        for root, end in spans:
            if root <= b.owner <= end:
                inside.append((b, root, _keep(b, tree, root)))
                break
    return _cut_other_content(tree, _drop_link_containers(tree, inside))


def _rival_share(tree: PageTree, weighted: list[float], best: int, spans: list[tuple[int, int]]) -> float:
    """The best-weighted element outside the selection (neither an ancestor of the winner nor inside
    a kept span) as a share of the winner: near 0 is a clear choice, near 1 (or above, after the
    title region overruled the best) a close call between two parts of the page."""
    top = weighted[best]
    if top <= 0:
        return 0.0
    weighted = weighted[:]
    node = tree.parent[best]
    while node >= 0:
        weighted[node] = 0.0
        node = tree.parent[node]
    rival, start = 0.0, 0
    for lo, hi in sorted(spans):
        if lo > start:
            rival = max(rival, max(weighted[start:lo]))
        start = max(start, hi + 1)
    if start < len(weighted):
        rival = max(rival, max(weighted[start:]))
    return rival / top


def _cut_other_content(tree: PageTree, blocks: list[RawBlock]) -> list[RawBlock]:
    """Drop an "other content" heading and what follows it inside the heading's container."""
    out: list[RawBlock] = []
    stop_end = -1
    for b in blocks:
        if b.owner <= stop_end:
            continue
        if opens_other_content(b.text):
            stop_end = tree.end[tree.parent[b.owner]]
            continue
        out.append(b)
    return out


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
            if links[node] > LINK_HEAVY * chars[node]:
                ok = False
                break
            node = parent[node]
        if ok:
            out.append(b)
    return out


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


def _keep(block: RawBlock, tree: PageTree, winner: int) -> bool:
    """Drop boilerplate inside the article: link lists, furniture lines, blocks under a negative element."""
    size = len(block.text)
    if not size or block.link_chars / size > LINK_HEAVY or is_furniture(block.text):
        return False
    protected, node = False, block.owner
    while node > winner:
        h = tree.hint[node]
        if h == -2 or (h == -1 and not protected):
            return False
        protected = protected or h > 0
        node = tree.parent[node]
    return True
