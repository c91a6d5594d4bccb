"""Time sensitivity, defined once: which class of freshness a question needs, and the evidence
window each class allows. The router, planner, gate and caches read these, never their own lists.

The class is a learned component (issue 9): a multinomial logistic regression over the question's
words, the asking sentence's words, the asked kind, the years it names and the old keyword rules as
features, fitted on the dev half of eval/labelled/time.jsonl (`python -m eval.train_time_class`, weights
in time_weights.json) and measured on the test half (`python -m eval.time_class`). Where the MiniLM
model is installed, the question's vector after its first two layers joins the features (weights in
time_weights-minilm.json, `--vectors`): it reads "cost" like "price" and "result" like "score", which
words seen in 600 questions cannot. The keyword rules
alone put "now" in "…and now it fails. Why?" or "exit status" in the live class (a 30-day window that
refuses reference pages), and "is github down" or "who won the final" in the stable one (a ten-year
window that cites old facts as current); they remain a feature and the fallback without weights."""

from __future__ import annotations

import enum
import json
import logging
import math
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from app.language.text import YEAR, words


class TimeClass(str, enum.Enum):
    live = "live"  # changes day to day: prices, status, scores, "today"
    news = "news"  # recent events: "latest", "this week", announcements
    dated = "dated"  # asks for what is current, without being live ("current CEO", "upcoming")
    stable = "stable"  # reference knowledge: age matters little


# Evidence window (days) per class when the request sets none.
WINDOW_DAYS = {TimeClass.live: 30, TimeClass.news: 90, TimeClass.dated: 730, TimeClass.stable: 3650}

_LIVE = re.compile(
    r"\b(prices?|pricing|costs?|stock|status|today|now|tonight|weather|score|rates?|fees?|"
    r"current(?:ly)? (?:price|cost|rate|fee|status|score))\b",
    re.I,
)
_NEWS = re.compile(r"\b(news|latest|newest|recent(?:ly)?|this (?:week|month|year)|announce[sd]?)\b", re.I)
_DATED = re.compile(r"\b(current(?:ly)?|upcoming|as of|schedule|nowadays)\b", re.I)

WEIGHTS_PATH = Path(__file__).with_name("time_weights.json")
VECTOR_WEIGHTS_PATH = Path(__file__).with_name("time_weights-minilm.json")
_use_model = True  # Settings.time_classifier, set at start-up (app/language/question.use_time_model)

log = logging.getLogger(__name__)


class QuestionEncoder(Protocol):
    """What the vector features need of a sentence model (app/providers/rerank/minilm_shallow.ShallowEncoder)."""

    @property
    def weights_digest(self) -> str: ...

    def shallow_vector(self, text: str, layers: int) -> Sequence[float]: ...


_encoder: QuestionEncoder | None = None  # set at start-up by use_vectors


def keyword_class(text: str) -> TimeClass:
    """The keyword rules: the first class whose words the text holds. A feature of the model, and the
    class itself when no weights ship."""
    if _LIVE.search(text):
        return TimeClass.live
    if _NEWS.search(text):
        return TimeClass.news
    if _DATED.search(text):
        return TimeClass.dated
    return TimeClass.stable


def features(question: str, asking: str, kind: str, today: date | None = None) -> set[str]:
    """What the model reads: words and word pairs of the whole text ("w:", "b:"), words of the asking
    sentence ("a:"), the asked kind ("k:"), the keyword rules on both ("r:", "ra:"), and whether a named
    year is past, this or last year, or ahead ("y:")."""
    toks = words(question)
    out = {f"w:{t}" for t in toks}
    out.update(f"b:{a} {b}" for a, b in zip(toks, toks[1:]))
    out.update(f"a:{t}" for t in words(asking))
    out.add(f"k:{kind}")
    out.add(f"r:{keyword_class(question).value}")
    out.add(f"ra:{keyword_class(asking).value}")
    year = (today or date.today()).year
    for y in {int(m) for m in YEAR.findall(question)}:
        out.add("y:past" if y < year - 1 else "y:ahead" if y > year else "y:now")
    return out


@dataclass(frozen=True, slots=True)
class TimeModel:
    classes: tuple[TimeClass, ...]
    bias: tuple[float, ...]
    weights: dict[str, tuple[float, ...]]
    points: tuple[float, float]  # decide's override_at, fresher_at
    dense: tuple[tuple[float, ...], ...] | None = None  # per class, its weights of the vector's dimensions
    dense_scale: float = 1.0
    dense_layers: int = 0
    encoder_digest: str = ""  # the MiniLM weights the dense weights were fitted over


def _read(path: Path) -> TimeModel:
    raw = json.loads(path.read_text(encoding="utf-8"))
    dense = raw.get("dense")
    return TimeModel(
        classes=tuple(TimeClass(c) for c in raw["classes"]),
        bias=tuple(raw["bias"]),
        weights={f: tuple(w) for f, w in raw["weights"].items()},
        points=(float(raw["override_at"]), float(raw["fresher_at"])),
        dense=tuple(tuple(float(row[c]) for row in dense) for c in range(len(raw["classes"]))) if dense else None,
        dense_scale=float(raw.get("dense_scale", 1.0)),
        dense_layers=int(raw.get("dense_layers", 0)),
        encoder_digest=str(raw.get("encoder_digest", "")),
    )


@lru_cache(maxsize=1)
def _model() -> TimeModel | None:
    """The weights with vector features when an encoder is set (use_vectors), else the words-only ones."""
    if _encoder is not None and VECTOR_WEIGHTS_PATH.is_file():
        return _read(VECTOR_WEIGHTS_PATH)
    return _read(WEIGHTS_PATH) if WEIGHTS_PATH.is_file() else None


def use_vectors(encoder: QuestionEncoder | None) -> bool:
    """Start-up: the sentence model whose first layers give the vector features, or None for the words-only
    weights. An encoder other than the one the weights were fitted over is refused (a vector of other
    weights means nothing to them): False, and the words-only weights decide. Loads the weights in use."""
    global _encoder
    _encoder = encoder
    _model.cache_clear()
    if encoder is None:
        return False
    model = _model()
    if model is None or model.dense is None or model.encoder_digest != encoder.weights_digest:
        if model is not None and model.dense is not None:
            log.warning("time model: words only (%s was fitted over other MiniLM weights)", VECTOR_WEIGHTS_PATH.name)
        _encoder = None
        _model.cache_clear()
        return False
    return True


def use_model(enabled: bool) -> None:
    """Settings.time_classifier: the fitted model beside the rules, or the rules alone."""
    global _use_model
    _use_model = enabled


def warm_up() -> None:
    """Load the weights (~10 ms of CPU, `python -m bench.warm_up`) at start-up, not in the first request."""
    _model()


def class_probabilities(feats: set[str], vector: Sequence[float] | None = None) -> dict[TimeClass, float] | None:
    """P(class) for a feature set (and the question's vector, for weights fitted with one), or None
    without fitted weights."""
    model = _model()
    if model is None:
        return None
    z = list(model.bias)
    for f in feats:
        w = model.weights.get(f)
        if w is not None:
            z = [a + b for a, b in zip(z, w)]
    if model.dense is not None and vector is not None:
        z = [a + model.dense_scale * sum(map(operator.mul, vector, col)) for a, col in zip(z, model.dense)]
    top = max(z)
    e = [math.exp(v - top) for v in z]
    s = sum(e)
    return {c: v / s for c, v in zip(model.classes, e)}


def question_vector(question: str) -> Sequence[float] | None:
    """The vector features of a question: the encoder's first layers, mean-pooled (None without them)."""
    model = _model()
    if _encoder is None or model is None or model.dense is None:
        return None
    return _encoder.shallow_vector(question, model.dense_layers)


def rules_class(question: str, kind: str = "other") -> TimeClass:
    """The keyword rules' class; a how-to is stable for them (a recipe does not age like a fact)."""
    return TimeClass.stable if kind == "how_to" else keyword_class(question)


def decide(rules: TimeClass, probs: dict[TimeClass, float], override_at: float, fresher_at: float) -> TimeClass:
    """The model's most probable class when it is fresher than the rules' (P >= `fresher_at`) or sure in
    either direction (P >= `override_at`); else the rules'. Fresher wins more easily: a class staler than
    the truth cites an outdated value as current, a fresher one abstains."""
    best = max(probs, key=probs.__getitem__)
    p = probs[best]
    if p >= override_at or (p >= fresher_at and WINDOW_DAYS[best] < WINDOW_DAYS[rules]):
        return best
    return rules


def time_class(question: str, asking: str | None = None, kind: str = "other") -> TimeClass:
    """The question's class, from the keyword rules and the fitted model (the rules alone without
    weights). `asking` is the sentence that asks (app/language/question.py), `kind` the asked kind's
    value; the two points of `decide` were chosen with the L2 strength by cross-validation on dev. A
    text the model knows no word of ("acme widgets") gets about its prior, whose most probable class is
    dated (0.31 against stable's 0.30; half the training questions are time-sensitive, over three
    classes): fresher than the rules, it wins."""
    rules = rules_class(question, kind)
    model = _model() if _use_model else None
    if model is None:
        return rules
    probs = class_probabilities(features(question, asking or question, kind), question_vector(question))
    return decide(rules, probs, *model.points) if probs is not None else rules


def default_window(cls: TimeClass, fallback: int) -> int:
    """The evidence window for a question whose request set none; `fallback` caps dated questions."""
    return min(fallback, WINDOW_DAYS[cls]) if cls is TimeClass.dated else WINDOW_DAYS[cls]
