"""Tokens and content terms for the support scorer (app/language/support.py): a claim's or a
passage's words reduced to stems, stop words, negations and hedges left out, irregular forms and a
few synonyms met on one term, numbers normalised ("1,200" -> "1200")."""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain

from app.language.text import STOP_WORDS, stem

# numbers kept whole ("27,934.02"), words ("didn't", "co-founder", "u.s"), clause punctuation
TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[a-z0-9]+(?:[._'-][a-z0-9]+)*|[,;:()\"\u201c\u201d\u2014\u2013]", re.I)
PUNCT = frozenset(',;:()"\u201c\u201d\u2014\u2013')
CLAUSE_PUNCT = PUNCT  # quotes too: a quotation is a clause of its own


def norm_apostrophes(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u2018", "'")


# words that open a new clause: negation and antonyms do not reach across them
CLAUSE_WORDS = frozenset(
    "and but while whereas although though which who whom whose that because "
    "when where after before if unless until so however despite".split()
)
NEG_WORDS = frozenset("not no never neither nor without cannot none nobody nothing nowhere".split())
NEG_VERBS = frozenset("deny denies denied denying".split())
NEG_BEFORE_TO = frozenset(
    "fail fails failed failing decline declines declined declining refuse refuses refused refusing yet".split()
)  # "failed to", "yet to"
UN_BASE = {
    "unlikely": "likely",
    "unclear": "clear",
    "unable": "able",
    "unaware": "aware",
    "unknown": "known",
    "undisclosed": "disclosed",
    "unsuccessful": "successful",
    "unwilling": "willing",
    "impossible": "possible",
    "unavailable": "available",
}
NOT_NEGATING_NEXT = frozenset(("only", "just", "least", "merely", "doubt"))  # "not only", "no doubt"
ADVERBS = frozenset(
    "yet even ever always necessarily completely entirely quite really directly immediately longer".split()
)  # skipped when finding what a negation attaches to
_HEDGES = frozenset("roughly approximately nearly almost around about some".split())

# Irregular forms the suffix stripper cannot meet ("thought" / "think").
_IRREGULAR = {
    "thought": "think",
    "said": "say",
    "says": "say",
    "made": "make",
    "took": "take",
    "taken": "take",
    "gave": "give",
    "given": "give",
    "told": "tell",
    "found": "find",
    "saw": "see",
    "seen": "see",
    "held": "hold",
    "left": "leave",
    "sold": "sell",
    "bought": "buy",
    "won": "win",
    "lost": "lose",
    "paid": "pay",
    "kept": "keep",
    "brought": "bring",
    "began": "begin",
    "begun": "begin",
    "went": "go",
    "gone": "go",
    "grew": "grow",
    "grown": "grow",
    "rose": "rise",
    "risen": "rise",
    "fell": "fall",
    "fallen": "fall",
    "sank": "sink",
    "sunk": "sink",
    "met": "meet",
    "spent": "spend",
    "sent": "send",
    "built": "build",
    "struck": "strike",
    "led": "lead",
    "chose": "choose",
    "chosen": "choose",
    "wrote": "write",
    "written": "write",
    "ran": "run",
    "knew": "know",
    "known": "know",
    "children": "child",
    "men": "man",
    "women": "woman",
    "people": "person",
    "better": "good",
    "best": "good",
}

# Words a sentence and its paraphrase use interchangeably, met on one canonical term (a variant of
# text._CANON, which is private to that module): surface words, stemmed at import.
_SYNONYMS = [
    "cost costs price prices priced pricing fee fees charge charges charged",
    "launch launched launches release released releases ship shipped publish published",
    "win wins won winner victory victor beat beats defeated",
    "buy buys bought purchase purchased purchases acquire acquired acquires",
    "sack sacked fired dismiss dismissed",
    "employee employees staff worker workers",
    "job jobs",
]
_CANON: dict[str, str] = {}
for _group in _SYNONYMS:
    _ws = _group.split()
    for _w in _ws:
        _CANON.setdefault(_IRREGULAR.get(_w) or stem(_w), _IRREGULAR.get(_ws[0]) or stem(_ws[0]))


def _word_term(w: str) -> str:
    t = _IRREGULAR.get(w) or stem(w)
    return _CANON.get(t, t)


UN_WORDS = {k: _word_term(v) for k, v in UN_BASE.items()}


@lru_cache(maxsize=65536)
def token_terms(tok: str) -> tuple[str, ...]:
    """The content terms of one lower-case token: () for stop words, negations and punctuation;
    a hyphenated word also yields its parts ("1,900-mile-wide" meets "mile" and "wide")."""
    if tok[0].isdigit():
        return (norm_number(tok),)
    if tok in PUNCT or tok in STOP_WORDS or tok in NEG_WORDS or tok in _HEDGES or len(tok) < 2 or tok.endswith("n't"):
        return ()
    if tok in UN_WORDS:
        return (UN_WORDS[tok],)
    if "'" in tok:
        tok = tok.replace("'s", "").replace("'", "")
        if len(tok) < 2:
            return ()
    out = [_word_term(tok)]
    if "-" in tok:
        for part in tok.split("-"):
            if len(part) > 1 and part not in STOP_WORDS:
                out.append(part if part[0].isdigit() else _word_term(part))
    return tuple(out)


def norm_number(tok: str) -> str:
    """'1,200' -> '1200', '4.0' -> '4', '0.90' -> '0.9', '0100' -> '100'."""
    n = tok.replace(",", "")
    if "." in n:
        n = n.rstrip("0").rstrip(".")
    whole, dot, frac = n.partition(".")
    return (whole.lstrip("0") or "0") + dot + frac


class _ChunkTerms(dict):
    """A whitespace-separated lower-case chunk ("(nyag)", "investigating,", "didn’t") -> its content
    terms as TOKEN and token_terms find them; a dict with __missing__ so that a hit is one C-level lookup
    (this runs on every passage word)."""

    def __missing__(self, chunk: str) -> tuple[str, ...]:
        if len(self) > 200_000:
            self.clear()
        out = tuple(chain.from_iterable(map(token_terms, TOKEN.findall(norm_apostrophes(chunk)))))
        self[chunk] = out
        return out


CHUNK_TERMS = _ChunkTerms()


def terms_of(text: str) -> frozenset[str]:
    """The content terms of a text."""
    return frozenset(chain.from_iterable(map(CHUNK_TERMS.__getitem__, text.lower().split())))
