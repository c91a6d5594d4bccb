"""A BERT-family NLI cross-encoder, loaded from a local folder and run in numpy (no torch).

The folder is what `save_pretrained` writes for a `BertForSequenceClassification` (sentence-transformers'
NLI cross-encoders built on BERT or MiniLM are such models): `config.json` (its `id2label` names the
entailment, contradiction and neutral classes), `tokenizer.json` (the fast tokenizer, with BERT's
pair template) and `model.safetensors` (a `pytorch_model.bin` must be converted first: the service
reads safetensors only). The layers are the sentence model's numpy BERT (app/providers/rerank/minilm.py);
this adds the token types of a pair, the pooler and the classifier.

Cost: about as many milliseconds of CPU as the premise and claim have tokens for a 6-layer, 384-wide
model (the sentence model's ~0.6 ms a token), so verification asks it only about the sentences the
lexical check cannot settle, with the premise cut to the best-matching sentences.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from app.errors import GroundingError
from app.providers.entailment.base import Entailment, register_entailment
from app.providers.rerank.minilm import layer_norm, pack_layer, read_safetensors, run_layers
from app.settings import Settings

log = logging.getLogger(__name__)
_BATCH = 16
_MAX_TOKENS = 512  # BERT's positions; fewer when the model's config says so


def _label_index(id2label: dict[str, str]) -> dict[str, int]:
    """Class index of each NLI label the model names ("entailment", "contradiction", "neutral"), by the
    label's leading word, whatever order the model was trained with."""
    found: dict[str, int] = {}
    for index, label in id2label.items():
        name = str(label).lower()
        for wanted in ("entail", "contradict", "neutral"):
            if name.startswith(wanted):
                found[wanted] = int(index)
    return found


class BertNLI:
    """(premise, hypothesis) → entailment / contradiction / neutral probabilities."""

    name = "bert-nli"

    def __init__(self, folder: Path) -> None:
        from threadpoolctl import threadpool_limits
        from tokenizers import Tokenizer

        missing = [f for f in ("config.json", "tokenizer.json", "model.safetensors") if not (folder / f).is_file()]
        if missing:
            raise GroundingError(f"GA_SUPPORT_MODEL_PATH {str(folder)!r} lacks {', '.join(missing)}")
        threadpool_limits(limits=1, user_api="blas")  # as the sentence model: idle BLAS threads spin
        config = json.loads((folder / "config.json").read_text())
        self._labels = _label_index(config.get("id2label") or {})
        if "entail" not in self._labels:
            raise GroundingError(f"the model in {str(folder)!r} names no entailment class (id2label)")
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        w = read_safetensors(folder / "model.safetensors")
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""
        if prefix + "embeddings.word_embeddings.weight" not in w or "classifier.weight" not in w:
            raise GroundingError(f"the model in {str(folder)!r} is not a BertForSequenceClassification")
        self._word = w[prefix + "embeddings.word_embeddings.weight"]
        self._position = w[prefix + "embeddings.position_embeddings.weight"]
        self._types = w[prefix + "embeddings.token_type_embeddings.weight"]
        self._norm0 = (w[prefix + "embeddings.LayerNorm.weight"], w[prefix + "embeddings.LayerNorm.bias"])
        layers = int(config["num_hidden_layers"])
        self._layers = [pack_layer(w, f"{prefix}encoder.layer.{i}.") for i in range(layers)]
        self._pooler = (w[prefix + "pooler.dense.weight"].T.copy(), w[prefix + "pooler.dense.bias"])
        self._classifier = (w["classifier.weight"].T.copy(), w["classifier.bias"])
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._max_tokens = min(_MAX_TOKENS, int(config.get("max_position_embeddings", _MAX_TOKENS)))
        log.info(
            "support model: bert-nli from %s (%d layers, %d wide; classes %s)",
            folder,
            layers,
            self._word.shape[1],
            ", ".join(sorted(self._labels)),
        )

    def _encode(self, premise: str, hypothesis: str) -> Any:
        # The premise is cut, never the claim: a claim cut short is another claim.
        self._tokenizer.enable_truncation(max_length=self._max_tokens, strategy="only_first")
        try:
            return self._tokenizer.encode(premise, hypothesis)
        except Exception:  # the claim alone is too long for only_first: cut both
            self._tokenizer.enable_truncation(max_length=self._max_tokens, strategy="longest_first")
            return self._tokenizer.encode(premise, hypothesis)

    def logits(self, pairs: list[tuple[str, str]]) -> Any:
        """The classifier's logits, one row per pair."""
        import numpy as np

        encodings = [self._encode(p, h) for p, h in pairs]
        out = np.zeros((len(pairs), self._classifier[0].shape[1]), dtype=np.float32)
        order = sorted(range(len(pairs)), key=lambda j: len(encodings[j].ids))  # batches of like length
        for start in range(0, len(order), _BATCH):
            chunk = order[start : start + _BATCH]
            width = max(len(encodings[j].ids) for j in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            types = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.float32)
            for row, j in enumerate(chunk):
                e = encodings[j]
                ids[row, : len(e.ids)] = e.ids
                types[row, : len(e.type_ids)] = e.type_ids
                mask[row, : len(e.ids)] = 1.0
            x = self._word[ids] + self._position[:width] + self._types[types]
            x = run_layers(layer_norm(x, self._norm0, self._eps), mask, self._layers, self._heads, self._eps)
            pooled = np.tanh(x[:, 0] @ self._pooler[0] + self._pooler[1])
            out[chunk] = pooled @ self._classifier[0] + self._classifier[1]
        return out

    def entail(self, pairs: list[tuple[str, str]]) -> list[Entailment]:
        import numpy as np

        if not pairs:
            return []
        logits = self.logits(pairs)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        labels = self._labels
        verdicts = []
        for row in p:
            entail = float(row[labels["entail"]])
            contradict = float(row[labels["contradict"]]) if "contradict" in labels else 0.0
            verdicts.append(Entailment(entail, contradict, max(0.0, 1.0 - entail - contradict)))
        return verdicts


def _factory(settings: Settings) -> BertNLI:
    if settings.support_model_path is None:
        raise GroundingError("GA_SUPPORT_MODEL=bert-nli needs GA_SUPPORT_MODEL_PATH (a local model folder)")
    return BertNLI(settings.support_model_path)


register_entailment("bert-nli", _factory)
