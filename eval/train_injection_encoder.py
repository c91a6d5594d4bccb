"""Fine-tune all-MiniLM-L6-v2's top layers as a planted-instruction classifier (dev split only).

The lexical detector (app/pipeline/injection.py) misses the indirect forms that name neither a model
nor an instruction; a general sentence embedding does not separate them either
(eval/probe_injection_embedding.py). This trains the encoder for the task: the embeddings and lower
layers stay as shipped in the MiniLM wheel, the top ``--layers`` layers and a linear head over the
mean-pooled tokens are fitted on the dev lines (and each sentence of a multi-sentence line, with the
line's label, as eval/train_injection does). Training needs PyTorch (``pip install torch``, CPU build;
not a dependency of the service): the result is exported as numpy arrays that
app/pipeline/injection_encoder.py runs without it.

    python -m eval.train_injection_encoder --by-author     # leave-one-author-out scores on dev -> JSON
    python -m eval.train_injection_encoder --lexical-threshold T --gate G --lexical-weight W --threshold M
                                                           # fit on all of dev, write the weights
    python -m eval.train_injection_encoder --verdicts-only --lexical-threshold T --gate G ...
                                                           # the shipped weights, new values only

Deterministic for a given torch build and thread count (fixed seeds).
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path
from typing import Any

from app.language.text import split_sentences
from eval import injection_real_negatives
from eval.train_injection import DATA, author, load

OUT = Path(__file__).resolve().parent.parent / "app" / "pipeline" / "injection_encoder.npz"
LAYERS = 3
EPOCHS = 4
BATCH = 32
LR = 1e-4
HEAD_LR = 1e-3
SEED = 7
MAX_TOKENS = 128


def texts_of(rows: list[dict[str, Any]]) -> list[tuple[str, int]]:
    out = []
    for row in rows:
        label = 1 if row["label"] == "attack" else 0
        out.append((row["text"], label))
        parts = [s for p in row["text"].split("\n") for s in split_sentences(p)]
        if len(parts) > 1:
            out.extend((p, label) for p in parts)
    return out


class Trainer:
    """The frozen part of MiniLM run once per text; the top layers and the head trained in torch."""

    def __init__(self, layers: int = LAYERS) -> None:
        import torch
        from tokenizers import Tokenizer

        from app.providers.rerank.minilm import model_dir, read_safetensors

        torch.manual_seed(SEED)
        folder = model_dir()
        self.config = json.loads((folder / "config.json").read_text())
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        w = {k: torch.from_numpy(v.copy()) for k, v in read_safetensors(folder / "model.safetensors").items()}
        self.w = w
        self.n_layers = int(self.config["num_hidden_layers"])
        self.trained_from = self.n_layers - layers
        self.heads = int(self.config["num_attention_heads"])
        self.eps = float(self.config["layer_norm_eps"])
        self._frozen: dict[str, Any] = {}

    def _layer(self, x: Any, bias: Any, p: dict[str, Any]) -> Any:
        import torch.nn.functional as F

        b, n, h = x.shape
        d = h // self.heads

        def split(t: Any) -> Any:
            return t.view(b, n, self.heads, d).transpose(1, 2)

        q = split(F.linear(x, p["attention.self.query.weight"], p["attention.self.query.bias"]))
        k = split(F.linear(x, p["attention.self.key.weight"], p["attention.self.key.bias"]))
        v = split(F.linear(x, p["attention.self.value.weight"], p["attention.self.value.bias"]))
        att = (q @ k.transpose(-1, -2)) / math.sqrt(d) + bias
        ctx = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, n, h)
        x = F.layer_norm(
            x + F.linear(ctx, p["attention.output.dense.weight"], p["attention.output.dense.bias"]),
            (h,),
            p["attention.output.LayerNorm.weight"],
            p["attention.output.LayerNorm.bias"],
            self.eps,
        )
        inner = F.gelu(F.linear(x, p["intermediate.dense.weight"], p["intermediate.dense.bias"]))
        return F.layer_norm(
            x + F.linear(inner, p["output.dense.weight"], p["output.dense.bias"]),
            (h,),
            p["output.LayerNorm.weight"],
            p["output.LayerNorm.bias"],
            self.eps,
        )

    def _params(self, i: int) -> dict[str, Any]:
        prefix = f"encoder.layer.{i}."
        return {k[len(prefix) :]: v for k, v in self.w.items() if k.startswith(prefix)}

    def frozen(self, texts: list[Any]) -> list[Any]:
        """Hidden states after the frozen layers, one (tokens, 384) tensor per text (memoised). A text
        may be a (first, second) pair, encoded as BERT encodes a pair (the second's tokens of type 1)."""
        import torch
        import torch.nn.functional as F

        todo = [t for t in dict.fromkeys(texts) if t not in self._frozen]
        w = self.w
        with torch.no_grad():
            for start in range(0, len(todo), 64):
                chunk = todo[start : start + 64]
                encodings = [
                    self.tokenizer.encode(*t) if isinstance(t, tuple) else self.tokenizer.encode(t) for t in chunk
                ]
                ids, mask = self._pad([e.ids for e in encodings])
                types, _ = self._pad([e.type_ids for e in encodings])  # all 0 for a single text
                n = ids.shape[1]
                x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
                x = x + w["embeddings.token_type_embeddings.weight"][types]
                x = F.layer_norm(
                    x, (x.shape[-1],), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps
                )
                bias = ((1.0 - mask) * -1e9)[:, None, None, :]
                for i in range(self.trained_from):
                    x = self._layer(x, bias, self._params(i))
                for row, text in enumerate(chunk):
                    self._frozen[text] = x[row, : int(mask[row].sum())].clone()
        return [self._frozen[t] for t in texts]

    @staticmethod
    def _pad(seqs: list[Any]) -> tuple[Any, Any]:
        import torch

        width = max(len(s) for s in seqs)
        ids = torch.zeros((len(seqs), width), dtype=torch.long)
        mask = torch.zeros((len(seqs), width))
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = torch.as_tensor(s)
            mask[i, : len(s)] = 1.0
        return ids, mask

    def _stack(self, states: list[Any]) -> tuple[Any, Any]:
        import torch

        width = max(s.shape[0] for s in states)
        x = torch.zeros((len(states), width, states[0].shape[1]))
        mask = torch.zeros((len(states), width))
        for i, s in enumerate(states):
            x[i, : s.shape[0]] = s
            mask[i, : s.shape[0]] = 1.0
        return x, mask

    def _top(self, params: list[dict[str, Any]], head: Any, x: Any, mask: Any) -> Any:
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        for p in params:
            x = self._layer(x, bias, p)
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True).clamp(min=1.0)
        return pooled @ head[0] + head[1]

    def fit(
        self, data: list[tuple[Any, int]], epochs: int = EPOCHS, *, balanced: bool = False
    ) -> tuple[list[dict[str, Any]], Any]:
        """`balanced`: positives weighted by the square root of the negatives-to-positives ratio (for
        rare positives, as eval/answer_reader_cv's answer sentences are)."""
        import torch

        torch.manual_seed(SEED)
        rng = random.Random(SEED)
        params = [
            {k: v.clone().requires_grad_(True) for k, v in self._params(i).items()}
            for i in range(self.trained_from, self.n_layers)
        ]
        head = [
            torch.zeros(self.w["embeddings.word_embeddings.weight"].shape[1], requires_grad=True),
            torch.zeros((), requires_grad=True),
        ]
        opt = torch.optim.AdamW(
            [
                {"params": [t for p in params for t in p.values()], "lr": LR},
                {"params": head, "lr": HEAD_LR, "weight_decay": 0.0},
            ],
            weight_decay=0.01,
        )
        states = self.frozen([t for t, _ in data])
        labels = torch.tensor([float(y) for _, y in data])
        positives = float(labels.sum())
        weight = torch.tensor(math.sqrt((len(labels) - positives) / max(positives, 1.0))) if balanced else None
        order = list(range(len(data)))
        steps = epochs * math.ceil(len(order) / BATCH)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, 1.0 - s / steps))
        for _ in range(epochs):
            rng.shuffle(order)
            for start in range(0, len(order), BATCH):
                idx = order[start : start + BATCH]
                x, mask = self._stack([states[i] for i in idx])
                logit = self._top(params, head, x, mask)
                loss = torch.nn.functional.binary_cross_entropy_with_logits(logit, labels[idx], pos_weight=weight)
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
        return [{k: v.detach() for k, v in p.items()} for p in params], [t.detach() for t in head]

    def logits(self, model: tuple[list[dict[str, Any]], Any], texts: list[Any]) -> list[float]:
        import torch

        params, head = model
        states = self.frozen(texts)
        out: list[float] = []
        with torch.no_grad():
            for start in range(0, len(texts), 64):
                x, mask = self._stack(states[start : start + 64])
                out.extend(float(z) for z in self._top(params, head, x, mask))
        return out


def sentences_of(text: str) -> list[str]:
    return [s for p in text.split("\n") for s in split_sentences(p)]


def by_author(out: Path, layers: int, epochs: int) -> None:
    """Out-of-author logits of every dev sentence, written as JSON for eval.injection_cascade."""
    dev = [r for r in load(DATA) if r["split"] == "dev"]
    trainer = Trainer(layers)
    scored: dict[str, list[float]] = {}
    for group in sorted({author(r) for r in dev}):
        held = [r for r in dev if author(r) == group]
        model = trainer.fit(texts_of([r for r in dev if author(r) != group]), epochs)
        for r in held:
            scored[r["id"]] = trainer.logits(model, sentences_of(r["text"]))
        print(group, len(held), flush=True)
    out.write_text(json.dumps(scored))


def export(out: Path, layers: int, epochs: int, verdicts: dict[str, float], negatives: tuple[str, ...] = ()) -> None:
    import numpy as np

    dev = [r for r in load(DATA) if r["split"] == "dev"]
    trainer = Trainer(layers)
    # Real benign sentences (eval/injection_real_negatives.py), when given, are benign samples too.
    params, head = trainer.fit(texts_of(dev) + [(s, 0) for s in negatives], epochs)
    params = [{k: v.half().float() for k, v in p.items()} for p in params]  # as shipped: float16
    arrays = {
        f"layer{trainer.trained_from + i}.{k}": v.numpy().astype(np.float16)
        for i, p in enumerate(params)
        for k, v in p.items()
    }
    arrays["head.weight"] = head[0].numpy().astype(np.float32)
    arrays["head.bias"] = head[1].numpy().astype(np.float32)
    arrays["trained_from"] = np.array(trainer.trained_from)
    arrays.update({k: np.array(v) for k, v in verdicts.items()})
    # Logits of a few dev lines by this (torch) graph: the numpy forward pass must give the same
    # (tests/pipeline/test_injection_encoder.py).
    check = [r["text"] for r in dev[:: max(1, len(dev) // 12)]][:12]
    arrays["check.texts"] = np.array(check)
    arrays["check.logits"] = np.array(trainer.logits((params, head), check), dtype=np.float32)
    np.savez_compressed(out, **arrays)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB): layers {trainer.trained_from}..{trainer.n_layers - 1}")


def set_verdicts(path: Path, verdicts: dict[str, float]) -> None:
    """Rewrite only the verdict values of an exported file (its weights and check logits unchanged):
    a gate or threshold chosen again by eval.injection_cascade needs no new training."""
    import numpy as np

    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays.update({k: np.array(v) for k, v in verdicts.items()})
    np.savez_compressed(path, **arrays)
    print(f"wrote {path}: {verdicts}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--by-author", type=Path, help="write leave-one-author-out logits of dev sentences here")
    ap.add_argument("--layers", type=int, default=LAYERS)
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    ap.add_argument("--out", type=Path, default=OUT)
    # How the encoder's reading combines with the lexical model's: eval.injection_cascade chooses these.
    for name in ("lexical-threshold", "gate", "lexical-weight", "threshold"):
        ap.add_argument(f"--{name}", type=float)
    ap.add_argument("--verdicts-only", action="store_true", help="keep the file's weights, set only the four values")
    ap.add_argument(
        "--real-negatives", action="store_true", help="fit on real benign sentences too (eval/injection_real_negatives)"
    )
    args = ap.parse_args()
    if args.by_author:
        by_author(args.by_author, args.layers, args.epochs)
        return
    verdicts = {k: getattr(args, k) for k in ("lexical_threshold", "gate", "lexical_weight", "threshold")}
    if None in verdicts.values():
        ap.error("writing the weights needs --lexical-threshold, --gate, --lexical-weight and --threshold")
    if args.verdicts_only:
        set_verdicts(args.out, verdicts)
        return
    negatives = injection_real_negatives.when(args.real_negatives)
    export(args.out, args.layers, args.epochs, verdicts, negatives)


if __name__ == "__main__":
    main()
