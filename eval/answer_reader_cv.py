"""Could a trained reader pick the answer sentence better than the learned answerability scorer?
Five-fold cross-validation on the dev split only (folds by a hash of the case id).

The extractive composer leads with the candidate sentence the answerability scorer ranks first
(app/pipeline/answerability.py; weights fitted by eval/train_answerability.py). On the test split most
of its wrong answers had the gold sentence in the evidence (docs/EVALUATION.md), so the ranking, not
retrieval, is what fails. Three readers are compared with the scorer, each fitted on four folds and
scored on the fifth:

- ``adapter``: a 384x384 map applied to the question's MiniLM vector before the cosine with each
  candidate's (the sentence vectors stay as stored), trained with a softmax over each case's candidates,
  its distance from the identity penalised; the scorer's similarity feature replaced by it and refitted.
- ``gbdt``: gradient-boosted trees over the scorer's own features (needs scikit-learn).
- ``cross``: all-MiniLM-L6-v2 as a cross-encoder over (question, sentence), top three layers and a
  linear head fine-tuned on the scorer's best ``--top`` candidates (needs PyTorch, CPU build), its logit
  added to the scorer's.

    python -m eval.answer_reader_cv collect          # run dev once; candidates to /tmp/answer-reader/
    python -m eval.answer_reader_cv scorer adapter gbdt cross
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
from datetime import date
from pathlib import Path
from typing import Any

WORK = Path("/tmp/answer-reader")
FOLDS = 5
SIMILARITY = -1  # the last feature (answerability_features.FEATURES)


def collect() -> None:
    """Each dev case's question and every candidate sentence with its features and label (states a
    gold answer), as the lexical scorer lists them over the evidence the service selected."""
    import numpy as np

    from app.language.question import analyse
    from app.pipeline.answerability import LexicalAnswerability
    from app.providers.rerank.base import build_named_reranker
    from app.providers.rerank.minilm import MiniLMEncoder
    from app.settings import Settings
    from app.state import load_builtin_providers
    from eval.calibrate import _evidence
    from eval.cases import load_cases
    from eval.runner import run_mode

    load_builtin_providers()
    cases = [c for c in load_cases(["eval/labelled/questions", "eval/cases"]) if c.split == "dev" or not c.slice]
    run = run_mode(cases, "extractive", keep_evidence=True, overrides={"answerability_scorer": "lexical"})
    scorer = LexicalAnswerability(ranker=build_named_reranker("minilm", Settings()))
    scorer.keep = 10**6
    out = []
    for case in cases:
        got = run.evidence.get(case.id)
        if not got or not got["evidence"]:
            continue
        golds = [g.lower() for g in case.gold_answers or case.gold_all] if case.expected_status == "grounded" else []
        question = got["question"] or case.question
        a = scorer.assess(analyse(question), _evidence(got["evidence"]), date.today())
        rows = [(m.quoted, list(m.features), any(g in m.quoted.lower() for g in golds)) for m in a.best if m.features]
        out.append({"id": case.id, "expected": case.expected_status, "question": question, "rows": rows})
    WORK.mkdir(exist_ok=True)
    (WORK / "dev.json").write_text(json.dumps(out))
    encoder = MiniLMEncoder()
    sentences = sorted({r[0] for c in out for r in c["rows"]})
    vectors = np.concatenate([encoder.embed(sentences[i : i + 256]) for i in range(0, len(sentences), 256)])
    np.savez(WORK / "vectors.npz", questions=encoder.embed([c["question"] for c in out]), sentences=vectors)
    (WORK / "sentences.json").write_text(json.dumps(sentences))
    print(f"{len(out)} cases, {len(sentences)} sentences -> {WORK}")


def load() -> list[dict[str, Any]]:
    """Cases with candidates; an answerable case whose gold never reached the evidence is left out
    (a recall miss, not the reader's)."""
    import numpy as np

    raw = json.loads((WORK / "dev.json").read_text())
    vectors = np.load(WORK / "vectors.npz")
    index = {s: i for i, s in enumerate(json.loads((WORK / "sentences.json").read_text()))}
    cases = []
    for k, c in enumerate(raw):
        if not c["rows"]:
            continue
        y = np.array([r[2] for r in c["rows"]], dtype=float)
        if c["expected"] == "grounded" and not y.any():
            continue
        cases.append(
            {
                "id": c["id"],
                "question": c["question"],
                "sentences": [r[0] for r in c["rows"]],
                "features": np.array([r[1] for r in c["rows"]], dtype=float),
                "y": y,
                "answerable": bool(y.any()),
                "q": vectors["questions"][k],
                "vectors": vectors["sentences"][[index[r[0]] for r in c["rows"]]],
            }
        )
    return cases


def folds(cases: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = [[] for _ in range(FOLDS)]
    for c in cases:
        out[int(hashlib.md5(c["id"].encode()).hexdigest(), 16) % FOLDS].append(c)
    return out


def fit_logistic(x: Any, y: Any, l2: float = 1.0) -> Any:
    """As eval/train_answerability.fit (L2 1.0, no penalty on the bias), vectorised."""
    import numpy as np

    x1 = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(x1.shape[1])
    reg = np.full(len(w), l2)
    reg[0] = 0.0
    for _ in range(15):
        p = 1 / (1 + np.exp(-np.clip(x1 @ w, -30, 30)))
        w -= np.linalg.solve((x1 * (p * (1 - p))[:, None]).T @ x1 + np.diag(reg), x1.T @ (p - y) + reg * w)
    return w


def logits(w: Any, x: Any) -> Any:
    import numpy as np

    return np.hstack([np.ones((len(x), 1)), x]) @ w


def summary(name: str, scored: list[tuple[bool, bool, float]]) -> None:
    """scored: (answerable, the top candidate states the gold, the case's confidence)."""
    import numpy as np

    pos = [s for s in scored if s[0]]
    neg = [s for s in scored if not s[0]]
    best, at = max(
        ((np.mean([p[2] >= t for p in pos]) + np.mean([n[2] < t for n in neg])) / 2, t) for t in {s[2] for s in scored}
    )
    right = np.mean([p[2] >= at and p[1] for p in pos])
    declined = np.mean([n[2] < at for n in neg])
    print(
        f"{name:8s} top-1 states the gold {np.mean([p[1] for p in pos]):.3f}; at the best balanced threshold"
        f" ({best:.3f}): answered with the gold {right:.3f}, unanswerable declined {declined:.3f}"
        f"  ({len(pos)} answerable, {len(neg)} not)"
    )


def cross_validate(name: str, cases: list[dict[str, Any]], top: int) -> None:
    import numpy as np

    parts = folds(cases)
    scored = []
    for i, held in enumerate(parts):
        train = [c for j, f in enumerate(parts) if j != i for c in f]
        for c in cases:
            c["x"] = c["features"]
        if name == "adapter":
            w_q = train_adapter(train)
            for c in cases:
                u = w_q @ c["q"]
                c["x"] = c["features"].copy()
                c["x"][:, SIMILARITY] = c["vectors"] @ (u / np.linalg.norm(u))
        if name == "gbdt":
            from sklearn.ensemble import HistGradientBoostingClassifier

            model = HistGradientBoostingClassifier(max_depth=3, max_iter=200, learning_rate=0.05, random_state=0)
            model.fit(np.vstack([c["x"] for c in train]), np.concatenate([c["y"] for c in train]))
            for c in held:
                s = model.predict_proba(c["x"])[:, 1]
                scored.append((c["answerable"], bool(c["y"][s.argmax()]), float(s.max())))
            continue
        w = fit_logistic(np.vstack([c["x"] for c in train]), np.concatenate([c["y"] for c in train]))
        if name == "cross":
            reader = CrossReader()
            pairs = []
            for c in train:
                best = np.argsort(-logits(w, c["x"]))[:top]
                pairs += [((c["question"], c["sentences"][k]), float(c["y"][k])) for k in best]
            reader.fit(pairs)
        for c in held:
            z = logits(w, c["x"])
            if name == "cross":
                best = np.argsort(-z)[:top]
                z = z[best] + np.array(reader.logits([(c["question"], c["sentences"][k]) for k in best]))
                y = c["y"][best]
            else:
                y = c["y"]
            scored.append((c["answerable"], bool(y[z.argmax()]), float(z.max())))
        print(f"  fold {i} done", file=sys.stderr, flush=True)
    summary(name, scored)


def train_adapter(train: list[dict[str, Any]], penalty: float = 1.0, epochs: int = 60, rate: float = 0.05) -> Any:
    import numpy as np

    temperature = 20.0
    d = train[0]["q"].shape[0]
    w = np.eye(d)
    answerable = [c for c in train if c["answerable"]]
    for _ in range(epochs):
        grad = np.zeros_like(w)
        for c in answerable:
            z = temperature * (c["vectors"] @ (w @ c["q"]))
            p = np.exp(z - z.max())
            p /= p.sum()
            r = p * c["y"]
            r /= r.sum()
            grad += np.outer(c["vectors"].T @ (temperature * (p - r)), c["q"])
        w -= rate * (grad / len(answerable) + penalty * (w - np.eye(d)))
    return w


class CrossReader:
    """(question, sentence) through MiniLM as one input; the bottom three layers frozen, as
    eval/train_injection_encoder trains its classifier."""

    def __init__(self, epochs: int = 3) -> None:
        from eval.train_injection_encoder import Trainer

        self.trainer = Trainer(3)
        self.epochs = epochs
        self.model: Any = None

    def _states(self, pairs: list[tuple[str, str]]) -> list[Any]:
        import torch
        import torch.nn.functional as F

        t, w = self.trainer, self.trainer.w
        todo = [p for p in dict.fromkeys(pairs) if p not in t._frozen]
        with torch.no_grad():
            for start in range(0, len(todo), 64):
                chunk = todo[start : start + 64]
                encodings = [t.tokenizer.encode(q, s) for q, s in chunk]
                ids, mask = t._pad([e.ids for e in encodings])
                types, _ = t._pad([e.type_ids for e in encodings])
                x = (
                    w["embeddings.word_embeddings.weight"][ids]
                    + w["embeddings.position_embeddings.weight"][: ids.shape[1]]
                )
                x = x + w["embeddings.token_type_embeddings.weight"][types]
                x = F.layer_norm(
                    x, (x.shape[-1],), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], t.eps
                )
                bias = ((1.0 - mask) * -1e9)[:, None, None, :]
                for i in range(t.trained_from):
                    x = t._layer(x, bias, t._params(i))
                for row, pair in enumerate(chunk):
                    t._frozen[pair] = x[row, : int(mask[row].sum())].clone()
        return [t._frozen[p] for p in pairs]

    def fit(self, data: list[tuple[tuple[str, str], float]]) -> None:
        import torch
        import torch.nn.functional as F

        t = self.trainer
        torch.manual_seed(7)
        rng = random.Random(7)
        params = [
            {k: v.clone().requires_grad_(True) for k, v in t._params(i).items()}
            for i in range(t.trained_from, t.n_layers)
        ]
        head = [torch.zeros(384, requires_grad=True), torch.zeros((), requires_grad=True)]
        opt = torch.optim.AdamW(
            [
                {"params": [v for p in params for v in p.values()], "lr": 1e-4},
                {"params": head, "lr": 1e-3, "weight_decay": 0.0},
            ],
            weight_decay=0.01,
        )
        states = self._states([p for p, _ in data])
        labels = torch.tensor([y for _, y in data])
        positives = float(labels.sum())
        weight = torch.tensor(math.sqrt((len(labels) - positives) / max(positives, 1.0)))
        order = list(range(len(data)))
        steps = self.epochs * math.ceil(len(order) / 32)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, 1.0 - s / steps))
        for _ in range(self.epochs):
            rng.shuffle(order)
            for start in range(0, len(order), 32):
                idx = order[start : start + 32]
                x, mask = t._stack([states[i] for i in idx])
                loss = F.binary_cross_entropy_with_logits(t._top(params, head, x, mask), labels[idx], pos_weight=weight)
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
        self.model = ([{k: v.detach() for k, v in p.items()} for p in params], [h.detach() for h in head])

    def logits(self, pairs: list[tuple[str, str]]) -> list[float]:
        import torch

        t = self.trainer
        states = self._states(pairs)
        out: list[float] = []
        with torch.no_grad():
            for start in range(0, len(pairs), 64):
                x, mask = t._stack(states[start : start + 64])
                out.extend(float(z) for z in t._top(*self.model, x, mask))
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("readers", nargs="+", choices=["collect", "scorer", "adapter", "gbdt", "cross"])
    ap.add_argument("--top", type=int, default=12, help="cross: candidates the reader rereads per case")
    args = ap.parse_args()
    if "collect" in args.readers:
        collect()
    cases = load() if set(args.readers) - {"collect"} else []
    for name in args.readers:
        if name != "collect":
            cross_validate(name, cases, args.top)


if __name__ == "__main__":
    main()
