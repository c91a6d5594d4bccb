"""User text -> safe FTS5 MATCH expressions.

Every term is emitted as a double-quoted FTS5 string built only from letters and digits, so no user
text (quotes, brackets, AND/OR/NOT/NEAR, column filters, '*', '^') can reach the FTS5 parser as
syntax. Dotted or hyphenated words ("3.11", "asyncio.TaskGroup") become phrases, which match the
same words adjacent in the indexed text, where the tokenizer also split them.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

MAX_TERMS = 12

# Words that carry no topic in a question. Short on purpose: domain words ("new", "release",
# "python") stay, bm25 weighs them.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves tell explain please
    know want get got use used using s t d ll m re ve
    """.split()
)

_WORD = re.compile(r"[^\W_]+(?:[.\-'][^\W_]+)*")  # words, keeping "3.11" / "what's" together
_PART = re.compile(r"[^\W_]+")


@dataclass(slots=True)
class ParsedQuery:
    terms: list[str]  # each an FTS5 string literal: "tomllib" or "3 11"

    @property
    def empty(self) -> bool:
        return not self.terms

    def all_of(self) -> str:
        return " AND ".join(self.terms)

    def any_of(self) -> str:
        return " OR ".join(self.terms)


def parse_query(text: str) -> ParsedQuery:
    normal = unicodedata.normalize("NFKC", text or "").replace("\u2019", "'").lower()
    kept: list[str] = []
    fallback: list[str] = []  # used only when every word is a stop word ("what is it?")
    for match in _WORD.finditer(normal):
        parts = _PART.findall(match.group(0))
        if "'" in match.group(0):  # "what's" -> "what"; "python's" -> "python"
            parts = parts[:1]
        topical = [p for p in parts if p not in STOP_WORDS and (len(p) > 1 or p.isdigit())]
        literal = '"' + " ".join(parts) + '"'
        bucket = kept if topical else fallback
        if literal not in bucket:
            bucket.append(literal)
    terms = kept or fallback
    return ParsedQuery(terms=terms[:MAX_TERMS])
