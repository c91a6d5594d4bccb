"""Route: does this request need evidence from search?

Heuristics first (cheap, testable). Text-transformation requests over text given in the messages
and small talk go straight to the composing model; everything else is grounded.
"""

from __future__ import annotations

import re

from app.domain.types import Route
from app.language.question import analyse

MIN_GIVEN_TEXT_CHARS = 40  # "translate this: <text>" needs text to work on; shorter is a question

_TRANSFORM = re.compile(
    r"^\s*(please\s+)?(summari[sz]e|translate|rewrite|rephrase|paraphrase|proofread|correct|fix|refactor|"
    r"reformat|format|convert|shorten|simplify|turn)\b",
    re.I,
)
_SMALL_TALK = re.compile(r"^\s*(hi|hello|hey|thanks|thank you|good (morning|evening|night)|ok|okay)\W*$", re.I)
_ARITHMETIC = re.compile(r"^[\s\d+\-*/().^%=?x]+$|^\s*what\s+is\s+[\d\s+\-*/().^%]+\??\s*$", re.I)


def is_time_sensitive(question: str) -> bool:
    return analyse(question).time_sensitive


def route_request(question: str, mode: str, *, given_text_chars: int, llm_available: bool) -> Route:
    """`given_text_chars`: how much text the user supplied besides the instruction itself."""
    if mode == "always":
        return Route(True, "mode_always", by="request")
    if mode == "never":
        return Route(False, "mode_never", by="request")
    if not llm_available:
        # Without a model nothing can answer ungrounded: search is the only way to answer.
        return Route(True, "no_model_for_ungrounded")
    if _SMALL_TALK.match(question):
        return Route(False, "small_talk")
    if _ARITHMETIC.match(question):
        return Route(False, "arithmetic")
    if _TRANSFORM.match(question) and given_text_chars >= MIN_GIVEN_TEXT_CHARS:
        return Route(False, "text_transformation")
    return Route(True, "time_sensitive" if is_time_sensitive(question) else "default_grounded")
