"""Anchors' siblings: the Vanta S2 next to the Vanta S3, Python 3.10 next to 3.11. The anchors
themselves come from the question analysis (app.language.question.anchors_of)."""

from __future__ import annotations

import re

_MODEL = re.compile(r"^([a-z]*?)(\d+(?:\.\d+)*)$")  # "s3" -> ("s", "3"); "3.11" -> ("", "3.11")


def covered(term: str, passage_terms: set[str]) -> bool:
    """ "3.11" is covered by "3.11.0": versions and numbers match on a dotted prefix."""
    return term in passage_terms or (term[:1].isdigit() and any(t.startswith(term + ".") for t in passage_terms))


def _siblings(anchor: str, term: str) -> bool:
    """T7 and T9, S2 and S3, 3.10 and 3.11: the same family, another member. Years are not models."""
    a, t = _MODEL.match(anchor), _MODEL.match(term)
    if not a or not t or a.group(1) != t.group(1) or a.group(2) == t.group(2):
        return False
    if not a.group(1):  # bare numbers: only dotted versions with the same major ("3.10" vs "3.11")
        if "." not in a.group(2) or "." not in t.group(2):
            return False
        if t.group(2).startswith(a.group(2) + ".") or a.group(2).split(".")[0] != t.group(2).split(".")[0]:
            return False
    return True


def about_a_sibling(passage_terms: set[str], anchors: list[str]) -> bool:
    """The passage names a sibling of a model anchor and never the anchor itself."""
    for anchor in anchors:
        if not _MODEL.match(anchor) or covered(anchor, passage_terms):
            continue
        if any(_siblings(anchor, t) for t in passage_terms):
            return True
    return False
