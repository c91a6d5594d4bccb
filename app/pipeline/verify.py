"""Verify: each cited sentence against its cited spans.

Coverage (a factual sentence without a citation is unsupported) and a lexical-support floor: the
share of the sentence's content terms found in the cited spans, with every number in the sentence
required to appear there verbatim. The best-matching span sentence is kept as the claim's quote.
"""
from __future__ import annotations

import re

from app import metrics
from app.pipeline.types import CitedAnswer, Claim, Evidence
from app.language.anchors import about_a_sibling
from app.language.question import QuestionAnalysis
from app.language.text import numbers, split_sentences, terms

_ATTRIBUTION = re.compile(r"^according to [\w.-]+ \([\w-]+\),\s*", re.I)


def support_of(claim_text: str, spans: list[Evidence]) -> tuple[float, str]:
    """(support in 0..1, best quote) of a sentence against the spans it cites."""
    text = _ATTRIBUTION.sub("", claim_text)
    c_terms = set(terms(text))
    if not spans or not c_terms:
        return 0.0, ""
    span_terms: set[str] = set()
    span_numbers: set[str] = set()
    best, quote = -1.0, ""
    for ev in spans:
        span_terms |= set(terms(ev.text))
        span_numbers |= numbers(ev.text)
        for sentence in split_sentences(ev.text):
            overlap = len(c_terms & set(terms(sentence))) / len(c_terms)
            if overlap > best:
                best, quote = overlap, sentence
    support = len(c_terms & span_terms) / len(c_terms)
    missing_numbers = numbers(text) - span_numbers
    if missing_numbers:
        # A number the spans do not contain is the classic hallucination: never supported.
        support = min(support, 0.49) * (1 - len(missing_numbers) / (len(numbers(text)) + 1))
    return round(support, 3), quote[:500]


def score_claims(answer: CitedAnswer, evidence: list[Evidence], question: QuestionAnalysis | None = None) -> None:
    """Lexical support and best quote for every factual, cited claim. A claim about a sibling of the
    question's model anchor (the S2's speed for a question about the S3) supports nothing asked."""
    by_id = {e.span_id: e for e in evidence}
    for claim in answer.claims:
        if claim.factual and claim.span_ids:
            claim.support, claim.quote = support_of(claim.text, [by_id[s] for s in claim.span_ids if s in by_id])
            if question is not None and about_a_sibling(set(terms(claim.text)), list(question.anchors)):
                claim.support = 0.0


def unsettled(answer: CitedAnswer, threshold: float, band: float = 0.3) -> list[Claim]:
    """Claims the cheap check cannot settle: cited, with support near the floor either way
    (a paraphrase scores low, a same-words-different-meaning sentence scores high)."""
    return [c for c in answer.claims if c.factual and c.span_ids and threshold - band <= c.support < threshold + band]


def apply_verdicts(answer: CitedAnswer, *, mode: str, threshold: float) -> float | None:
    """Mark claims; in `drop` mode move unsupported ones to dropped_claims. Returns groundedness
    (supported factual sentences / factual sentences), or None when verification is off."""
    if mode == "off":
        return None
    factual = 0
    supported = 0
    kept: list[Claim] = []
    for claim in answer.claims:
        if not claim.factual:
            claim.supported = True
            kept.append(claim)
            continue
        factual += 1
        if claim.judged is None:
            claim.supported = bool(claim.span_ids) and claim.support >= threshold
        else:
            claim.supported = bool(claim.span_ids) and claim.judged
        if claim.supported:
            supported += 1
            kept.append(claim)
            continue
        reason = "uncited" if not claim.span_ids else "unsupported"
        metrics.UNSUPPORTED_SENTENCES.labels(action=mode).inc()
        if mode == "drop":
            metrics.CITATIONS_DROPPED.labels(reason=reason).inc(max(1, len(claim.span_ids)))
            answer.dropped_claims.append(claim)
        else:
            kept.append(claim)
    answer.claims = kept
    return round(supported / factual, 3) if factual else 0.0


def verify_claims(answer: CitedAnswer, evidence: list[Evidence], *, mode: str, threshold: float) -> float | None:
    """The lexical verifier alone (no judge)."""
    if mode == "off":
        return None
    score_claims(answer, evidence)
    return apply_verdicts(answer, mode=mode, threshold=threshold)
