"""Which query terms a corpus passage holds, computed in Python the way the FTS5 index tokenizes
(`porter unicode61 remove_diacritics 2`), for the heading and body coverage bonuses of the ranking.

Asking FTS5 instead (one `MATCH 'body : term' AND rowid IN (...)` per term and column) reads each
term's whole doclist: on the sample corpus that was half of a search's time (~17 of ~32 ms a query on
the OR path), for ~70 candidate passages whose text is a few KB. Here: tokens are runs of letters and
digits, case-folded, diacritics removed; ASCII tokens longer than two characters get the Porter stem
of Martin Porter's C implementation (which SQLite follows). tests/corpus/test_coverage.py checks the
tally against FTS5's own on the sample corpus; the stems agree on 99.9 % of indexed fields.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer
from app.memo import short_input_cache

_TOKEN = re.compile(r"[^\W_]+")
_STEMMER = Stemmer.Stemmer("porter")


def _combining_marks() -> re.Pattern[str]:
    """A class of the Basic Multilingual Plane's combining marks (built once: ~30 ms), so that
    removing diacritics after NFD runs in the regex engine, not a Python loop over characters."""
    ranges: list[tuple[int, int]] = []
    for i in range(0x10000):
        if unicodedata.combining(chr(i)):
            if ranges and ranges[-1][1] == i - 1:
                ranges[-1] = (ranges[-1][0], i)
            else:
                ranges.append((i, i))
    return re.compile("[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges) + "]")


_COMBINING = _combining_marks()


# Stems of tokens up to STEM_CACHE_CHARS are remembered (words recur; a 10 KB "word" of base64 does
# not): 65,536 entries of at most 40 ASCII characters keep the memo within ~10 MiB.
STEM_CACHE_SIZE = 65536
STEM_CACHE_CHARS = 40


def fts_stem(token: str) -> str:
    """The porter tokenizer's stem of one case-folded token."""
    if len(token) <= 2 or not token.isascii():
        return token
    return _stem(token)


@short_input_cache(STEM_CACHE_SIZE, STEM_CACHE_CHARS)
def _stem(token: str) -> str:
    stem = _STEMMER.stemWord(token)
    # Porter's C implementation departs from the published algorithm (which Snowball's "porter"
    # follows) in step 2: BLI -> BLE instead of ABLI -> ABLE, and an added LOGI -> LOG.
    if (stem.endswith("bli") and len(stem) > 4) or (stem.endswith("logi") and len(stem) > 5):
        stem = stem[:-1]
    return stem


def fts_tokens(text: str) -> str:
    """The text's stemmed tokens, space-joined with a space at each end (phrase search by `in`)."""
    folded = text.casefold()
    if not folded.isascii():
        folded = _COMBINING.sub("", unicodedata.normalize("NFD", folded))
    return " " + " ".join(map(fts_stem, _TOKEN.findall(folded))) + " "


def query_phrases(terms: list[str]) -> list[str]:
    """parse_query's FTS5 string literals ('"3 11"') as stemmed phrases to look for in fts_tokens."""
    return [fts_tokens(term.strip('"')) for term in terms]


def held(phrases: list[str], *fields: str) -> int:
    """How many of the phrases occur within one of the fields (each from fts_tokens)."""
    # Fields never hold NUL (fts_tokens keeps word characters): joined by one, no phrase spans two.
    # map/filter keep the loop in C: this runs for every candidate passage of every corpus query.
    text = fields[0] if len(fields) == 1 else "\x00".join(fields)
    return sum(map(text.__contains__, filter(str.strip, phrases)))
