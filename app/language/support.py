"""Lexical support of a claim by the passages it cites: overlap, polarity, reversals, numbers.

`LexicalSupport().score(claim, passages)` returns a `SupportScore`: a 0..1 score (>= the threshold,
0.6 by default, means supported); whether the verdict is decisive (no judge needed) or in the gray
band around the threshold; the passage sentence(s) that best support the claim; and the reasons
it was marked down. The checks, in order of authority:

* numbers: every number in the claim must be in the passages ("1,200" = "1200", "$410m" = "$410
  million", "4.0%" = "4%", "2-1" as a whole), and a number bound to a noun ("12 rebounds") must not
  be one the passages give another number for ("11 rebounds"). A miss is decisive-unsupported.
  app.language.values, when present, is a second opinion for forms the digits miss.
* negation: polarity (not/no/never/n't/without/neither/nor/no longer/failed to/declined to/refused
  to/denied/yet to/ruled out/unlikely/unclear...) is compared term by term on the best-matching
  sentence window. A negation covers up to 4 content words after it and 3 before, within its own
  clause (clauses split at punctuation, conjunctions and relative pronouns) and short of the next
  negation; it is checked on the first word after it that the other side also has and uses one
  way only ("did not *indicate* the crash was caused" checks "indicate", not "crash"), or, when
  nothing follows it in its clause, on the words before it ("the hypothesis is not that ...").
  Differing polarity is decisive-unsupported. (Scope choices were measured on the dev split of
  eval/labelled/support.jsonl; bench/support.py also scores ~4,900 real news sentences against
  themselves verbatim, negated and reversed.)
* antonyms: a short list of opposite predicates (rise/fall, win/lose, approve/reject, ...). A claim
  clause using one side where the passage clause about the same words uses the other, at the same
  polarity ("did not rise" agrees with "fell"), is decisive-unsupported.
* overlap: the share of the claim's content terms in the best window (one sentence or two adjacent
  ones) and in the passages as a whole. Near-verbatim support (one sentence with >= 85% of the
  terms, every term and name present) is decisive-supported; anything else is capped inside the
  gray band for a judge, or falls below it. A name or number of the claim missing from the
  passages (or a number away from the matched sentence) keeps the score under the threshold.

Work per call: passages are split and reduced to term sets once (cached by passage text, so an
answer's claims citing the same spans share it); the full analysis (negation scopes, clauses,
antonym marks) runs only on the chosen window's sentences (cached by sentence).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate, chain
from typing import Protocol, runtime_checkable

from app.language.text import STOP_WORDS, stem

__all__ = ["SupportScore", "SupportScorer", "LexicalSupport", "strip_attribution"]


@dataclass(slots=True)
class SupportScore:
    score: float  # 0..1, calibrated-ish: >= 0.6 (the default threshold) means supported
    decisive: bool  # True when the lexical verdict is confident either way (no judge needed)
    quote: str  # the passage sentence (or two adjacent sentences) that best supports the claim
    reasons: list[str] = field(default_factory=list)  # "negation_mismatch:x", "number_missing:410"...


@runtime_checkable
class SupportScorer(Protocol):
    name: str

    def score(self, claim: str, passages: list[str]) -> SupportScore: ...


# --- tokens and terms -------------------------------------------------------------------------

_ATTRIBUTION = re.compile(r"^\s*according to [\w.-]+ \([^)]{0,40}\),\s*", re.I)
# numbers kept whole ("27,934.02"), words ("didn't", "co-founder", "u.s"), clause punctuation
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[a-z0-9]+(?:[._'-][a-z0-9]+)*|[,;:()\"\u201c\u201d\u2014\u2013]", re.I)
_PUNCT = frozenset(',;:()"\u201c\u201d\u2014\u2013')
_CLAUSE_PUNCT = _PUNCT  # quotes too: a quotation is a clause of its own


def _norm(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u2018", "'")


# words that open a new clause: negation and antonyms do not reach across them
_CLAUSE_WORDS = frozenset(
    "and but while whereas although though which who whom whose that because "
    "when where after before if unless until so however despite".split()
)
_NEG_WORDS = frozenset("not no never neither nor without cannot none nobody nothing nowhere".split())
_NEG_VERBS = frozenset("deny denies denied denying".split())
_NEG_BEFORE_TO = frozenset(
    "fail fails failed failing decline declines declined declining refuse refuses refused refusing yet".split()
)  # "failed to", "yet to"
_UN_BASE = {
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
_NOT_NEGATING_NEXT = frozenset(("only", "just", "least", "merely", "doubt"))  # "not only", "no doubt"
_ADVERBS = frozenset(
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


_UN_WORDS = {k: _word_term(v) for k, v in _UN_BASE.items()}


@lru_cache(maxsize=65536)
def _term(tok: str) -> tuple[str, ...]:
    """The content terms of one lower-case token: () for stop words, negations and punctuation;
    a hyphenated word also yields its parts ("1,900-mile-wide" meets "mile" and "wide")."""
    if tok[0].isdigit():
        return (_norm_number(tok),)
    if tok in _PUNCT or tok in STOP_WORDS or tok in _NEG_WORDS or tok in _HEDGES or len(tok) < 2 or tok.endswith("n't"):
        return ()
    if tok in _UN_WORDS:
        return (_UN_WORDS[tok],)
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


def _norm_number(tok: str) -> str:
    """'1,200' -> '1200', '4.0' -> '4', '0.90' -> '0.9', '0100' -> '100'."""
    n = tok.replace(",", "")
    if "." in n:
        n = n.rstrip("0").rstrip(".")
    whole, dot, frac = n.partition(".")
    return (whole.lstrip("0") or "0") + dot + frac


class _ChunkTerms(dict):
    """A whitespace-separated lower-case chunk ("(nyag)", "investigating,", "didn’t") -> its content
    terms as _TOKEN and _term find them; a dict with __missing__ so that a hit is one C-level lookup
    (this runs on every passage word)."""

    def __missing__(self, chunk: str) -> tuple[str, ...]:
        if len(self) > 200_000:
            self.clear()
        out = tuple(chain.from_iterable(map(_term, _TOKEN.findall(_norm(chunk)))))
        self[chunk] = out
        return out


_CHUNK_TERMS = _ChunkTerms()


def _terms_of(text: str) -> frozenset[str]:
    """The content terms of a text."""
    return frozenset(chain.from_iterable(map(_CHUNK_TERMS.__getitem__, text.lower().split())))


# --- antonyms ---------------------------------------------------------------------------------
# Each pair has two sides; a word may sit in several pairs. Words are met by stem ("defending" is
# "defend"). Words marked * only count when a quantity follows ("up 0.35%", "added 20.72 points",
# "lost more than 2%"), not in "set up", "added that", "lost the vote".

_QUANT_NEXT = frozenset("more less over nearly about roughly around almost by from some as well than".split())
_PAIRS: list[tuple[str, str, str]] = [
    (
        "rise/fall",
        "rise rose risen increase climb grow grew grown gain jump surge soar raise hike boost upward "
        "*up *add *added *adds *adding",
        "fall fell fallen decrease decline drop cut reduce reduction lowered lowering slash plunge sink sank "
        "sunk tumble slide slid shrink shrank eliminate downward *down *lost *lose *loses *losing loss",
    ),
    ("win/lose", "win won winner beat beaten defeated defeats victory victories victorious", "lose lost losing loss"),
    ("high/low", "high higher highest", "low lower lowest"),
    ("more/less", "more", "less fewer"),
    ("before/after", "before", "after"),
    ("early/late", "early earlier earliest", "late later latest"),
    ("open/close", "open opened reopen reopened re-open re-opened", "close closed shut shelve shelved"),
    ("accept/reject", "approve approval accept welcome agree agreed", "reject rejection refuse refused balk balked"),
    (
        "allow/ban",
        "allow permit legalize legalized legalise legalised legal authorize authorized",
        "ban banned prohibit outlaw forbid forbidden illegal",
    ),
    ("support/oppose", "support supporter defend endorse", "oppose opponent contradict refute"),
    ("buy/sell", "buy bought purchase acquire", "sell sold divest"),
    ("majority/minority", "majority", "minority"),
    ("strong/weak", "strong stronger strongest strengthen strengthened", "weak weaker weakest weaken weakened"),
    ("large/small", "large larger largest big bigger biggest", "small smaller smallest"),
    ("premium/discount", "premium", "discount"),
    ("long/short", "long longer longest", "short shorter shortest"),
]


def _inflections(w: str) -> set[str]:
    """w and its regular inflections: the stemmer leaves short words alone ("rising" is not "rise")."""
    forms = {w, w + "s", w + "es", w + "ed", w + "d", w + "ing"}
    if w.endswith("e"):
        forms.add(w[:-1] + "ing")
    if w.endswith("y"):
        forms |= {w[:-1] + "ies", w[:-1] + "ied"}
    if len(w) >= 3 and w[-1] not in "aeiouwxy" and w[-2] in "aeiou" and w[-3] not in "aeiou":
        forms |= {w + w[-1] + "ing", w + w[-1] + "ed"}  # cut -> cutting, drop -> dropped
    return forms


_ANT_STEM: dict[str, list[tuple[int, int]]] = {}  # stem -> [(pair, side)]
_ANT_QUANT: dict[str, list[tuple[int, int]]] = {}  # surface word -> [(pair, side)], quantity needed
for _i, (_name, _a, _b) in enumerate(_PAIRS):
    for _side, _words in ((0, _a), (1, _b)):
        for _w in _words.split():
            if _w.startswith("*"):
                _ANT_QUANT.setdefault(_w[1:], []).append((_i, _side))
                continue
            for _f in _inflections(_w):
                _lst = _ANT_STEM.setdefault(stem(_f), [])
                if (_i, _side) not in _lst:
                    _lst.append((_i, _side))


class _StemMarks(dict):
    """token -> its (pair, side) marks by stem; hits are one C-level lookup."""

    def __missing__(self, tok: str) -> tuple[tuple[int, int], ...]:
        if len(self) > 200_000:
            self.clear()
        out = () if tok[0].isdigit() or tok in _PUNCT else tuple(_ANT_STEM.get(stem(tok), ()))
        self[tok] = out
        return out


_STEM_MARKS = _StemMarks()


def _marks_of(toks: list[str], j: int) -> list[tuple[int, int]] | tuple:
    t = toks[j]
    out = _STEM_MARKS[t]
    if t in _SPECIAL_MARK:
        if t in _NEG_BEFORE_TO and j + 1 < len(toks) and toks[j + 1] == "to":
            return ()  # "declined to comment" is a negation, not a fall
        q = _ANT_QUANT.get(t)
        if q:
            nxt = toks[j + 1] if j + 1 < len(toks) else ""
            if nxt[:1].isdigit() or nxt in _QUANT_NEXT:
                return list(out) + q
    return out


_SPECIAL_MARK = frozenset(_ANT_QUANT) | _NEG_BEFORE_TO


# --- the full analysis of a sentence or claim -------------------------------------------------


@dataclass(slots=True)
class _Clause:
    terms: frozenset[str]  # content terms, the antonym words themselves left out
    marks: frozenset[tuple[int, int, int]]  # (pair, side, 1 if under a negation else 0)
    words: dict[tuple[int, int], str]  # (pair, side) -> the word, for reasons


@dataclass(slots=True)
class _Text:
    text: str
    terms: frozenset[str]
    parity: dict[str, int]  # term -> bit 1: seen un-negated, bit 2: seen negated
    cues: list[tuple[str, ...]]  # per negation: the terms it attaches to, nearest first
    clauses: list[_Clause]
    caps: frozenset[str] = frozenset()  # terms written capitalised (names) -- claims only
    acronyms: frozenset[str] = frozenset()  # terms written in capitals ("IPO") -- claims only


_SCOPE_BACK, _SCOPE_FWD = 3, 4
_CLAUSE_OPENERS = _CLAUSE_PUNCT | _CLAUSE_WORDS
_CUE_WORDS = _NEG_WORDS | _NEG_VERBS | _NEG_BEFORE_TO | frozenset(_UN_BASE) | {"out"}


def _analyse(text: str, *, claim: bool = False) -> _Text:
    norm = _norm(text)
    caps: set[str] = set()
    acronyms: set[str] = set()
    if claim:
        toks = []
        for m in _TOKEN.finditer(norm):
            raw = m.group(0)
            tok = raw.lower()
            toks.append(tok)
            if raw[0].isupper():
                ts = _term(tok)
                if ts and not ts[0][0].isdigit():
                    caps.add(ts[0])
                    if raw.isupper() and 3 <= len(raw) <= 6:
                        acronyms.add(ts[0])
    else:
        toks = _TOKEN.findall(norm.lower())
    n = len(toks)
    terms = list(map(_term, toks))
    # clause ids: punctuation and clause-opening words start a new clause
    cid = list(accumulate(map(_CLAUSE_OPENERS.__contains__, toks)))
    # negation cues -> covered positions (parity) and the terms each attaches to
    found: list[tuple[int, str | None]] = []
    candidates = (
        [i for i, t in enumerate(toks) if t in _CUE_WORDS or t.endswith("n't")]
        if "n't" in norm or not _CUE_WORDS.isdisjoint(toks)
        else []
    )
    for i in candidates:
        t = toks[i]
        self_term = None
        if t in _NEG_WORDS:
            nxt = toks[i + 1] if i + 1 < n else ""
            if nxt in _NOT_NEGATING_NEXT or (t == "no" and nxt[:1].isdigit()):
                continue
        elif t.endswith("n't") or t in _NEG_VERBS:
            pass
        elif t in _NEG_BEFORE_TO:
            if not (i + 1 < n and toks[i + 1] == "to") or (t == "yet" and i > 0 and toks[i - 1] in ("not", "no")):
                continue
        elif t == "out" and i > 0 and toks[i - 1] in ("rule", "rules", "ruled", "ruling"):
            pass
        elif t in _UN_WORDS:
            self_term = _UN_WORDS[t]
        else:
            continue
        found.append((i, self_term))
    cover = [0] * n
    cues: list[tuple[str, ...]] = []
    if found:
        cue_at = {i for i, _ in found}
        for i, self_term in found:
            after: list[str] = []
            if self_term:
                cover[i] += 1
                after.append(self_term)
            # a scope runs within the clause, a few content words each way, up to the next negation
            k = 0
            j = i + 1
            while j < n and cid[j] == cid[i] and k < _SCOPE_FWD and j not in cue_at:
                if terms[j]:
                    cover[j] += 1
                    k += 1
                    if toks[j] not in _ADVERBS:
                        after.extend(terms[j])
                j += 1
            k = 0
            j = i - 1
            attach_back = not after  # nothing after it in its clause ("is not that ..."): what precedes
            while j >= 0 and cid[j] == cid[i] and k < _SCOPE_BACK and j not in cue_at:
                if terms[j]:
                    cover[j] += 1
                    k += 1
                    if attach_back and toks[j] not in _ADVERBS:
                        after.extend(terms[j])
                j -= 1
            cues.append(tuple(after))
    parity: dict[str, int] = {}
    for i, ts in enumerate(terms):
        if ts:
            bit = 2 if cover[i] else 1
            for term in ts:
                parity[term] = parity.get(term, 0) | bit
    # clauses with antonym marks
    base_marks = list(map(_STEM_MARKS.__getitem__, toks))
    for k in [k for k, t in enumerate(toks) if t in _SPECIAL_MARK]:
        base_marks[k] = _marks_of(toks, k)
    clauses: list[_Clause] = []
    i = 0
    while i < n:
        j = i
        ci = cid[i]
        while j < n and cid[j] == ci:
            j += 1
        if any(base_marks[i:j]):
            cl_terms: set[str] = set()
            marks: set[tuple[int, int, int]] = set()
            words: dict[tuple[int, int], str] = {}
            for k in range(i, j):
                ms = base_marks[k]
                if ms:
                    for pair, side in ms:
                        marks.add((pair, side, 1 if cover[k] else 0))
                        words.setdefault((pair, side), toks[k])
                elif terms[k]:
                    cl_terms.update(terms[k])
            clauses.append(_Clause(frozenset(cl_terms), frozenset(marks), words))
        else:
            cl = frozenset(chain.from_iterable(terms[i:j]))
            if cl:
                clauses.append(_Clause(cl, frozenset(), {}))
        i = j
    return _Text(text, frozenset(parity), parity, cues, clauses, frozenset(caps), frozenset(acronyms))


@lru_cache(maxsize=2048)  # ~5 KB per sentence
def _full(sentence: str) -> _Text:
    return _analyse(sentence)


@lru_cache(maxsize=1024)
def _claim(text: str) -> _Text:
    return _analyse(text, claim=True)


def _merge(a: _Text, b: _Text) -> _Text:
    parity = dict(a.parity)
    for t, p in b.parity.items():
        parity[t] = parity.get(t, 0) | p
    return _Text(a.text + " " + b.text, a.terms | b.terms, parity, a.cues + b.cues, a.clauses + b.clauses)


# --- numbers ----------------------------------------------------------------------------------

_MULT = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "mln": 1e6,
    "million": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "tn": 1e12,
    "trillion": 1e12,
}
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*(?:-\d+)*")  # "27,934.02", and hyphen groups "2-1", "14-0-1", "787-9"
_MAGNITUDE = re.compile(r" ?(k|thousand|mn|mln|million|bn|billion|tn|trillion|m|b)\b")
# the word a number counts ("11 rebounds", "$2.53 in per-share earnings"): after an optional unit
# sign and one optional small word
_COUNTED = re.compile(r"(?:%| ?percent| per cent)? (?:(?:a|an|the|in|of|to|for|at|per|on) )?([a-z][a-z'-]*)")
_NOT_COUNTED = frozenset(_MULT) | {"percent", "per", "cent"}


@dataclass(slots=True)
class _Numbers:
    raw: frozenset[str]  # normalised mantissas
    scaled: frozenset[float]  # mantissa x magnitude ("$6.5bn" -> 6.5e9; a bare number as itself)
    scores: frozenset[str]  # hyphenated groups ("2-1")
    items: list[tuple[str, float | None]]  # (mantissa, scaled or None), in order
    bound: dict[str, frozenset[str]]  # counted word's term -> the numbers written before it


def _numbers(text: str) -> _Numbers:
    low = _norm(text).lower()
    raw: set[str] = set()
    scaled: set[float] = set()
    scores: set[str] = set()
    items: list[tuple[str, float | None]] = []
    bound: dict[str, set[str]] = {}
    size = len(low)
    for m in _DIGITS.finditer(low):
        a, b = m.span()
        if a and (low[a - 1].isalnum() or low[a - 1] in "._"):
            continue  # inside a word or a dotted code: "clc1", "a350", ".0100"
        if b < size and (low[b].isalnum() or low[b] == "_"):
            mag = _MAGNITUDE.match(low, b)
            if not mag or "-" in m.group():
                continue  # "5th", "787x"
        else:
            mag = _MAGNITUDE.match(low, b) if b < size else None
        g = m.group()
        if "-" in g:
            parts = g.split("-")
            iso_date = len(parts) == 3 and len(parts[0]) == 4 and all(len(x) <= 2 for x in parts[1:])
            if all(len(x) <= 3 for x in parts):
                scores.add(g)  # a score, record or model number ("2-1", "14-0-1", "787-9"): kept whole
            for k, part in enumerate(parts):
                mant = _norm_number(part)
                raw.add(mant)
                if mant.count(".") <= 1:
                    scaled.add(round(float(mant), 3))
                if not (iso_date and k == 1):  # the month of 2019-11-19 may be written as a name
                    items.append((mant, None))
            continue
        mant = _norm_number(g)
        if mant.count(".") > 1:  # a version ("5.4.2"): compared as written, never as an amount
            raw.add(mant)
            items.append((mant, None))
            continue
        mult = _MULT[mag.group(1)] if mag else None
        value = round(float(mant) * mult, 3) if mult else None
        raw.add(mant)
        scaled.add(value if value is not None else round(float(mant), 3))
        items.append((mant, value))
        counted = _COUNTED.match(low, mag.end() if mag else b)
        if counted and counted.group(1) not in _NOT_COUNTED:
            ws = _term(counted.group(1).rstrip("'-"))
            if ws:
                bound.setdefault(ws[0], set()).add(mant)
    return _Numbers(
        frozenset(raw), frozenset(scaled), frozenset(scores), items, {w: frozenset(v) for w, v in bound.items()}
    )


_VALUES_MODULE: object | None = None
_VALUES_TRIED = False


def _values():
    """app.language.values (find_values/same_value) when it exists; None otherwise."""
    global _VALUES_MODULE, _VALUES_TRIED
    if not _VALUES_TRIED:
        _VALUES_TRIED = True
        try:
            from app.language import values as mod  # noqa: PLC0415 -- optional, written separately

            if callable(getattr(mod, "find_values", None)) and callable(getattr(mod, "same_value", None)):
                _VALUES_MODULE = mod
        except Exception:  # noqa: BLE001 -- absent or broken: digit matching alone
            _VALUES_MODULE = None
    return _VALUES_MODULE


# --- passages ---------------------------------------------------------------------------------
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
class _Sentence:
    text: str
    terms: frozenset[str]


class _Passage:
    __slots__ = ("text", "sentences", "terms", "_numbers", "_initials", "_values", "_sorted")

    def __init__(self, text: str):
        self.text = text
        sents = _split_sentences(text)
        # one pass over the passage's words; each sentence is a run of them (the splitter cuts at
        # whitespace and joins with single spaces), else per sentence
        per_chunk = list(map(_CHUNK_TERMS.__getitem__, text.lower().split()))
        counts = [x.count(" ") + 1 for x in sents]
        if sum(counts) == len(per_chunk):
            self.sentences = []
            a = 0
            for x, k in zip(sents, counts):
                self.sentences.append(_Sentence(x, frozenset(chain.from_iterable(per_chunk[a : a + k]))))
                a += k
        else:
            self.sentences = [_Sentence(x, _terms_of(x)) for x in sents]
        self.terms = frozenset().union(*(s.terms for s in self.sentences)) if self.sentences else frozenset()
        self._numbers: _Numbers | None = None
        self._initials: str | None = None
        self._values: tuple | None = None
        self._sorted: list[str] | None = None

    @property
    def sorted_terms(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(self.terms)
        return self._sorted

    @property
    def numbers(self) -> _Numbers:
        if self._numbers is None:
            self._numbers = _numbers(self.text)
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
def _passage(text: str) -> _Passage:
    return _Passage(text)


def strip_attribution(claim: str) -> str:
    """Drop a leading "According to example.com (2024-05-01), " from a claim."""
    return _ATTRIBUTION.sub("", claim, count=1)


# --- the scorer -------------------------------------------------------------------------------


class LexicalSupport:
    """Support from words alone; see the module docstring. Implements SupportScorer."""

    name = "lexical"

    def __init__(self, threshold: float = 0.6, band: float = 0.25):
        self.threshold = threshold
        self.band = band
        # a failed hard check scores here: decisive-unsupported, below the gray band
        self.fail_cap = min(0.3, max(0.0, threshold - band - 0.05))

    def score(self, claim: str, passages: list[str]) -> SupportScore:
        text = strip_attribution(claim).strip()
        c = _claim(text) if text else None
        ps = [_passage(p) for p in passages if p and p.strip()]
        if not ps or c is None or not c.terms:
            return SupportScore(0.0, True, "", ["no_passages" if not ps else "no_content"])
        c_terms = c.terms

        all_terms: set[str] = set()
        for p in ps:
            all_terms |= p.terms
        missing = set(c_terms - all_terms)
        if missing:  # spelled another way: "Korea"/"Korean", "IPO"/"initial public offering"
            missing = {t for t in missing if not _soft_present(t, c, all_terms, ps)}
        found = c_terms - missing
        n = len(c_terms)

        # best window (one sentence or two adjacent ones, by claim terms covered; ties go to a
        # single, then shorter, sentence) and the best single sentence
        best_win: tuple[_Sentence, ...] | None
        one: _Sentence | None
        best_ov, best_win = -1, None
        one_ov, one = -1, None
        for p in ps:
            sents = p.sentences
            prev_hits = None
            for i, s in enumerate(sents):
                hits = found & s.terms
                ov = len(hits)
                # ov >= 0: a tie is never with the initial -1, so `one` / `best_win` are set there
                if ov > one_ov or (ov == one_ov and one is not None and len(s.text) < len(one.text)):
                    one_ov, one = ov, s
                if ov > best_ov or (
                    ov == best_ov
                    and best_win is not None
                    and (len(best_win) == 2 or len(s.text) < len(best_win[0].text))
                ):
                    best_ov, best_win = ov, (s,)
                if prev_hits is not None:
                    ov2 = len(hits | prev_hits)
                    if ov2 > best_ov:
                        best_ov, best_win = ov2, (sents[i - 1], s)
                prev_hits = hits
        local = max(best_ov, 0) / n
        glob = len(found) / n
        quote = " ".join(s.text for s in best_win) if best_win and best_ov > 0 else ""
        if len(quote) > 500:
            quote = (one.text if one is not None else quote)[:500]

        reasons: list[str] = []
        fail = False
        num_reasons, c_numbers = _number_problems(text, ps)
        if num_reasons:
            reasons.extend(num_reasons)
            fail = True
        if best_win and best_ov > 0:
            window = (
                _full(best_win[0].text)
                if len(best_win) == 1
                else _merge(_full(best_win[0].text), _full(best_win[1].text))
            )
            neg = _negation(c, window)
            if neg:
                reasons.append(f"negation_mismatch:{neg}")
                fail = True
            ant = _antonym(c, window)
            if ant:
                reasons.append(f"antonym:{ant}")
                fail = True

        base = max(0.0, min(1.0, 0.65 * local + 0.35 * glob))
        hi, lo = self.threshold + self.band, self.threshold - self.band
        if fail:
            return SupportScore(round(min(base, self.fail_cap), 3), True, quote, reasons)

        cap = hi - 0.01  # inside the gray band unless near-verbatim
        names = sorted(missing & c.caps)
        if names:
            reasons.append(f"entity_missing:{names[0]}")
            cap = min(cap, self.threshold - 0.05)
        one_terms = one.terms if one is not None else frozenset()
        elsewhere: list[str] = []
        if c_numbers and one is not None:
            one_numbers = _numbers(one.text).raw  # found the same way as the claim's
            elsewhere = [x for x in c_numbers if x not in one_numbers]
        if elsewhere:
            reasons.append(f"number_elsewhere:{elsewhere[0]}")
            cap = min(cap, self.threshold - 0.05)
        near_verbatim = one_ov / n >= 0.85 and not missing and not elsewhere and c.caps <= one_terms
        score = min(1.0, max(base, hi)) if near_verbatim else min(base, cap)
        if score < self.threshold:
            reasons.append(f"low_overlap:{local:.2f}")
        return SupportScore(round(score, 3), near_verbatim or score < lo, quote, reasons)


def _soft_present(term: str, c: _Text, all_terms: set[str], ps: list[_Passage]) -> bool:
    """A term met another way: a shared prefix of 5+ letters (korea/korean, america/american), or an
    acronym written in capitals that spells the initials of consecutive passage words (IPO)."""
    if term[0].isdigit():
        return False
    if len(term) >= 5:
        if any(term[:k] in all_terms for k in range(5, len(term))):
            return True  # a passage term is a prefix of this one
        for p in ps:
            st = p.sorted_terms
            i = bisect_left(st, term)
            if i < len(st) and st[i].startswith(term):
                return True  # this term is a prefix of a passage term
    if term in c.acronyms:
        return any(term in p.initials for p in ps)
    return False


def _negation(c: _Text, w: _Text) -> str | None:
    """The first term whose polarity differs. For each negation on either side, the term checked is
    the first word after it (in its clause) that the other side also has and that neither side uses
    both negated and not (ambiguous); "did not *indicate* the crash was caused" checks "indicate"."""
    for own, other in ((c, w), (w, c)):
        for after in own.cues:
            for t in after:
                if t in other.terms:
                    po, pt = own.parity.get(t, 1), other.parity.get(t, 1)
                    if po == 3 or pt == 3:
                        continue
                    if po != pt:
                        return t
                    break
    return None


def _antonym(c: _Text, w: _Text) -> str | None:
    """A claim clause using one side of a pair where a window clause about the same terms (at least
    half as close as the closest) uses the other side, at the same polarity, and no closer clause
    agrees ("did not rise" agrees with "fell")."""
    for cc in c.clauses:
        if not cc.marks:
            continue
        overlaps = [(len(cc.terms & wc.terms), wc) for wc in w.clauses]
        best = max((ov for ov, _ in overlaps), default=0)
        if best == 0:
            continue
        for pair, side, par in cc.marks:
            opp = max((ov for ov, wc in overlaps if (pair, 1 - side, par) in wc.marks), default=0)
            same = max(
                (ov for ov, wc in overlaps if (pair, side, par) in wc.marks or (pair, 1 - side, 1 - par) in wc.marks),
                default=0,
            )
            if opp > 0 and opp > same and 2 * opp >= best:
                a = cc.words.get((pair, side), "?")
                b = next(
                    wc.words[(pair, 1 - side)] for ov, wc in overlaps if ov == opp and (pair, 1 - side, par) in wc.marks
                )
                return f"{a}/{b}"
    return None


def _number_problems(claim: str, ps: list[_Passage]) -> tuple[list[str], list[str]]:
    """(reasons, the claim's numbers): every number must be in the passages; a number bound to a
    noun must not be one the passages give another number for."""
    cn = _numbers(claim)
    if not cn.items and not cn.scores:
        return [], []
    raw: set[str] = set()
    scaled: set[float] = set()
    scores: set[str] = set()
    for p in ps:
        pn = p.numbers
        raw |= pn.raw
        scaled |= pn.scaled
        scores |= pn.scores
    out: list[str] = []
    for mant, value in cn.items:
        ok = (
            (value in scaled)
            if value is not None
            else (mant in raw or (mant.count(".") <= 1 and round(float(mant), 3) in scaled))
        )
        if not ok and not _values_agree(claim, mant, value, ps):
            out.append(f"number_missing:{mant}")
    for s in sorted(cn.scores):
        if s not in scores and not _range_written_out(s, ps):
            out.append(f"number_missing:{s}")
    if not out and cn.bound:
        for w, nums in cn.bound.items():
            known: set[str] = set()
            for p in ps:
                known |= p.numbers.bound.get(w, frozenset())
            extra = nums - known
            if known and extra:
                out.append(f"number_mismatch:{min(extra)} {w}")
                break
    return out, sorted({mant for mant, _ in cn.items})


def _range_written_out(group: str, ps: list[_Passage]) -> bool:
    """A two-number group of the claim ("20-30") written as a range in a passage ("20 to 30")."""
    parts = group.split("-")
    if len(parts) != 2:
        return False
    rx = re.compile(
        r"(?<![\d.,])"
        + re.escape(parts[0])
        + r"(?:%| ?percent)?\s*(?:\u2013|to|and|through)\s*"
        + re.escape(parts[1])
        + r"(?![\d])"
    )
    return any(rx.search(p.text) for p in ps)


def _values_agree(claim: str, mant: str, value: float | None, ps: list[_Passage]) -> bool:
    """Second opinion from app.language.values, when it exists: the same value written another way
    ("two hours"), the passage's amount within the rounding of the claim's ("$0.45m" for "$449,000")."""
    mod = _values()
    if mod is None or (
        value is None and ("." in mant or float(mant) > 100)
    ):  # "." first: "5.4.2" never reaches float()
        return False  # only small counts ("two hours") and amounts with a magnitude can be written otherwise
    try:
        target = value if value is not None else float(mant)
        decimals = len(mant.partition(".")[2])
        tolerance = 0.5 * 10**-decimals * (target / float(mant) if float(mant) else 1.0) + 1e-9
        mine = [
            v
            for v in mod.find_values(claim)
            if v.amount is not None
            and (
                abs(v.amount - target) <= 1e-9 * max(1.0, abs(target))
                or abs(v.amount - float(mant)) <= 1e-9 * max(1.0, float(mant))
            )
        ]
        if not mine:
            return False
        for p in ps:
            for pv in p.values(mod):
                for v in mine:
                    if pv.amount is not None and mod.same_value(v, pv) and abs(pv.amount - v.amount) <= tolerance:
                        return True
    except Exception:  # noqa: BLE001 -- a second opinion must never break scoring
        return False
    return False
