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
from typing import Protocol, runtime_checkable

from app.language.support_numbers import find_numbers, number_problems
from app.language.support_passages import Passage, Sentence, read_passage
from app.language.support_polarity import (
    TextAnalysis,
    antonym_mismatch,
    claim_analysis,
    full_analysis,
    merge_analyses,
    negation_mismatch,
)

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
        c = claim_analysis(text) if text else None
        ps = [read_passage(p) for p in passages if p and p.strip()]
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
        best_win: tuple[Sentence, ...] | None
        one: Sentence | None
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
        num_reasons, c_numbers = number_problems(text, ps)
        if num_reasons:
            reasons.extend(num_reasons)
            fail = True
        if best_win and best_ov > 0:
            window = (
                full_analysis(best_win[0].text)
                if len(best_win) == 1
                else merge_analyses(full_analysis(best_win[0].text), full_analysis(best_win[1].text))
            )
            neg = negation_mismatch(c, window)
            if neg:
                reasons.append(f"negation_mismatch:{neg}")
                fail = True
            ant = antonym_mismatch(c, window)
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
            one_numbers = find_numbers(one.text).raw  # found the same way as the claim's
            elsewhere = [x for x in c_numbers if x not in one_numbers]
        if elsewhere:
            reasons.append(f"number_elsewhere:{elsewhere[0]}")
            cap = min(cap, self.threshold - 0.05)
        near_verbatim = one_ov / n >= 0.85 and not missing and not elsewhere and c.caps <= one_terms
        score = min(1.0, max(base, hi)) if near_verbatim else min(base, cap)
        if score < self.threshold:
            reasons.append(f"low_overlap:{local:.2f}")
        return SupportScore(round(score, 3), near_verbatim or score < lo, quote, reasons)


def _soft_present(term: str, c: TextAnalysis, all_terms: set[str], ps: list[Passage]) -> bool:
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
