"""Time sensitivity, defined once: which class of freshness a question needs, and the evidence
window each class allows. The router, planner, gate and caches read these, never their own lists."""

from __future__ import annotations

import enum
import re


class TimeClass(str, enum.Enum):
    live = "live"  # changes day to day: prices, status, scores, "today"
    news = "news"  # recent events: "latest", "this week", announcements
    dated = "dated"  # asks for what is current, without being live ("current CEO", "upcoming")
    stable = "stable"  # reference knowledge: age matters little


# Evidence window (days) per class when the request sets none.
WINDOW_DAYS = {TimeClass.live: 30, TimeClass.news: 90, TimeClass.dated: 730, TimeClass.stable: 3650}

_LIVE = re.compile(
    r"\b(prices?|pricing|costs?|stock|status|today|now|tonight|weather|score|rates?|fees?|"
    r"current(?:ly)? (?:price|cost|rate|fee|status|score))\b",
    re.I,
)
_NEWS = re.compile(r"\b(news|latest|newest|recent(?:ly)?|this (?:week|month|year)|announce[sd]?)\b", re.I)
_DATED = re.compile(r"\b(current(?:ly)?|upcoming|as of|schedule|nowadays)\b", re.I)


def time_class(question: str) -> TimeClass:
    if _LIVE.search(question):
        return TimeClass.live
    if _NEWS.search(question):
        return TimeClass.news
    if _DATED.search(question):
        return TimeClass.dated
    return TimeClass.stable


def default_window(cls: TimeClass, fallback: int) -> int:
    """The evidence window for a question whose request set none; `fallback` caps dated questions."""
    return min(fallback, WINDOW_DAYS[cls]) if cls is TimeClass.dated else WINDOW_DAYS[cls]
