"""Polarity for the support scorer (app/language/support.py): the full analysis of a claim or a
passage window (negation scopes, clauses, antonym marks) and the two checks on it, a term whose
polarity differs (``negation``) and a clause using the opposite side of an antonym pair (``antonym``)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate, chain

from app.language.support_antonyms import SPECIAL_MARK, STEM_MARKS, marks_of
from app.language.support_terms import (
    ADVERBS,
    CLAUSE_PUNCT,
    CLAUSE_WORDS,
    NEG_BEFORE_TO,
    NEG_VERBS,
    NEG_WORDS,
    NOT_NEGATING_NEXT,
    TOKEN,
    UN_BASE,
    UN_WORDS,
    norm_apostrophes,
    token_terms,
)


@dataclass(slots=True)
class _Clause:
    terms: frozenset[str]  # content terms, the antonym words themselves left out
    marks: frozenset[tuple[int, int, int]]  # (pair, side, 1 if under a negation else 0)
    words: dict[tuple[int, int], str]  # (pair, side) -> the word, for reasons


@dataclass(slots=True)
class TextAnalysis:
    text: str
    terms: frozenset[str]
    parity: dict[str, int]  # term -> bit 1: seen un-negated, bit 2: seen negated
    cues: list[tuple[str, ...]]  # per negation: the terms it attaches to, nearest first
    clauses: list[_Clause]
    caps: frozenset[str] = frozenset()  # terms written capitalised (names) -- claims only
    acronyms: frozenset[str] = frozenset()  # terms written in capitals ("IPO") -- claims only


_SCOPE_BACK, _SCOPE_FWD = 3, 4
_CLAUSE_OPENERS = CLAUSE_PUNCT | CLAUSE_WORDS
_CUE_WORDS = NEG_WORDS | NEG_VERBS | NEG_BEFORE_TO | frozenset(UN_BASE) | {"out"}


def _analyse(text: str, *, claim: bool = False) -> TextAnalysis:
    norm = norm_apostrophes(text)
    caps: set[str] = set()
    acronyms: set[str] = set()
    if claim:
        toks = []
        for m in TOKEN.finditer(norm):
            raw = m.group(0)
            tok = raw.lower()
            toks.append(tok)
            if raw[0].isupper():
                ts = token_terms(tok)
                if ts and not ts[0][0].isdigit():
                    caps.add(ts[0])
                    if raw.isupper() and 3 <= len(raw) <= 6:
                        acronyms.add(ts[0])
    else:
        toks = TOKEN.findall(norm.lower())
    n = len(toks)
    terms = list(map(token_terms, toks))
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
        if t in NEG_WORDS:
            nxt = toks[i + 1] if i + 1 < n else ""
            if nxt in NOT_NEGATING_NEXT or (t == "no" and nxt[:1].isdigit()):
                continue
        elif t.endswith("n't") or t in NEG_VERBS:
            pass
        elif t in NEG_BEFORE_TO:
            if not (i + 1 < n and toks[i + 1] == "to") or (t == "yet" and i > 0 and toks[i - 1] in ("not", "no")):
                continue
        elif t == "out" and i > 0 and toks[i - 1] in ("rule", "rules", "ruled", "ruling"):
            pass
        elif t in UN_WORDS:
            self_term = UN_WORDS[t]
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
                    if toks[j] not in ADVERBS:
                        after.extend(terms[j])
                j += 1
            k = 0
            j = i - 1
            attach_back = not after  # nothing after it in its clause ("is not that ..."): what precedes
            while j >= 0 and cid[j] == cid[i] and k < _SCOPE_BACK and j not in cue_at:
                if terms[j]:
                    cover[j] += 1
                    k += 1
                    if attach_back and toks[j] not in ADVERBS:
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
    base_marks = list(map(STEM_MARKS.__getitem__, toks))
    for k in [k for k, t in enumerate(toks) if t in SPECIAL_MARK]:
        base_marks[k] = marks_of(toks, k)
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
    return TextAnalysis(text, frozenset(parity), parity, cues, clauses, frozenset(caps), frozenset(acronyms))


@lru_cache(maxsize=2048)  # ~5 KB per sentence
def full_analysis(sentence: str) -> TextAnalysis:
    return _analyse(sentence)


@lru_cache(maxsize=1024)
def claim_analysis(text: str) -> TextAnalysis:
    return _analyse(text, claim=True)


def merge_analyses(a: TextAnalysis, b: TextAnalysis) -> TextAnalysis:
    parity = dict(a.parity)
    for t, p in b.parity.items():
        parity[t] = parity.get(t, 0) | p
    return TextAnalysis(a.text + " " + b.text, a.terms | b.terms, parity, a.cues + b.cues, a.clauses + b.clauses)


def negation_mismatch(c: TextAnalysis, w: TextAnalysis) -> str | None:
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


def antonym_mismatch(c: TextAnalysis, w: TextAnalysis) -> str | None:
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
