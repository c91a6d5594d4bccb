"""Small text helpers shared by stages: word terms, sentence splitting, URL stripping."""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import islice

from app.memo import short_input_cache

STOP_WORDS = frozenset(
    """a an the and or but if then else of to in on at by for with from into onto over under about
    as is are was were be been being am do does did done doing have has had having it its it's this
    that these those there here what which who whom whose when where why how can could should would
    may might must shall will i me my we our you your he him his she her they them their not no yes
    so than too very just also any all some each every more most other such only own same few both
    s t don now please tell explain give show find know let get got want need like one new much many
    current currently latest today recent recently newest nowadays
    """.split()
)

# A year, as questions and pages write it (1500-2999): the one definition every stage uses.
YEAR = re.compile(r"\b(?:1[5-9]|2\d)\d\d\b")
_WORD = re.compile(r"[a-z0-9]+(?:[._'-][a-z0-9]+)*", re.I)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")


def well_formed(text: str) -> str:
    """The text with unpaired surrogates replaced by U+FFFD: JSON may carry "\\ud800", which no UTF-8
    encoder (orjson, redis, httpx) accepts. Upstream text is passed through this where it enters."""
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


_SURROGATE = re.compile("[\ud800-\udfff]")  # a str holds no valid pairs: any surrogate is unpaired


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def first_words(text: str, limit: int) -> list[str]:
    """words(text)[:limit] without tokenising the rest of a long text."""
    return [m.group().lower() for m in islice(_WORD.finditer(text), limit)]


def stem(word: str) -> str:
    """A crude suffix stripper: enough to meet 'release'/'released'/'releases', 'page'/'pages'."""
    if word[-1:].isdigit() or len(word) <= 4:
        return word
    for suffix in ("ing", "ed", "es", "s"):
        if suffix == "s" and word.endswith("ss"):
            continue  # class, process: not plurals
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


# Words a question and its answer use interchangeably, met on one canonical term.
_CANON = {
    "cost": "pric",
    "pricing": "pric",
    "priced": "pric",
    "pric": "pric",
    "fee": "pric",
    "fees": "pric",
    "charg": "pric",
    "launch": "releas",
    "shipp": "releas",
    "ship": "releas",
    "releas": "releas",
    "publish": "releas",
    "won": "win",
    "winner": "win",
    "victor": "win",
}


@lru_cache(maxsize=65536)
def _word_terms(w: str) -> tuple[str, ...]:
    if w.endswith("'s") and w not in STOP_WORDS:
        w = w[:-2]  # a possessive names its owner: "Microsoft's" meets "Microsoft" (stemming left "microsoft'")
    if w in STOP_WORDS or len(w) < 2:
        return ()
    t = stem(w)
    out = [_CANON.get(t, t)]
    if "." in w and not w[0].isdigit():
        # "pathlib.path.readlink" also matches "pathlib" and "readlink".
        out.extend(stem(part) for part in w.split(".") if len(part) > 1 and part not in STOP_WORDS)
    return tuple(out)


def terms(text: str) -> list[str]:
    """Content terms: lower-cased, stop words dropped, crudely stemmed, synonyms met."""
    return list(_sentence_terms(text))


# Sentences recur across requests (the same evidence passages answer many questions) and are
# tokenised by several stages: terms of texts up to TERMS_CACHE_CHARS are remembered.
TERMS_CACHE_SIZE = 8192
TERMS_CACHE_CHARS = 400


@short_input_cache(TERMS_CACHE_SIZE, TERMS_CACHE_CHARS)
def _sentence_terms(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for w in words(text):
        out.extend(_word_terms(w))
    return tuple(out)


def numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


# Sentence ends: ., ! or ? followed by space/close-quote and an upper-case letter, digit or quote,
# but not after a common abbreviation or an initial.
_ABBREV = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|cf|Mr|Mrs|Ms|Dr|Prof|Inc|Ltd|Jr|Sr|St|No|Fig|approx|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|U\.S)|\b[A-Z])\.$"
)
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|(?<=\][.!?])\s+(?=\S)")


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences; newlines between blocks always split."""
    out: list[str] = []
    for block in text.split("\n"):  # lines are blocks (paragraphs, list items): never one sentence
        block = " ".join(block.split())
        if not block:
            continue
        start = 0
        for m in _BOUNDARY.finditer(block):
            head = block[start : m.start()]
            if _ABBREV.search(head):
                continue
            if head.strip():
                out.append(head.strip())
            start = m.end()
        tail = block[start:].strip()
        if tail:
            out.append(tail)
    return out


_MD_LINK = re.compile(r"!?\[([^\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))+\)")
_URL = re.compile(
    r"(?:https?://|www\.)[^\s<>()\[\]\"']*[^\s<>()\[\]\"'.,;:!?]"
    r"|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/(?:[^\s<>()\[\]\"']*[^\s<>()\[\]\"'.,;:!?])?",
    re.I,
)  # also a bare host/path; trailing punctuation stays with the sentence
_ANGLE_URL = re.compile(r"<(?:https?://)[^>\s]+>", re.I)


# Citation markers of an answer ([1], [2, 3], [1-2], [S4]): they point at that answer's sources.
_CITATION_MARKERS = re.compile(r"\s*\[(?:S?\d+(?:\s*[,\u2013-]\s*S?\d+)*)\]")


def strip_markers(text: str) -> str:
    """An earlier answer without its citation markers (they must never become evidence or queries)."""
    return _CITATION_MARKERS.sub("", text)


def strip_links(text: str) -> tuple[str, int]:
    """Remove markdown links (keeping their text) and bare URLs. Returns (text, removed count)."""
    count = 0

    def _link(m: re.Match) -> str:
        nonlocal count
        count += 1
        return m.group(1)

    text = _MD_LINK.sub(_link, text)
    text, n1 = _ANGLE_URL.subn("", text)
    text, n2 = _URL.subn("", text)
    count += n1 + n2
    if count:
        text = re.sub(r"\(\s*\)", "", text)
        text = re.sub(r"[ \t]{2,}", " ", text)
        text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    return text, count
