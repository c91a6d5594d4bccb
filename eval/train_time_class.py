"""Fit the time-sensitivity model (app/language/time.py) on the dev half of eval/labelled/time.jsonl.

    python -m eval.train_time_class            # 5-fold CV on dev for L2 and the override point, fit, write
    python -m eval.train_time_class --cv-only  # the CV table only
    python -m eval.train_time_class --vectors  # with the MiniLM vector features: time_weights-minilm.json
    python -m eval.train_time_class --vectors --layers 6 --cv-only   # the depth compared (1, 2, 6)

With --vectors the question's MiniLM vector after the model's first VECTOR_LAYERS layers (mean-pooled,
unit length, times a scale chosen with L2 by the same cross-validation) joins the binary features.

Training data: the time questions' dev half and the docs-corpus questions' dev half as stable
(eval/time_class.py says why). Multinomial logistic regression over binary features (app.language.time.features), full-batch gradient
descent with Adam, L2 on the weights (not the biases). The L2 strength and the probabilities at which the
model's class replaces the rules' (in either direction; when fresher) are chosen together by 5-fold
cross-validation on dev, by the least cost with a staler error counting twice a fresher one. Only dev is read; test figures come from
`python -m eval.time_class`. Deterministic: folds by a hash of the id, no random state.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter
from datetime import date

import numpy as np

from app.language.question import asked_kind, asking_sentence
from app.language.time import VECTOR_WEIGHTS_PATH, WEIGHTS_PATH, TimeClass, decide, features, rules_class
from eval.time_class import ORDER, error_direction, load, load_docs

CLASSES = ORDER  # the weights file's class order
L2_GRID = (3e-4, 1e-3, 3e-3, 1e-2)
# --vectors: the vector features' scale against the binary ones (an L2 on them relative to the rest), and
# how many of MiniLM's six layers make them: two came within 7 of the six's dev CV cost (118 vs 111; one:
# 142) at a third of the CPU (stop 52, docs/EVALUATION.md).
SCALE_GRID = (3.0, 10.0)
VECTOR_LAYERS = 2
# The model's class replaces the rules' at `override_at` in either direction (1.01: never), and at
# `fresher_at` when it is fresher than the rules' (0: whenever fresher).
OVERRIDE_GRID = (0.5, 0.6, 0.7, 0.8, 0.9, 1.01)
FRESHER_GRID = (0.0, 0.4, 0.5, 0.6, 0.7)
FOLDS = 5
STALER_COST = 2
STEPS = 400
LR = 0.05
# The day the labels were written: "y:past"/"y:now" features are relative to it while fitting.
LABELLED_ON = date(2026, 12, 7)


def keyword_rules(question: str) -> TimeClass:
    """The rules' class as time_class computes it."""
    return rules_class(question, asked_kind(asking_sentence(question)).value)


def featurise(rows: list[dict]) -> list[set[str]]:
    out = []
    for r in rows:
        q = r["question"]
        asking = asking_sentence(q)
        out.append(features(q, asking, asked_kind(asking).value, LABELLED_ON))
    return out


def fit(
    feats: list[set[str]], labels: list[int], l2: float, dense: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Weights (binary features' rows, then one row per column of `dense`, already scaled), biases, vocabulary."""
    vocab = sorted({f for fs in feats for f in fs})
    index = {f: i for i, f in enumerate(vocab)}
    width = len(vocab) + (dense.shape[1] if dense is not None else 0)
    x = np.zeros((len(feats), width))
    for i, fs in enumerate(feats):
        x[i, [index[f] for f in fs]] = 1.0
    if dense is not None:
        x[:, len(vocab) :] = dense
    y = np.zeros((len(feats), len(CLASSES)))
    y[np.arange(len(labels)), labels] = 1.0
    w = np.zeros((width, len(CLASSES)))
    b = np.zeros(len(CLASSES))
    mw, vw, mb, vb = np.zeros_like(w), np.zeros_like(w), np.zeros_like(b), np.zeros_like(b)
    for t in range(1, STEPS + 1):
        z = x @ w + b
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - y) / len(feats)
        gw, gb = x.T @ g + l2 * w, g.sum(axis=0)
        for param, grad, m, v in ((w, gw, mw, vw), (b, gb, mb, vb)):
            m *= 0.9
            m += 0.1 * grad
            v *= 0.999
            v += 0.001 * grad * grad
            param -= LR * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w, b, vocab


def question_vectors(rows: list[dict], layers: int = VECTOR_LAYERS) -> tuple[np.ndarray, str]:
    """Each question's vector features (app/language/time.question_vector's), and the encoder's digest."""
    from app.providers.rerank.minilm_shallow import optional_encoder

    encoder = optional_encoder("")
    if encoder is None:
        raise SystemExit("--vectors needs the MiniLM model: scripts/bootstrap semantic")
    vectors = np.array([encoder.shallow_vector(r["question"], layers) for r in rows])
    return vectors, encoder.weights_digest


def _fold(qid: str) -> int:
    return int(hashlib.sha1(qid.encode()).hexdigest(), 16) % FOLDS


def out_of_fold(
    rows: list[dict], feats: list[set[str]], labels: list[int], l2: float, dense: np.ndarray | None = None
) -> list[list[float]]:
    """Each dev question's class probabilities from the model fitted on the other folds."""
    probs: list[list[float]] = [[] for _ in rows]
    for k in range(FOLDS):
        train = [i for i, r in enumerate(rows) if _fold(r["id"]) != k]
        held = [i for i, r in enumerate(rows) if _fold(r["id"]) == k]
        w, b, vocab = fit(
            [feats[i] for i in train], [labels[i] for i in train], l2, dense[train] if dense is not None else None
        )
        index = {f: j for j, f in enumerate(vocab)}
        for i in held:
            z = b + sum((w[index[f]] for f in feats[i] if f in index), np.zeros(len(CLASSES)))
            if dense is not None:
                z = z + dense[i] @ w[len(vocab) :]
            e = np.exp(z - z.max())
            probs[i] = list(e / e.sum())
    return probs


def combined(rules: TimeClass, probs: list[float], override_at: float, fresher_at: float) -> TimeClass:
    """app.language.time.time_class's decision, over given probabilities."""
    return decide(rules, dict(zip(CLASSES, probs)), override_at, fresher_at)


def tally(labels: list[int], predicted: list[TimeClass], l2: float, override_at: float, fresher_at: float) -> dict:
    counts = Counter(error_direction(CLASSES[gold], got) for gold, got in zip(labels, predicted))
    return {
        "l2": l2,
        "override_at": override_at,
        "fresher_at": fresher_at,
        "accuracy": round(counts["right"] / len(labels), 3),
        "staler": counts["staler"],
        "fresher": counts["fresher"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cv-only", action="store_true")
    ap.add_argument("--vectors", action="store_true", help="with the MiniLM vector features (the `semantic` extra)")
    ap.add_argument("--layers", type=int, default=VECTOR_LAYERS, help="with --vectors: MiniLM layers the vector reads")
    args = ap.parse_args()
    rows = load("dev") + load_docs("dev")
    feats = featurise(rows)
    labels = [CLASSES.index(TimeClass(r["time"])) for r in rows]
    rules = [keyword_rules(r["question"]) for r in rows]
    vectors, digest = question_vectors(rows, args.layers) if args.vectors else (None, "")
    table = []
    for l2 in L2_GRID:
        for scale in SCALE_GRID if vectors is not None else (0.0,):
            oof = out_of_fold(rows, feats, labels, l2, vectors * scale if vectors is not None else None)
            for t in OVERRIDE_GRID:
                for f in (x for x in FRESHER_GRID if x <= t):
                    row = tally(labels, [combined(rc, p, t, f) for rc, p in zip(rules, oof)], l2, t, f)
                    if vectors is not None:
                        row["scale"] = scale
                    table.append(row)
                    print(table[-1])
    # The least cost, a staler error counting twice (it cites an outdated value as current; a fresher
    # one abstains); among equals the strongest L2 (the simpler model), then the smaller scale.
    best = min(table, key=lambda r: (STALER_COST * r["staler"] + r["fresher"], -r["l2"], r.get("scale", 0.0)))
    print("chosen", best)
    if args.cv_only:
        return
    scale = best.get("scale", 0.0)
    w, b, vocab = fit(feats, labels, best["l2"], vectors * scale if vectors is not None else None)
    weights = {f: [round(float(v), 4) for v in w[i]] for i, f in enumerate(vocab) if np.abs(w[i]).max() >= 1e-3}
    out = {
        "classes": [c.value for c in CLASSES],
        "bias": [round(float(v), 4) for v in b],
        "weights": weights,
        "l2": best["l2"],
        "override_at": best["override_at"],
        "fresher_at": best["fresher_at"],
        "fitted_on": f"eval/labelled/time.jsonl dev ({len(rows)} questions)",
        "dev_cv": best,
    }
    path = WEIGHTS_PATH
    if vectors is not None:
        # Rows of class weights per vector dimension, over vectors multiplied by dense_scale at use.
        out.update(
            dense=[[round(float(v), 5) for v in row] for row in w[len(vocab) :]],
            dense_scale=scale,
            dense_layers=args.layers,
            encoder_digest=digest,
        )
        path = VECTOR_WEIGHTS_PATH
    path.write_text(json.dumps(out, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(weights)} features{', vector features' if vectors is not None else ''})")


if __name__ == "__main__":
    main()
