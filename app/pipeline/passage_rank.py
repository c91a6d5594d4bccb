"""Passage ranking: each candidate passage's features against the question, and the scorer that turns
them into the score evidence selection packs by.

The scorer behind the PassageScorer protocol is "handset": BM25 scaled to 0..1 (code halved, scraps
shortened), plus small adjustments for recency, trust, a page's lead and the search rank. A logistic
model over the same features, fitted on the labelled dev split, was measured against it and not kept
(python -m eval.train_passages; docs/EVALUATION.md): the features are here so that such a scorer, or
a model reranker's score, can be tried against the same evidence-recall figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from operator import mul
from typing import Protocol

from app.language.question import QuestionAnalysis
from app.language.time import WINDOW_DAYS, TimeClass
from app.pipeline.answerability_features import api_entry
from app.pipeline.passages import MIN_CHARS as MIN_PASSAGE_CHARS
from app.pipeline.passages import Passage

STABLE_WINDOW_DAYS = WINDOW_DAYS[TimeClass.stable]  # a window this wide: the question is not time-sensitive
MIN_BREVITY = 0.3  # a passage shorter than MIN_PASSAGE_CHARS keeps at least this share of its lexical score
CODE_WEIGHT = 0.5  # code repeats identifiers, which BM25 over-rewards: a code passage's lexical score counts half

FEATURES = (
    "lexical",  # BM25 scaled by the best passage, code halved, scraps shortened
    "code",  # a code block
    "lead",  # 1 / (1 + passage index): a page's opening says what it is about
    "search_rank",  # 1 / (1 + the page's search rank)
    "undated",  # time-sensitive question, page of unknown age
    "fresh",  # time-sensitive question, page dated inside the window
    "stale",  # page dated outside the window (but within the stale limit)
    "primary",  # a primary (vendor) domain
    "trusted",  # an operator-trusted domain
    "thin",  # extracted text under THIN_PAGE_DENSITY of the page: likely an empty shell
)
THIN_PAGE_DENSITY = 0.2


@dataclass(frozen=True, slots=True)
class RankingContext:
    """What every passage's features are computed against, once per selection."""

    question: QuestionAnalysis
    today: date
    freshness_days: int
    top: float  # the best lexical score (BM25, or the reranker's blend) in the candidate pool
    idf: dict[str, float]  # IDF of each question term over the pool (absent terms: the pool's maximum)
    trusted: frozenset[str]  # urls of pages on operator-trusted domains


def document_age_days(published: date | None, modified: date | None, today: date) -> int | None:
    """Age of what the page says now: a page published years ago but modified this week is current."""
    known = [d for d in (published, modified) if d is not None]
    return None if not known else (today - max(known)).days


def lexical_feature(p: Passage, rc: RankingContext) -> float:
    """FEATURES[0]: the passage's score scaled by the pool's best, code halved, scraps shortened."""
    short = len(p.text) < MIN_PASSAGE_CHARS and not api_entry(p.text.partition("\n")[0])
    brevity = max(MIN_BREVITY, len(p.text) / MIN_PASSAGE_CHARS) if short else 1.0
    return p.score / rc.top * (CODE_WEIGHT if p.kind == "code" else 1.0) * brevity


def passage_features(p: Passage, rc: RankingContext) -> tuple[float, ...]:
    code = p.kind == "code"
    lexical = lexical_feature(p, rc)
    age = document_age_days(p.doc.dates.published, p.doc.dates.modified, rc.today)
    time_sensitive = rc.freshness_days < STABLE_WINDOW_DAYS
    return (
        lexical,
        float(code),
        1.0 / (1 + p.index),
        1.0 / (1 + p.doc.rank),
        float(time_sensitive and age is None),
        float(time_sensitive and age is not None and age <= rc.freshness_days),
        float(age is not None and age > rc.freshness_days),
        float(p.doc.primary),
        float(p.doc.url in rc.trusted),
        float(p.doc.density < THIN_PAGE_DENSITY),
    )


class PassageScorer(Protocol):
    name: str
    doc_rank_weight: float  # choosing a page per domain: its search rank adds this / (1 + rank) ...
    doc_title_weight: float  # ... and the share of question terms in its title this much
    same_doc_discount: float  # each passage already taken from a page lowers that page's next one by this
    min_score: float  # a passage scoring at most this is never evidence

    def score(self, features: tuple[float, ...]) -> float: ...


# The hand-set adjustments, on the lexical score scaled to 0..1 by the best passage. Small next to it:
# they reorder near-ties, they do not lift an off-topic passage over an on-topic one.
HANDSET_WEIGHTS = {
    "lexical": 1.0,
    "lead": 0.1,
    "search_rank": 0.02,
    "undated": -0.1,
    "fresh": 0.05,
    "stale": -0.05,
    "primary": 0.1,
    "trusted": 0.05,
    "thin": -0.05,
}


class HandSetScorer:
    name = "handset"
    doc_rank_weight = 0.3
    doc_title_weight = 0.3
    same_doc_discount = 0.12
    min_score = 0.05

    def __init__(self) -> None:
        self._w = tuple(HANDSET_WEIGHTS.get(f, 0.0) for f in FEATURES)

    def score(self, features: tuple[float, ...]) -> float:
        # map(mul) runs in C; the zero weights' products add exact zeros, so the sum is unchanged.
        return math.fsum(map(mul, self._w, features))
