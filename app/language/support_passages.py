"""Passages for the support scorer (app/language/support.py): split into sentences and reduced to
term sets once, cached by passage text (an answer's claims citing the same spans share it), with
their numbers, initials and values found on first use."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

from app.language.support_numbers import Numbers, find_numbers
from app.language.support_terms import CHUNK_TERMS, terms_of

# A variant of text.split_sentences, same splits: the abbreviation test looks at the end of the
# head only (the original searches the whole head at every candidate boundary).
_ABBREV = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|cf|Mr|Mrs|Ms|Dr|Prof|Inc|Ltd|Jr|Sr|St|No|Fig|approx|Jan|Feb|Mar|"
    r"Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|U\.S)|\b[A-Z])\.$"
)
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|(?<=\][.!?])\s+(?=\S)")


_BOUNDARY_FAST = re.compile(r"[.!?][\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")  # _BOUNDARY without "]" in the block
# whitespace other than " " and "\n" (what str.split() also splits on); with "  " this means a block
# needs the collapse the original does
_ODD_SPACE = re.compile("[\t\r\x0b\x0c\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


def _split_sentences(text: str) -> list[str]:
    out: list[str] = []
    odd = "  " in text or _ODD_SPACE.search(text) is not None
    for block in text.split("\n"):
        if not block:
            continue
        block = " ".join(block.split()) if odd else block.strip()
        if not block:
            continue
        if "." not in block and "!" not in block and "?" not in block:
            out.append(block)
            continue
        start = 0
        fast = "]" not in block
        for m in (_BOUNDARY_FAST if fast else _BOUNDARY).finditer(block):
            end = m.start() + 1 if fast else m.start()
            tail = block[max(start, end - 16) : end]
            a = _ABBREV.search(tail)
            if a and (a.start() > 0 or end - start <= 16):
                continue
            head = block[start:end].strip()
            if head:
                out.append(head)
            start = m.end()
        rest = block[start:].strip()
        if rest:
            out.append(rest)
    return out


@dataclass(slots=True)
class Sentence:
    text: str
    terms: frozenset[str]


class Passage:
    __slots__ = ("text", "sentences", "terms", "_numbers", "_initials", "_values", "_sorted")

    def __init__(self, text: str):
        self.text = text
        sents = _split_sentences(text)
        # one pass over the passage's words; each sentence is a run of them (the splitter cuts at
        # whitespace and joins with single spaces), else per sentence
        per_chunk = list(map(CHUNK_TERMS.__getitem__, text.lower().split()))
        counts = [x.count(" ") + 1 for x in sents]
        if sum(counts) == len(per_chunk):
            self.sentences = []
            a = 0
            for x, k in zip(sents, counts):
                self.sentences.append(Sentence(x, frozenset(chain.from_iterable(per_chunk[a : a + k]))))
                a += k
        else:
            self.sentences = [Sentence(x, terms_of(x)) for x in sents]
        self.terms = frozenset().union(*(s.terms for s in self.sentences)) if self.sentences else frozenset()
        self._numbers: Numbers | None = None
        self._initials: str | None = None
        self._values: tuple | None = None
        self._sorted: list[str] | None = None

    @property
    def sorted_terms(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(self.terms)
        return self._sorted

    @property
    def numbers(self) -> Numbers:
        if self._numbers is None:
            self._numbers = find_numbers(self.text)
        return self._numbers

    @property
    def initials(self) -> str:
        """First letters of the passage's words ("initial public offering" -> "ipo"), for acronyms."""
        if self._initials is None:
            self._initials = " ".join("".join(w[0] for w in _LETTERS.findall(s.text.lower())) for s in self.sentences)
        return self._initials

    def values(self, mod) -> tuple:
        if self._values is None:
            self._values = tuple(mod.find_values(self.text))
        return self._values


_LETTERS = re.compile(r"[a-z]+")


@lru_cache(maxsize=256)  # ~18 KB per 1,000 characters of passage
def read_passage(text: str) -> Passage:
    return Passage(text)
