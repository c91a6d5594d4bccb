"""Line-level rules for page furniture: text that is boilerplate wherever it sits on a page.

Bylines, datelines, photo credits, copyright and sign-up prompts; headings that open a list of
*other* content ("Most popular", "Related"); the page title repeated at the top of the article.
All general: no site names, no page ids.
"""

from __future__ import annotations

import re

from app.domain.types import TextBlock
from app.extract.text_clean import strip_invisible

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

# A short heading-like line that opens a list of *other* content: the article ended above it.
OTHER_CONTENT_RE = re.compile(
    r"^(?:most popular|most read|popular|trending|related|more from|more on|more stories|more news"
    r"|recommended|you may also like|you might also like|read more|read next|what to read next"
    r"|don'?t miss|latest news|latest stories|top stories|also read|tell us what you think"
    r"|comments?|leave a (?:comment|reply)|join the conversation|share this)\b",
    re.I,
)
OTHER_CONTENT_MAX_CHARS = 40


def opens_other_content(text: str) -> bool:
    """A short line such as "Most popular" or "Related": what follows it is not the article."""
    return len(text) <= OTHER_CONTENT_MAX_CHARS and bool(OTHER_CONTENT_RE.search(text))


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


def drop_title_repeat(blocks: list[TextBlock], title: str) -> list[TextBlock]:
    """The page title repeated as a heading at the top is not body text, nor are the short
    kicker/dateline lines above it."""
    out = [TextBlock(kind=b.kind, text=strip_invisible(b.text), level=b.level) for b in blocks]
    out = [b for b in out if b.text]
    low = title.lower()
    for i, b in enumerate(out[:TITLE_LOOKAHEAD]):
        if b.kind == "heading" and (b.level == 1 or (low and b.text.lower() in low)):
            if all(len(x.text) <= KICKER_MAX_CHARS for x in out[:i]):
                return out[i + 1 :]
            return out[:i] + out[i + 1 :]
    return out
