"""Does a sentence embedding separate planted instructions from ordinary text? A probe, not a model
the service ships (docs/SECURITY.md, "Prompt injection", records the answer: no).

Leave-one-author-out on the dev split of eval/labelled/injection.jsonl, as ``python -m
eval.train_injection --by-author``: for each batch, the shipped detector's model class (hashed
n-grams and cues) fitted on the other batches, and a logistic regression over all-MiniLM-L6-v2
sentence vectors (app/providers/rerank/minilm.py) fitted on the same lines. A line counts as removed
when any of its sentences scores at or above the threshold (no neighbour rule); the threshold is the
one removing the most attack lines while at most 1.5 % of benign lines lose a sentence, pooled over
the batches. Also reported: the two logits averaged. Needs the MiniLM wheel (scripts/bootstrap test);
about 10 minutes on 2 cores.

    python -m eval.probe_injection_embedding [--l2 1e-5]
"""

from __future__ import annotations

import argparse
import math
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from app.language.text import split_sentences
from app.pipeline.injection import InjectionModel
from eval.train_injection import MAX_BENIGN_LOSS, author, fit, load, samples

DEV = [r for r in load() if r["split"] == "dev"]


def _cheap(group: str) -> tuple[float, dict[int, float]]:
    return fit(samples([r for r in DEV if author(r) != group]))


def _logistic(x: Any, y: Any, l2: float) -> Any:
    """Newton's method on an L2-regularised logistic regression (bias unregularised)."""
    import numpy as np

    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    ridge = l2 * np.eye(len(w))
    ridge[-1, -1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-xb @ w))
        step = np.linalg.solve(
            (xb * (p * (1 - p))[:, None]).T @ xb / len(y) + ridge, xb.T @ (p - y) / len(y) + ridge @ w
        )
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w


def best_rate(scored: list[tuple[str, list[float]]]) -> tuple[float, float, float]:
    """(attack lines removed, benign lines hit, threshold) at the best threshold under the bar."""
    best = (0.0, 0.0, math.inf)
    attacks = sum(label == "attack" for label, _ in scored)
    benign = len(scored) - attacks
    for i in range(-16, 41):
        t = i / 4
        hit = [(label, max(zs) >= t) for label, zs in scored if zs]
        caught = sum(h for label, h in hit if label == "attack") / attacks
        lost = sum(h for label, h in hit if label == "benign") / benign
        if lost <= MAX_BENIGN_LOSS and caught > best[0]:
            best = (caught, lost, t)
    return best


def main() -> None:
    import numpy as np

    from app.providers.rerank.minilm import MiniLMEncoder

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--l2", type=float, default=1e-5)
    args = ap.parse_args()
    groups = sorted({author(r) for r in DEV})
    with ProcessPoolExecutor(2) as pool:
        cheap = dict(zip(groups, pool.map(_cheap, groups)))
    encoder = MiniLMEncoder()
    scored: dict[str, list[tuple[str, list[float]]]] = {"n-grams (shipped class)": [], "MiniLM": [], "mean": []}
    for g in groups:
        train = [r for r in DEV if author(r) != g]
        texts, labels = [], []
        for r in train:
            parts = split_sentences(r["text"])
            for t in [r["text"], *(parts if len(parts) > 1 else [])]:
                texts.append(t)
                labels.append(1.0 if r["label"] == "attack" else 0.0)
        w = _logistic(encoder.embed(texts), np.array(labels), args.l2)
        model = InjectionModel(*cheap[g], threshold=0.5, near_threshold=0.5)
        for r in DEV:
            if author(r) != g:
                continue
            sentences = [s for para in r["text"].split("\n") for s in split_sentences(para)]
            if not sentences:
                continue
            zc = [math.log(max(p, 1e-12) / max(1 - p, 1e-12)) for p in map(model.probability, sentences)]
            ze = (encoder.embed(sentences) @ w[:-1] + w[-1]).tolist()
            scored["n-grams (shipped class)"].append((r["label"], zc))
            scored["MiniLM"].append((r["label"], ze))
            scored["mean"].append((r["label"], [(a + b) / 2 for a, b in zip(zc, ze)]))
    for name, rows in scored.items():
        caught, lost, t = best_rate(rows)
        print(f"{name}: attack lines removed {caught:.3f}, benign lines hit {lost:.4f} (logit >= {t})")


if __name__ == "__main__":
    main()
