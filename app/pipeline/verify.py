"""Verify: each cited sentence against its cited spans.

Coverage (a factual sentence without a citation is unsupported) and the lexical support scorer
(app/language/support.py: overlap in the best window; negated, reversed or number-changed claims
never supported). Verdicts it cannot settle go to the LLM judge when a model is configured.
"""

from __future__ import annotations

import logging

from app import metrics
from app.domain.types import CitedAnswer, Claim, Evidence
from app.language.anchors import about_a_sibling
from app.language.question import QuestionAnalysis
from app.language.support import LexicalSupport, SupportScore
from app.language.text import terms
from app.pipeline.answerability_features import api_entry, as_definition, sentences_with_leads

log = logging.getLogger(__name__)
_SCORER = LexicalSupport()
MAX_QUOTE_CHARS = 500  # a claim's supporting quote as stored and shown: a sentence or two, not a passage
GROUNDEDNESS_DIGITS = 3  # groundedness is reported to this many decimals


def support_of(claim_text: str, spans: list[Evidence]) -> tuple[float, str]:
    """(support in 0..1, best quote) of a sentence against the spans it cites."""
    verdict = support_verdict(claim_text, spans)
    return verdict.score, verdict.quote


def support_verdict(claim_text: str, spans: list[Evidence]) -> SupportScore:
    """The lexical support scorer's verdict (app/language/support.py): term overlap in the best
    window, negation and antonyms respected, every number present; `decisive` when no judge is needed."""
    try:
        return _SCORER.score(_sentence_under_entry(claim_text, spans), [ev.text for ev in spans])
    except Exception:  # a scorer fault degrades one verdict (to the judge, else unsupported), never the request
        log.exception("support scorer failed")
        return SupportScore(0.0, False, "", ["scorer_error"])


def _sentence_under_entry(claim_text: str, spans: list[Evidence]) -> str:
    """A sentence quoted under its API entry ("asyncio.Queue(maxsize=0): A first in, first out (FIFO)
    queue.", app/pipeline/answerability_features.quote) is judged as the sentence when a cited span holds
    that sentence under that entry line: the entry says what the sentence is about, and its defaults
    ("maxsize=0") are not numbers the sentence states. Anything else (another entry's sentence
    included) is judged whole."""
    head, sep, sentence = claim_text.partition(": ")
    if not sep or not sentence.strip() or not api_entry(head):
        return claim_text
    wanted = _comparable(sentence)
    for ev in spans:
        if head not in ev.text:
            continue
        for line, lead, _ in sentences_with_leads(ev.text):
            if lead == head and _comparable(as_definition(line)) == wanted:
                return sentence
    return claim_text


def _comparable(sentence: str) -> str:
    """A sentence as compared with its quote: spaces collapsed, closing punctuation dropped."""
    return " ".join(sentence.split()).rstrip(" .!?:;")


def score_claims(
    answer: CitedAnswer,
    evidence: list[Evidence],
    question: QuestionAnalysis | None = None,
    *,
    only: list[Claim] | None = None,
) -> None:
    """Lexical support and best quote for every factual, cited claim (of `only`, when given). A
    claim about a sibling of the question's model anchor (the S2's speed for a question about the
    S3) supports nothing asked."""
    by_id = {e.span_id: e for e in evidence}
    for claim in answer.claims if only is None else only:
        if claim.factual and claim.span_ids:
            verdict = support_verdict(claim.text, [by_id[s] for s in claim.span_ids if s in by_id])
            claim.support, claim.quote, claim.decisive = (
                verdict.score,
                verdict.quote[:MAX_QUOTE_CHARS],
                verdict.decisive,
            )
            if question is not None and about_a_sibling(set(terms(claim.text)), list(question.anchors)):
                claim.support = 0.0


VerdictKey = tuple[str, tuple[str, ...]]


def verdict_key(claim: Claim) -> VerdictKey:
    """A sentence as parsed (text and cited spans): its verdict does not depend on its neighbours."""
    return claim.text, tuple(claim.span_ids)


def adopt_verdicts(answer: CitedAnswer, known: dict[VerdictKey, Claim]) -> list[Claim]:
    """Copy the verdicts already reached on the same sentences (a verified stream checks each one as
    it completes); returns the claims still to score."""
    fresh = []
    for claim in answer.claims:
        done = known.get(verdict_key(claim))
        if done is None:
            fresh.append(claim)
            continue
        claim.support, claim.quote, claim.decisive = done.support, done.quote, done.decisive
        claim.judged, claim.judged_by = done.judged, done.judged_by
    return fresh


def unsettled(answer: CitedAnswer) -> list[Claim]:
    """Claims the lexical scorer cannot settle either way (a paraphrase, a near-miss): the entailment
    model's and the judge's."""
    return [c for c in answer.claims if c.factual and c.span_ids and not c.decisive]


def is_supported(claim: Claim, threshold: float) -> bool:
    """A factual claim's verdict: cited, and the entailment model's or the judge's when one settled it,
    else the lexical score's."""
    if not claim.span_ids:
        return False
    return claim.support >= threshold if claim.judged is None else claim.judged


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
        claim.supported = is_supported(claim, threshold)
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
    return round(supported / factual, GROUNDEDNESS_DIGITS) if factual else 0.0


def verify_claims(answer: CitedAnswer, evidence: list[Evidence], *, mode: str, threshold: float) -> float | None:
    """The lexical verifier alone (no judge)."""
    if mode == "off":
        return None
    score_claims(answer, evidence)
    return apply_verdicts(answer, mode=mode, threshold=threshold)
