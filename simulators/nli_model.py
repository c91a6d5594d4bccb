"""A tiny BERT NLI model folder, as `save_pretrained` writes one (config.json, tokenizer.json,
model.safetensors), for tests of GA_SUPPORT_MODEL=bert-nli. No real NLI weights are reachable offline:
its weights are random (seeded), and `bias` pins what its classifier says (large logits for one class
whatever the text), so tests can check how the service uses a verdict, not the model's reading.

The vocabulary is characters (WordPiece with `##` continuations), so any text tokenizes."""

from __future__ import annotations

import json
import string
import struct
from pathlib import Path

import numpy as np

NLI_LABELS = ("contradiction", "entailment", "neutral")  # sentence-transformers' NLI cross-encoders' order
_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _vocab() -> dict[str, int]:
    chars = string.ascii_lowercase + string.digits + string.punctuation
    tokens = _SPECIAL + list(chars) + [f"##{c}" for c in chars]
    return {t: i for i, t in enumerate(tokens)}


def _write_tokenizer(path: Path, vocab: dict[str, int]) -> None:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    tok = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]", max_input_chars_per_word=200))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tok.save(str(path))


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """The safetensors format: an 8-byte little-endian header length, the JSON header, the raw bytes."""
    header: dict[str, dict] = {}
    blobs, offset = [], 0
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


def bert_weights(vocab_size: int, *, hidden: int, layers: int, inner: int, positions: int, labels: int, seed: int):
    rng = np.random.default_rng(seed)

    def r(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    def ones(n: int) -> np.ndarray:
        return (1.0 + rng.standard_normal(n) * 0.05).astype(np.float32)

    w = {
        "bert.embeddings.word_embeddings.weight": r(vocab_size, hidden),
        "bert.embeddings.position_embeddings.weight": r(positions, hidden),
        "bert.embeddings.token_type_embeddings.weight": r(2, hidden),
        "bert.embeddings.LayerNorm.weight": ones(hidden),
        "bert.embeddings.LayerNorm.bias": r(hidden),
    }
    for i in range(layers):
        p = f"bert.encoder.layer.{i}."
        for name in ("query", "key", "value"):
            w[f"{p}attention.self.{name}.weight"] = r(hidden, hidden)
            w[f"{p}attention.self.{name}.bias"] = r(hidden)
        w |= {
            f"{p}attention.output.dense.weight": r(hidden, hidden),
            f"{p}attention.output.dense.bias": r(hidden),
            f"{p}attention.output.LayerNorm.weight": ones(hidden),
            f"{p}attention.output.LayerNorm.bias": r(hidden),
            f"{p}intermediate.dense.weight": r(inner, hidden),
            f"{p}intermediate.dense.bias": r(inner),
            f"{p}output.dense.weight": r(hidden, inner),
            f"{p}output.dense.bias": r(hidden),
            f"{p}output.LayerNorm.weight": ones(hidden),
            f"{p}output.LayerNorm.bias": r(hidden),
        }
    w |= {
        "bert.pooler.dense.weight": r(hidden, hidden),
        "bert.pooler.dense.bias": r(hidden),
        "classifier.weight": r(labels, hidden) * 5,
        "classifier.bias": r(labels),
    }
    return w


def write_bert_nli(
    folder: Path,
    *,
    labels: tuple[str, ...] = NLI_LABELS,
    says: str | None = None,
    seed: int = 0,
    hidden: int = 16,
    layers: int = 2,
    heads: int = 2,
    positions: int = 512,
) -> Path:
    """Write the model folder; `says`: a label the classifier then gives every pair (P ~ 0.999),
    None: whatever the random weights make of the text."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = _vocab()
    _write_tokenizer(folder / "tokenizer.json", vocab)
    config = {
        "architectures": ["BertForSequenceClassification"],
        "model_type": "bert",
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "intermediate_size": hidden * 4,
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": positions,
        "type_vocab_size": 2,
        "vocab_size": len(vocab),
        "id2label": {str(i): name for i, name in enumerate(labels)},
        "label2id": {name: i for i, name in enumerate(labels)},
    }
    (folder / "config.json").write_text(json.dumps(config, indent=1))
    w = bert_weights(
        len(vocab), hidden=hidden, layers=layers, inner=hidden * 4, positions=positions, labels=len(labels), seed=seed
    )
    if says is not None:
        w["classifier.weight"] = np.zeros_like(w["classifier.weight"])
        w["classifier.bias"] = np.array([8.0 if name == says else 0.0 for name in labels], dtype=np.float32)
    write_safetensors(folder / "model.safetensors", w)
    return folder


def write_minilm_shaped_nli(folder: Path, *, seed: int = 0) -> Path:
    """A model of a real NLI cross-encoder's size and tokenization, for timing only: the installed
    all-MiniLM-L6-v2 (its WordPiece tokenizer and its 6 layers, 384 wide) under a random pooler and
    classifier. Its verdicts mean nothing; its cost per pair is a MiniLM-L6 cross-encoder's."""
    import shutil

    from app.providers.rerank.minilm import model_dir, read_safetensors

    source = model_dir()
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(source / "tokenizer.json", folder / "tokenizer.json")
    config = json.loads((source / "config.json").read_text())
    config |= {
        "architectures": ["BertForSequenceClassification"],
        "id2label": {str(i): name for i, name in enumerate(NLI_LABELS)},
        "label2id": {name: i for i, name in enumerate(NLI_LABELS)},
    }
    (folder / "config.json").write_text(json.dumps(config, indent=1))
    hidden = int(config["hidden_size"])
    rng = np.random.default_rng(seed)
    w = {
        f"bert.{name}": np.asarray(array, dtype=np.float32)
        for name, array in read_safetensors(source / "model.safetensors").items()
    }
    w |= {
        "bert.pooler.dense.weight": (rng.standard_normal((hidden, hidden)) * 0.05).astype(np.float32),
        "bert.pooler.dense.bias": np.zeros(hidden, dtype=np.float32),
        "classifier.weight": (rng.standard_normal((len(NLI_LABELS), hidden)) * 0.05).astype(np.float32),
        "classifier.bias": np.zeros(len(NLI_LABELS), dtype=np.float32),
    }
    write_safetensors(folder / "model.safetensors", w)
    return folder
