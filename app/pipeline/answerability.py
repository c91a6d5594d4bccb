"""Answerability: does the evidence hold an answer to the question that was asked?

A component behind a Protocol, returning a score in 0..1 with its reasons and the candidate answer
sentences, best first. The lexical scorer types the question (app.language.question) and looks for
a sentence that is both about the question (IDF-weighted coverage of its terms, anchors present)
and of the asked type (a price for "how much", a person for "who", a call or option for "how do
I"). The extractive composer answers from these sentences; with a composing model the score is
only used to skip a call whose evidence is near-irrelevant (policy.skip_model_below).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from app.domain.types import Evidence
from app.language.anchors import about_a_sibling, covered
from app.language.question import AskedKind, QuestionAnalysis
from app.language.text import YEAR, terms
from app.pipeline.answerability_features import (  # noqa: F401  (the feature scales: re-exported)
    DEFINITION_HEAD_WORDS,
    FEATURES,
    LENGTH_NORM_CHARS,
    LEXICAL,
    MAX_CAPS_SHARE,
    MAX_QUOTABLE_CHARS,
    MIN_QUOTABLE_CHARS,
    PASSAGE_SCORE_CAP,
    QUESTION_TERMS_NORM,
    as_definition,
    quotable,
    quote,
    sentence_features,
    sentences_with_leads,
    typed_match,
)
from app.providers.rerank.base import Reranker
from app.settings import Settings

log = logging.getLogger(__name__)

# Tuning numbers of the lexical scorer. The learned scorer's weights (answerability_weights.json) were
# fitted on the dev split over features computed with these values: change one, refit the weights
# (python -m eval.train_answerability) and re-run the evaluation.
MAX_CANDIDATES = 12  # candidate sentences returned, best first (the extractive composer quotes at most 3)
UNTYPED_WEIGHT = 0.45  # a relevant sentence not of the asked kind counts this share of a typed one
CONTEXT_WEIGHT = 0.5  # a question term found only in the title/section counts this share of one in the sentence
ANCHOR_PENALTY = 0.5  # score multiplier for a passage lacking a name/version/year the question holds
TITLE_ONLY_RELEVANCE = 0.5  # relevance multiplier for a sentence on topic only through its title
UNSEEN_TERM_DF = 0.5  # document frequency assumed for a question term no sentence holds: keeps its IDF finite
PASSAGE_TIE_BREAK = 0.02  # per unit of passage score: between equal sentences the better passage wins
POSITION_TIE_BREAK = 0.005  # per sentence index: between equal sentences the earlier one wins
KIND_CHECK_TOP = 5  # "kind_absent_in_top": none of this many best candidates is of the asked kind
BRIDGE_POOL = 8  # multi-hop pairs are sought among this many best sentences (pairs grow quadratically)
BRIDGE_DISCOUNT = 0.95  # a pair's score is discounted by this: two sentences must beat the best single one clearly
BRIDGE_SECOND_SHARE = 0.99  # the pair's second sentence ranks just under its first, above every other
LOGIT_CLAMP = 30.0  # |z| bound before exp() (no overflow); the sigmoid is 0 or 1 to 13 digits there
SCORE_DIGITS = 4  # scores are rounded to this many decimals (readable traces, stable ties)
RELEVANCE_DIGITS = 3  # relevance is rounded to this many decimals

_ANCHORS = FEATURES.index("anchors_ok")
_PAST_TENSE = re.compile(
    r"\b(won|did|was|were|happened|took place|released|launched|ended|finished|scored|"
    r"elected|announced|reported|had)\b",
    re.I,
)


@dataclass(slots=True)
class SentenceMatch:
    evidence: Evidence
    sentence: str
    position: int  # sentence index in its passage
    relevance: float  # 0..1: share of the question's (IDF-weighted) terms the sentence and its context hold
    typed: bool  # states something of the asked kind
    score: float
    found: frozenset[str] = frozenset()  # the question terms it holds (sentence or context)
    terms: frozenset[str] = frozenset()  # all its content terms
    lead: str = ""  # the API entry it describes ("re.IGNORECASE"), in reference documentation
    rank: float = 0.0  # the order candidates are offered in: score, plus meaning when a ranker is set
    bridge: bool = False  # one of a multi-hop pair, offered first together
    features: tuple[float, ...] = ()  # FEATURES, for the learned scorer and its training

    @property
    def quoted(self) -> str:
        """The sentence as an answer quotes it: under its API entry when it does not name it."""
        return quote(self.sentence, self.lead)


@dataclass(slots=True)
class Answerability:
    score: float  # 0..1; below policy.answerable_at the extractive composer declines
    reasons: list[str] = field(default_factory=list)
    best: list[SentenceMatch] = field(default_factory=list)  # candidate answer sentences, best first


class AnswerabilityScorer(Protocol):
    name: str

    def assess(self, question: QuestionAnalysis, evidence: list[Evidence], today: date) -> Answerability: ...


class LexicalAnswerability:
    """Question-type matching over IDF-weighted term coverage (see module docstring)."""

    name = "lexical"
    keep = MAX_CANDIDATES  # candidates returned (training raises it to see them all)

    def __init__(
        self,
        untyped_weight: float = UNTYPED_WEIGHT,
        context_weight: float = CONTEXT_WEIGHT,
        anchor_penalty: float = ANCHOR_PENALTY,
        ranker: Reranker | None = None,
    ):
        self.ranker = ranker  # feeds the "similarity" feature (0 without one)
        self.untyped_weight = untyped_weight  # a relevant sentence of the wrong type counts this much
        self.context_weight = context_weight  # a term found only in the title/section counts this much
        self.anchor_penalty = anchor_penalty  # a passage lacking a name/version/year the question holds

    async def assess_off_loop(self, question: QuestionAnalysis, evidence: list[Evidence], today: date) -> Answerability:
        """assess, in a worker thread when a sentence model feeds it: the model costs up to a second of
        CPU, which must not stall the event loop (numpy's matmuls release the GIL)."""
        if self.ranker is None:
            return self.assess(question, evidence, today)
        return await asyncio.to_thread(self.assess, question, evidence, today)

    def assess(self, question: QuestionAnalysis, evidence: list[Evidence], today: date) -> Answerability:
        reasons: list[str] = []
        future = _future_event(question.text, today)
        if future:
            # "Who won the 2031 final?" asked in 2026: no page can report what has not happened.
            return Answerability(0.0, [f"event_in_the_future ({future})"])
        q = set(question.terms)
        if not q:
            return Answerability(0.0, ["question_without_terms"])
        rows: list[tuple] = []
        df: Counter = Counter()
        for ev in evidence:
            if ev.kind != "prose":
                continue
            context = set(terms(f"{ev.title} {ev.section}"))
            passage = set(terms(ev.text)) | context
            if about_a_sibling(passage, list(question.anchors)):
                continue  # "The T9 weighs 895 g" does not answer for the T7
            anchors_ok = all(covered(a, passage) for a in question.anchors)
            title_terms = set(terms(ev.title))
            for pos, (sentence, lead, since) in enumerate(sentences_with_leads(ev.text)):
                if not quotable(sentence, defines_entry=bool(lead) and since == 0):
                    continue
                st = set(terms(f"{lead} {sentence}"))
                if about_a_sibling(st, list(question.anchors)):
                    continue  # a sentence about the S2 inside a page about the S3
                rows.append((ev, pos, sentence, st, context, anchors_ok, lead, since, title_terms))
                df.update(st & q)
        if not rows:
            return Answerability(0.0, ["no_quotable_sentence"])
        n = len(rows)
        idf = {t: math.log(1 + n / (df[t] or UNSEEN_TERM_DF)) for t in q}
        total = math.fsum(idf.values())
        matches: list[SentenceMatch] = []
        subject = set(question.subject or question.anchors)
        for ev, pos, sentence, st, context, anchors_ok, lead, since, title_terms in rows:
            in_sentence = math.fsum(idf[t] for t in q if covered(t, st))
            in_context = math.fsum(idf[t] for t in q if not covered(t, st) and covered(t, context))
            found = in_sentence + self.context_weight * in_context
            if not found:
                continue  # shares no term with the question, even through its title: no candidate
            relevance = found / total
            if not st & q:
                relevance *= TITLE_ONLY_RELEVANCE  # on topic only through its title
            typed = typed_match(question, f"{lead} {sentence}" if lead else sentence)
            score = relevance * (1.0 if typed else self.untyped_weight)
            if not anchors_ok:
                score *= self.anchor_penalty
            score += (
                PASSAGE_TIE_BREAK * ev.answer_score - POSITION_TIE_BREAK * pos
            )  # tie-breaks: the better passage, the earlier sentence
            held = frozenset(t for t in q if covered(t, st) or covered(t, context))
            features = sentence_features(
                question,
                q,
                subject,
                ev,
                pos,
                sentence,
                lead,
                since,
                title_terms,
                relevance=relevance,
                in_sentence=in_sentence,
                in_context=in_context,
                total=total,
                typed=typed,
                anchors_ok=anchors_ok,
                score=score,
            )
            matches.append(
                SentenceMatch(
                    ev,
                    sentence,
                    pos,
                    round(relevance, RELEVANCE_DIGITS),
                    typed,
                    0.0,
                    held,
                    frozenset(st),
                    lead,
                    features=features,
                )
            )
        if not matches:
            return Answerability(0.0, ["no_sentence_shares_a_question_term"])
        top_relevance = max(m.relevance for m in matches) or 1.0
        sims = self._similarities(question.text, matches)
        similar = sims is not None
        for m, sim in zip(matches, sims if sims is not None else [0.0] * len(matches)):
            m.features = (*m.features[:-2], m.relevance / top_relevance, sim)
            m.score = round(self.sentence_score(m.features, similar), SCORE_DIGITS)
        matches.sort(key=lambda m: -m.score)
        matches = self._bridged(matches, q, idf, total, similar)
        top_score = matches[0].score
        for m in matches:
            m.rank = m.score
        best = max(matches, key=lambda m: m.score)
        if not best.typed:
            reasons.append(f"no_sentence_of_kind ({question.kind.value})")
        if not any(m.typed for m in matches[:KIND_CHECK_TOP]) and question.kind is not AskedKind.other:
            reasons.append(f"kind_absent_in_top ({question.kind.value})")
        missing = [
            a
            for a in question.anchors
            if not any(covered(a, set(terms(f"{e.title} {e.section} {e.text}"))) for e in evidence)
        ]
        if missing:
            reasons.append(f"anchors_missing ({', '.join(missing)})")
        reasons.append(f"best_relevance={best.relevance}")
        return Answerability(round(min(1.0, top_score), SCORE_DIGITS), reasons, matches[: self.keep])

    def _similarities(self, question: str, matches: list[SentenceMatch]) -> list[float] | None:
        """The sentence ranker's cosine of each candidate with the question; None when there is no
        ranker, or when a stored-vectors-only ranker (`GA_SENTENCE_RANKER=auto`) lacks a candidate's
        vector (a web page): the request is then scored without the feature, by weights fitted
        without it, rather than with a similarity of 0 that those weights would read as "unrelated"."""
        if self.ranker is None:
            return None
        quoted = [m.quoted for m in matches]
        if getattr(self.ranker, "stored_only", False):  # the MiniLM ranker under "auto"
            found = self.ranker.score_stored(question, quoted)  # type: ignore[attr-defined]
            return None if any(s is None for s in found) else [float(s) for s in found if s is not None]
        return self.ranker.score(question, quoted)

    def sentence_score(self, features: tuple[float, ...], similar: bool = False) -> float:
        """The hand-set score: relevance × type match × anchors, with tie-breaks (lexical_score).
        `similar`: the similarity feature holds the ranker's cosine (the learned scorer's weights)."""
        return features[LEXICAL]

    def _bridged(
        self, matches: list[SentenceMatch], q: set[str], idf: dict[str, float], total: float, similar: bool = False
    ) -> list[SentenceMatch]:
        """Multi-hop: two sentences joined by an entity they share ("made by Nimbus Devices" +
        "Nimbus Devices is headquartered in Tampere") answer together what neither answers alone.
        The pair is scored on the union of the question terms they hold; it leads when it beats the
        best single sentence."""
        top = matches[:BRIDGE_POOL]
        best_pair, best_score = None, matches[0].score if matches else 0.0
        for i, a in enumerate(top):
            for b in top[i + 1 :]:
                bridge = (a.terms & b.terms) - q
                if not bridge or a.found <= b.found or b.found <= a.found:
                    continue
                union = math.fsum(idf[t] for t in a.found | b.found) / total
                lead_f = a.features if a.score >= b.score else b.features
                joined = list(lead_f)
                joined[0] = joined[FEATURES.index("sentence_coverage")] = union
                joined[FEATURES.index("relevance_ratio")] = 1.0
                # Together they hold the anchors one of them may lack ("Zephyr X2" + "Tampere").
                joined[FEATURES.index("anchors_ok")] = max(a.features[_ANCHORS], b.features[_ANCHORS])
                joined[FEATURES.index("typed")] = float(a.typed or b.typed)
                joined[LEXICAL] = union * (1.0 if (a.typed or b.typed) else self.untyped_weight)
                score = self.sentence_score(tuple(joined), similar) * BRIDGE_DISCOUNT
                if score > best_score:
                    best_pair, best_score = (a, b), score
        if best_pair is None:
            return matches
        a, b = sorted(best_pair, key=lambda m: -m.typed)
        first = SentenceMatch(
            a.evidence,
            a.sentence,
            a.position,
            a.relevance,
            a.typed,
            round(best_score, SCORE_DIGITS),
            a.found,
            a.terms,
            a.lead,
            bridge=True,
            features=a.features,
        )
        second = SentenceMatch(
            b.evidence,
            b.sentence,
            b.position,
            b.relevance,
            b.typed,
            round(best_score * BRIDGE_SECOND_SHARE, SCORE_DIGITS),
            b.found,
            b.terms,
            b.lead,
            bridge=True,
            features=b.features,
        )
        return [first, second, *(m for m in matches if m is not a and m is not b)]


class LearnedAnswerability(LexicalAnswerability):
    """The same candidates and features, scored by a logistic model fitted on the labelled
    development split (python -m eval.train_answerability): P(this sentence states the answer).
    The weights file records what it was fitted on and its development figures."""

    name = "learned"

    def __init__(self, weights: dict, *, similarity_weights: dict | None = None, **kw):
        super().__init__(**kw)
        for fitted in (weights, similarity_weights):
            if fitted is not None and tuple(fitted["features"]) != FEATURES:
                raise ValueError("answerability weights were fitted on other features; refit them")
        self.bias = float(weights["bias"])
        self.weights = tuple(float(w) for w in weights["weights"])
        # Weights fitted with the sentence ranker's similarity, for requests whose candidates all have
        # it; their bias moved so that their calibrated threshold lands on the default one.
        self.similar_bias, self.similar_weights = self.bias, self.weights
        if similarity_weights is not None:
            self.similar_bias = float(similarity_weights["bias"]) + SIMILARITY_BIAS_SHIFT
            self.similar_weights = tuple(float(w) for w in similarity_weights["weights"])

    def sentence_score(self, features: tuple[float, ...], similar: bool = False) -> float:
        bias, weights = (self.similar_bias, self.similar_weights) if similar else (self.bias, self.weights)
        z = bias + sum(w * f for w, f in zip(weights, features))
        return 1 / (1 + math.exp(-max(-LOGIT_CLAMP, min(LOGIT_CLAMP, z))))


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


# The extractive composer's threshold as calibrated for the default weights (Settings.answerable_at's
# default), and the one the similarity weights were calibrated at on dev (docs/EVALUATION.md: 0.24 and
# 0.26). Moving the similarity weights' bias by the difference of the two logits makes one threshold
# serve both: P >= 0.24 after the move exactly when P >= 0.26 before it.
DEFAULT_ANSWERABLE_AT: float = Settings.model_fields["answerable_at"].default
SIMILARITY_ANSWERABLE_AT = 0.26
SIMILARITY_BIAS_SHIFT = _logit(DEFAULT_ANSWERABLE_AT) - _logit(SIMILARITY_ANSWERABLE_AT)


WEIGHTS_PATH = Path(__file__).with_name("answerability_weights.json")


def weights_path(similarity: str = "") -> Path:
    """The weights fitted with this sentence ranker's similarity feature (answerability_weights-minilm.json
    for "minilm"); without a ranker, the default file, whose similarity weight is 0."""
    return WEIGHTS_PATH.with_name(f"answerability_weights-{similarity}.json") if similarity else WEIGHTS_PATH


@lru_cache(maxsize=4)
def fitted_weights(similarity: str = "") -> dict | None:
    path = weights_path(similarity)
    if similarity and not path.is_file():
        # Weights fitted without the feature ignore it: the ranker would cost time for nothing.
        log.warning(
            "no answerability weights fitted with %r (%s): the similarity feature is unused", similarity, path.name
        )
        path = WEIGHTS_PATH
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def build_scorer(name: str, ranker: Reranker | None = None) -> LexicalAnswerability:
    """ "learned" when its weights ship with the code, else "lexical". With a sentence ranker the
    learned scorer uses the weights fitted with that ranker's similarity feature."""
    weights = fitted_weights("") if name == "learned" else None
    if weights is not None:
        # Without weights fitted with this ranker its similarity would be ignored: no ranker then.
        similar = fitted_weights(ranker.name) if ranker is not None and weights_path(ranker.name).is_file() else None
        return LearnedAnswerability(weights, similarity_weights=similar, ranker=ranker if similar else None)
    return LexicalAnswerability(ranker=ranker)


# Kinds whose type check is precise enough to hold a model's answer to it (values are parsed by a
# measured parser; an attribute must be named): an answer that states none of the asked kind does
# not answer, whatever its citations support.
CHECKED_KINDS = frozenset(
    {
        AskedKind.price,
        AskedKind.count,
        AskedKind.measure,
        AskedKind.percent,
        AskedKind.date,
        AskedKind.version,
        AskedKind.attribute,
    }
)


def answer_states_kind(question: QuestionAnalysis, sentences: list[str], *, by_model: bool = False) -> bool:
    """Does a kept answer sentence state something of the asked kind? (True for unchecked kinds.)
    A model's answer needs a value of the kind, not the question's own noun beside it: the model
    read the sentence and chose it (paraphrase is its job), verification checks it is supported."""
    if question.kind not in CHECKED_KINDS:
        return True
    return any(
        typed_match(question, s, beside_focus=not by_model) or _states_code_default(question, s, by_model=by_model)
        for s in sentences
    )


# A keyword default in an API signature ("sqlite3.connect(database, timeout=5.0, ...)", "Queue(maxsize=0)")
# is the documented value, its unit the docs' convention: it states a count or a measure. Inside a call's
# parentheses and without spaces around "=", as signatures are written, so prose arithmetic ("x = 5"),
# environment settings ("PYTHONUNBUFFERED=1") and URL queries ("?page=2") are not read as one.
_CALL_ARGS = re.compile(r"[\w.]\(([^()]*)\)")
_CODE_DEFAULT = re.compile(r"(?:^|[,*\s])([A-Za-z_]\w*)=(-?\d+(?:\.\d+)?)(?!\w|\.\d)")


def _states_code_default(question: QuestionAnalysis, sentence: str, *, by_model: bool) -> bool:
    """A count or measure question answered by a signature's default. Without a model that chose the
    sentence, the parameter must name a question term ("sleep=0.250" for "how long does it sleep")."""
    if question.kind not in (AskedKind.count, AskedKind.measure):
        return False
    q = set(question.terms)
    return any(
        by_model or q & set(terms(m.group(1)))
        for call in _CALL_ARGS.finditer(sentence)
        for m in _CODE_DEFAULT.finditer(call.group(1))
    )


def about_other_member(question: QuestionAnalysis, sentence: str) -> bool:
    """The sentence is about a sibling of the question's model anchor (the S2 for the S3)."""
    return about_a_sibling(set(terms(sentence)), list(question.anchors))


def _future_event(question: str, today: date) -> int | None:
    """A year after today's in a question that asks, in the past tense, what happened."""
    if not _PAST_TENSE.search(question):
        return None
    future = [int(y) for y in YEAR.findall(question) if int(y) > today.year]
    return max(future) if future else None
