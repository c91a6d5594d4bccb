"""Dense retrieval over the corpus passages, fused with BM25 by reciprocal rank.

BM25 misses a page that shares few words with the question ("stay in the REPL after my script runs"
for `python -i`, "named after the snake" for Monty Python); a sentence embedding does not need the
words. Each passage's all-MiniLM-L6-v2 vector is computed once, offline, and stored beside the corpus
(`python -m app.pipeline.evidence_vectors corpus/sample`, into corpus/sample.vectors/), keyed by a hash of the exact text embedded, so a changed
or added page only lacks vectors for its own passages (they still match by BM25). At query time the
query alone is embedded (~10 ms) and compared with every stored vector (one matrix product).

Measured on the labelled dev split (python -m eval.dense_page_recall): the answer's page among the six
pages retrieved, 0.890 for BM25 on the question, 0.963 dense, 0.954 fused.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.corpus.vectors import read_vectors, text_key, write_vectors
from app.urls import domain_matches

if TYPE_CHECKING:
    from app.corpus.index import CorpusIndex

log = logging.getLogger(__name__)

DENSE_POOL = 30  # pages each leg contributes to the fusion
RRF_K = 60  # reciprocal-rank fusion constant of the two legs (Cormack et al.'s value)


def embedded_text(title: str, section: str, body: str) -> str:
    """What a passage's vector is computed from (the model reads its first 256 tokens)."""
    return f"{title} {section}\n{body}".strip()


def host_allowed(host: str, include: list[str] | tuple[str, ...], exclude: list[str] | tuple[str, ...]) -> bool:
    """The BM25 leg's domain rule (index._domain_filter): the host is the domain or ends with ".domain";
    blank entries are ignored."""
    inc = [d.strip() for d in include if d.strip(" .")]
    exc = [d.strip() for d in exclude if d.strip(" .")]
    return (not inc or domain_matches(host, inc)) and not domain_matches(host, exc)


@dataclass
class DenseIndex:
    matrix: Any  # float32 (passages × dims), unit rows
    doc_ids: Any  # int array, the page of each row
    rowids: Any  # int array, the FTS passage rowid of each row
    hosts: dict[int, str]  # doc_id -> host

    @classmethod
    def load(cls, index: CorpusIndex, path: Path) -> DenseIndex | None:
        """The stored vectors of the index's passages; None when the file is missing or matches none."""
        import numpy as np

        stored = read_vectors(path)
        if not stored:
            return None
        picked, doc_ids, rowids = [], [], []
        passages = index.passage_texts()
        for rowid, doc_id, title, section, body in passages:
            vector = stored.get(text_key(embedded_text(title, section, body)))
            if vector is not None:
                picked.append(vector)
                doc_ids.append(doc_id)
                rowids.append(rowid)
        if not picked:
            log.warning("corpus: %s holds no vector of this corpus's passages; dense retrieval is off", path)
            return None
        if len(picked) < len(passages):
            log.warning(
                "corpus: %d of %d passages have no stored vector (run python -m app.pipeline.evidence_vectors)",
                len(passages) - len(picked),
                len(passages),
            )
        matrix = np.stack(picked)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)  # float16 rounding
        return cls(matrix, np.array(doc_ids), np.array(rowids), index.doc_hosts())

    def search(
        self,
        vector: Any,
        count: int,
        include: list[str] | tuple[str, ...] = (),
        exclude: list[str] | tuple[str, ...] = (),
    ) -> list[tuple[int, int, float]]:
        """(doc_id, rowid, cosine) of the best passage of the `count` best pages."""
        import numpy as np

        sims = self.matrix @ np.asarray(vector, dtype=np.float32)
        order = np.argsort(-sims, kind="stable")
        # Each page's best passage: its first position in the order (vectorised; a Python loop over
        # every passage cost milliseconds per query).
        _, first = np.unique(self.doc_ids[order], return_index=True)
        out: list[tuple[int, int, float]] = []
        for i in order[np.sort(first)]:
            doc_id = int(self.doc_ids[i])
            if (include or exclude) and not host_allowed(self.hosts.get(doc_id, ""), include, exclude):
                continue
            out.append((doc_id, int(self.rowids[i]), float(sims[i])))
            if len(out) == count:
                break
        return out


def fuse(lexical: list[str], dense: list[str], k: int = RRF_K) -> list[str]:
    """Reciprocal-rank fusion of two ranked lists of page keys; ties keep the lexical order."""
    score: dict[str, float] = {}
    for ranked in (lexical, dense):
        for rank, key in enumerate(ranked):
            score[key] = score.get(key, 0.0) + 1.0 / (k + rank + 1)
    order = {key: i for i, key in enumerate([*lexical, *dense])}
    return sorted(score, key=lambda key: (-score[key], order[key]))


def build_vectors(index: CorpusIndex, encoder: Any, path: Path) -> tuple[int, int]:
    """Store the vectors of every passage of the index at `path` (reusing the file's). (computed, reused)"""
    return write_vectors([embedded_text(t, s, b) for _, _, t, s, b in index.passage_texts()], encoder, path)
