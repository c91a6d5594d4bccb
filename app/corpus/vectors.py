"""Stored sentence vectors: a compressed .npz of float16 vectors keyed by a hash of the exact text
embedded. Used for the corpus's passages (app/corpus/dense.py, the MiniLM reranker's encoder):
computed once, offline (python -m app.pipeline.evidence_vectors), then read at start-up instead of
running the model per request. They live in a folder beside the corpus, `<corpus>.vectors/`: derived
data, not part of the corpus (whose files the index fingerprints)."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

EVIDENCE_VECTORS_NAME = "evidence-minilm.npz"  # evidence passages' reranker texts
INDEX_VECTORS_NAME = "index-minilm.npz"  # the corpus index's passages (dense retrieval)
SENTENCE_VECTORS_NAME = "sentences-minilm.npz"  # evidence passages' candidate answer sentences, as quoted
INSTRUCTION_FREE_NAME = "instruction-free.json"  # evidence passages the injection detector passes
KEY_CHARS = 16  # hex characters of the text's SHA-1 (64 bits: no collision in practice)
EMBED_BATCH = 16


def vectors_dir(corpus_dir: Path) -> Path:
    """Where a corpus's stored vectors live by default: corpus/sample -> corpus/sample.vectors."""
    corpus_dir = Path(corpus_dir)
    return corpus_dir.with_name(corpus_dir.name + ".vectors")


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:KEY_CHARS]


def rerank_text(heading: str, text: str) -> str:
    """What the passage reranker embeds for a passage (app/pipeline/select.py _rerank)."""
    return f"{heading}\n{text}"


def read_vectors(path: Path) -> dict[str, Any]:
    """key -> float32 vector; empty when the file is missing."""
    import numpy as np

    if not path.is_file():
        return {}
    with np.load(path) as stored:
        return {str(k): v.astype(np.float32) for k, v in zip(stored["keys"], stored["vectors"])}


def write_vectors(texts: list[str], encoder: Any, path: Path) -> tuple[int, int]:
    """Store the vectors of `texts` at `path`, reusing those the file already holds for the same
    text; vectors of texts no longer listed are dropped. Returns (computed, reused)."""
    import numpy as np

    old = read_vectors(path)
    by_key = {text_key(t): t for t in texts}
    todo = [k for k in by_key if k not in old]
    for start in range(0, len(todo), EMBED_BATCH):
        chunk = todo[start : start + EMBED_BATCH]
        for key, vector in zip(chunk, encoder.embed([by_key[k] for k in chunk])):
            old[key] = vector
        if start % (EMBED_BATCH * 20) == 0:
            log.info("embedded %d of %d texts", start + len(chunk), len(todo))
    keys = sorted(by_key)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, keys=np.array(keys), vectors=np.stack([old[k] for k in keys]).astype(np.float16))
    tmp.replace(path)
    return len(todo), len(keys) - len(todo)
