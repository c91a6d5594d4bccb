"""Passage ranking: each candidate passage's features against the question, and the scorer that turns
them into the score evidence selection packs by.

Two scorers read the same features. "handset" is the sum of hand-set adjustments the service used
first (BM25 scaled to 0..1, minus code and scraps, plus recency, trust, a page's lead and the search
rank). "learned" is a logistic model fitted on the labelled development split (python -m
eval.train_passages): P(this passage holds the answer), the label being a gold answer string inside
the passage. Its weights file records what it was fitted on and its development figures.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from app.language.question import QuestionAnalysis
from app.language.text import terms
from app.language.time import WINDOW_DAYS, TimeClass
from app.pipeline.answerability_features import api_entry
from app.pipeline.passages import MIN_CHARS as MIN_PASSAGE_CHARS
from app.pipeline.passages import Passage

STABLE_WINDOW_DAYS = WINDOW_DAYS[TimeClass.stable]  # a window this wide: the question is not time-sensitive
MIN_BREVITY = 0.3  # a passage shorter than MIN_PASSAGE_CHARS keeps at least this share of its lexical score
CODE_WEIGHT = 0.5  # code repeats identifiers, which BM25 over-rewards: a code passage's lexical score counts half
LOGIT_CLAMP = 30.0

FEATURES = (
    "lexical",  # BM25 scaled by the best passage, code halved, scraps shortened (the hand-set base)
    "code",  # a code block
    "lead",  # 1 / (1 + passage index): a page's opening says what it is about
    "search_rank",  # 1 / (1 + the page's search rank)
    "undated",  # time-sensitive question, page of unknown age
    "fresh",  # time-sensitive question, page dated inside the window
    "stale",  # page dated outside the window (but within the stale limit)
    "primary",  # a primary (vendor) domain
    "trusted",  # an operator-trusted domain
    "thin",  # extracted text under THIN_PAGE_DENSITY of the page: likely an empty shell
    "coverage",  # IDF-weighted share of the question's terms the passage (with title, heading) holds
    "heading_cover",  # share of the question's terms in the passage's section heading
    "title_cover",  # share of the question's terms in the page title
    "adjacent",  # share of the question's consecutive term pairs found side by side in the passage
    "subject_cover",  # share of the question's subject (defined term / object of a how-to) present
    "anchor_cover",  # share of the question's anchors (names, versions, years) present
    "value_digits",  # a value question (price, count, date …) and the passage holds a digit
    "api_entry",  # the passage opens with a reference-documentation entry ("json.loads(s)¶")
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


def _share(wanted: tuple[str, ...] | list[str], have: set[str]) -> float:
    return sum(1 for t in wanted if t in have) / len(wanted) if wanted else 0.0


@lru_cache(maxsize=4096)
def _term_set(text: str) -> frozenset[str]:
    return frozenset(terms(text))


def passage_features(p: Passage, rc: RankingContext) -> tuple[float, ...]:
    q = rc.question
    short = len(p.text) < MIN_PASSAGE_CHARS and not api_entry(p.text.partition("\n")[0])
    brevity = max(MIN_BREVITY, len(p.text) / MIN_PASSAGE_CHARS) if short else 1.0
    code = p.kind == "code"
    lexical = p.score / rc.top * (CODE_WEIGHT if code else 1.0) * brevity
    age = document_age_days(p.doc.dates.published, p.doc.dates.modified, rc.today)
    time_sensitive = rc.freshness_days < STABLE_WINDOW_DAYS
    have = set(p.terms)
    q_terms = q.terms
    total_idf = sum(rc.idf.get(t, 0.0) for t in q_terms) or 1.0
    coverage = sum(rc.idf.get(t, 0.0) for t in q_terms if t in have) / total_idf
    adjacent = 0.0
    if len(q_terms) > 1 and coverage:
        pairs = set(zip(p.terms, p.terms[1:]))
        wanted = list(zip(q_terms, q_terms[1:]))
        adjacent = sum(1 for pair in wanted if pair in pairs) / len(wanted)
    anchors = [t for a in q.anchors for t in terms(a)]
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
        coverage,
        _share(q_terms, set(_term_set(p.heading))) if p.heading else 0.0,
        _share(q_terms, set(_term_set(p.doc.title))) if p.doc.title else 0.0,
        adjacent,
        _share(q.subject, have),
        _share(anchors, have),
        float(q.asks_value and any(c.isdigit() for c in p.text)),
        float(bool(api_entry(p.text.partition("\n")[0]))),
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
        return math.fsum(w * f for w, f in zip(self._w, features) if w)


class LearnedScorer:
    """P(the passage holds the answer) from a logistic model fitted on dev; the page choice and the
    packing constants were chosen on dev with it (the weights file says so)."""

    name = "learned"

    def __init__(self, fitted: dict) -> None:
        if tuple(fitted["features"]) != FEATURES:
            raise ValueError(
                "passage weights were fitted on other features; refit them (python -m eval.train_passages)"
            )
        self.bias = float(fitted["bias"])
        self._w = tuple(float(w) for w in fitted["weights"])
        self.doc_rank_weight = float(fitted.get("doc_rank_weight", 0.0))
        self.doc_title_weight = float(fitted.get("doc_title_weight", 0.0))
        self.same_doc_discount = float(fitted.get("same_doc_discount", 0.0))
        self.min_score = float(fitted.get("min_score", 0.0))

    def score(self, features: tuple[float, ...]) -> float:
        z = self.bias + math.fsum(w * f for w, f in zip(self._w, features))
        return 1 / (1 + math.exp(-max(-LOGIT_CLAMP, min(LOGIT_CLAMP, z))))


WEIGHTS_PATH = Path(__file__).with_name("passage_weights.json")


@lru_cache(maxsize=2)
def _fitted(path: Path) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def build_passage_scorer(name: str) -> PassageScorer:
    """ "learned" when its weights ship with the code, else the hand-set sum."""
    if name == "learned":
        fitted = _fitted(WEIGHTS_PATH)
        if fitted is not None:
            return LearnedScorer(fitted)
    return HandSetScorer()
