"""Fit the learned answerability scorer on the labelled development split, and only on it.

    python -m eval.train_answerability [--cases eval/labelled/questions] [--out app/pipeline/answerability_weights.json]
    python -m eval.train_answerability --similarity minilm   # -> app/pipeline/answerability_weights-minilm.json

1. Runs the dev split once (extractive mode, lexical scorer) to collect the evidence each case's
   composer saw (the service's own retrieval, not the gold pages).
2. Lists every candidate sentence with its features (app/pipeline/answerability.py FEATURES);
   a sentence is a positive when it states a gold answer of an answerable case; every sentence of
   an unanswerable case is a negative.
3. Fits an L2-regularised logistic regression (Newton's method, pure Python: 14 features).
4. Picks the thresholds on dev at the case level (the best sentence's probability): answerable_at
   for the best balanced accuracy, skip_model_below as the highest value with no answerable case
   under it. Writes the weights with what they were fitted on and the dev figures.

The test split is never read here; `python -m eval.runner --split test` reports it.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

from app.language.question import analyse
from app.pipeline.answerability import (
    FEATURES,
    LEXICAL,
    LearnedAnswerability,
    LexicalAnswerability,
    SentenceMatch,
    weights_path,
)
from eval.calibrate import _evidence
from eval.cases import Case, load_cases
from eval.metrics import states
from eval.runner import run_mode

L2 = 1.0


def candidates(
    paths: list[str], split: str, ranker=None
) -> Iterator[tuple[Case, str, list[tuple[SentenceMatch, bool]]]]:
    """Per case with evidence: (case, the question as asked, [(candidate sentence, states a gold
    answer)]), every candidate the lexical scorer lists over the evidence the service selected."""
    # The regression cases (eval/cases, no split) are development cases by definition.
    cases = [c for c in load_cases(paths) if c.split == split or (split == "dev" and not c.slice)]
    # The lexical scorer serves while collecting: the evidence must not depend on the weights being fitted.
    run = run_mode(cases, "extractive", keep_evidence=True, overrides={"answerability_scorer": "lexical"})
    scorer = LexicalAnswerability(ranker=ranker)
    scorer.keep = 10**6
    for case in cases:
        got = run.evidence.get(case.id)
        if not got or not got["evidence"]:
            continue
        golds = [g.lower() for g in case.gold_answers or case.gold_all] if case.expected_status == "grounded" else []
        question = got["question"] or case.question
        a = scorer.assess(analyse(question), _evidence(got["evidence"]), date.today())
        yield case, question, [(m, any(states(m.quoted.lower(), g) for g in golds)) for m in a.best if m.features]


def collect(paths: list[str], split: str, ranker=None) -> list[tuple[str, bool, list[tuple[tuple[float, ...], bool]]]]:
    """Per case: (id, answerable with the gold in evidence, [(features, states the gold)])."""
    out = []
    for case, _, matches in candidates(paths, split, ranker):
        rows = [(m.features, label) for m, label in matches]
        answerable = any(label for _, label in rows)
        if case.expected_status == "grounded" and not answerable:
            continue  # the answer never reached the composer: a recall failure, not answerability's
        out.append((case.id, answerable, rows))
    return out


def fit(samples: list[tuple[tuple[float, ...], bool]], iterations: int = 12) -> tuple[float, list[float]]:
    k = len(FEATURES) + 1
    w = [0.0] * k
    for _ in range(iterations):
        grad = [0.0] * k
        hess = [[0.0] * k for _ in range(k)]
        for features, label in samples:
            x = (1.0, *features)
            z = sum(wi * xi for wi, xi in zip(w, x))
            p = 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))
            r = p - (1.0 if label else 0.0)
            s = p * (1 - p)
            for i in range(k):
                grad[i] += r * x[i]
                xi_s = x[i] * s
                row = hess[i]
                for j in range(i, k):
                    row[j] += xi_s * x[j]
        for i in range(k):
            for j in range(i):
                hess[i][j] = hess[j][i]
            if i:  # no penalty on the bias
                grad[i] += L2 * w[i]
                hess[i][i] += L2
        step = _solve(hess, grad)
        w = [wi - si for wi, si in zip(w, step)]
    return w[0], w[1:]


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        if abs(m[col][col]) < 1e-12:
            continue
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] if abs(m[i][i]) > 1e-12 else 0.0 for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", nargs="+", default=["eval/labelled/questions", "eval/cases"])
    ap.add_argument("--out", help="default: the file the service reads for --similarity (answerability.weights_path)")
    ap.add_argument("--save", help="also write the collected candidates here (JSON)")
    ap.add_argument("--load", help="fit on candidates collected earlier instead of running the split")
    ap.add_argument("--similarity", default="", help="a sentence ranker for the similarity feature, e.g. minilm")
    args = ap.parse_args()
    args.out = args.out or str(weights_path(args.similarity))
    ranker = None
    if args.similarity:
        from app.providers.rerank.base import build_named_reranker
        from app.settings import Settings
        from app.state import load_builtin_providers

        load_builtin_providers()
        ranker = build_named_reranker(args.similarity, Settings())
    if args.load:
        cases = [(cid, ok, [(tuple(f), label) for f, label in rows]) for cid, ok, rows in json.load(open(args.load))]
    else:
        cases = collect(args.cases, "dev", ranker)
    if args.save:
        Path(args.save).write_text(json.dumps(cases), encoding="utf-8")
    samples = [row for _, _, rows in cases for row in rows]
    bias, weights = fit(samples)
    model = LearnedAnswerability({"features": FEATURES, "bias": bias, "weights": weights})
    top1 = [max(rows, key=lambda r: model.sentence_score(r[0]))[1] for _, ok, rows in cases if ok]
    case_scores = [(ok, max((model.sentence_score(f) for f, _ in rows), default=0.0)) for _, ok, rows in cases]
    pos = [s for ok, s in case_scores if ok]
    neg = [s for ok, s in case_scores if not ok]
    best_t, best_bal = 0.0, 0.0
    for i in range(1, 100):
        t = i / 100
        bal = (sum(s >= t for s in pos) / max(1, len(pos)) + sum(s < t for s in neg) / max(1, len(neg))) / 2
        if bal > best_bal:
            best_t, best_bal = t, bal
    safe = max((i / 100 for i in range(0, 100) if all(s >= i / 100 for s in pos)), default=0.0)
    report = {
        "features": list(FEATURES),
        "bias": round(bias, 5),
        "weights": [round(w, 5) for w in weights],
        "similarity": args.similarity,
        "fitted_on": {
            "cases": args.cases,
            "split": "dev",
            "case_count": len(cases),
            "sentences": len(samples),
            "positives": sum(label for _, label in samples),
            "at": datetime.now(UTC).isoformat()[:19],
        },
        "dev": {
            "top1_states_gold": round(sum(top1) / max(1, len(top1)), 4),
            "answerable_at": best_t,
            "balanced_accuracy": round(best_bal, 4),
            "skip_model_below": safe,
            "answered_at_threshold": round(sum(s >= best_t for s in pos) / max(1, len(pos)), 4),
            "declined_at_threshold": round(sum(s < best_t for s in neg) / max(1, len(neg)), 4),
        },
    }
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report["dev"], indent=1), f"\n{len(cases)} cases, {len(samples)} sentences -> {args.out}")
    lexical_top1 = [max(rows, key=lambda r: r[0][LEXICAL])[1] for _, ok, rows in cases if ok]
    print(f"lexical top-1 states the gold: {sum(lexical_top1) / max(1, len(lexical_top1)):.4f}")


if __name__ == "__main__":
    main()
