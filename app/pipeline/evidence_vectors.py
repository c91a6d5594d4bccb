"""Stored sentence-model vectors of a corpus's passages, so that using the model costs a dot product
instead of a forward pass per passage.

    python -m app.pipeline.evidence_vectors corpus/sample      # -> corpus/sample.vectors/*.npz

Three files (app/corpus/vectors.py): `index-minilm.npz`, the corpus index's passages, for dense
retrieval in the local search provider (app/corpus/dense.py); `evidence-minilm.npz`, the evidence
passages; `sentences-minilm.npz`, the evidence passages' candidate answer sentences as the
answerability stage quotes them (its similarity feature, `GA_SENTENCE_RANKER=auto`). And
`instruction-free.json`: the evidence passages the injection detector removes nothing from, under its
fingerprint (weights and code): the select stage does not scan them again. Each run embeds only the texts the files lack. For the evidence file, each corpus page is extracted and split into passages exactly as the service does for evidence
selection (app/pipeline/extract.py, app/pipeline/passages.py), and each passage's reranker text
(heading, newline, text) is embedded once. The encoder reads the file at start-up
(MiniLMEncoder.preload) and answers a stored text from it: the MiniLM passage reranker then scores
every passage of a corpus page for the cost of embedding the question. A text the file lacks (a
changed page, a web page) is embedded as before.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.corpus.dense import build_vectors
from app.corpus.index import CorpusIndex
from app.corpus.vectors import (
    EVIDENCE_VECTORS_NAME,
    INDEX_VECTORS_NAME,
    INSTRUCTION_FREE_NAME,
    SENTENCE_VECTORS_NAME,
    rerank_text,
    text_key,
    vectors_dir,
    write_vectors,
)
from app.pipeline.answerability_features import quoted_sentences
from app.pipeline.extract import extract_page
from app.pipeline.fetch import held_body, held_page
from app.pipeline.injection import fingerprint as injection_fingerprint
from app.pipeline.injection import strip_instructions, use_encoder
from app.pipeline.injection_encoder import InjectionEncoder
from app.pipeline.injection_multilingual import shared_reader
from app.pipeline.passages import split_passages
from app.providers.rerank.minilm import shared_encoder


def corpus_passages(index: CorpusIndex) -> list[tuple[str, str]]:
    """(heading, text) of every evidence passage of the corpus, as the service splits its pages."""
    out: dict[tuple[str, str], None] = {}
    for url in index.urls():
        found = index.get_document(url)
        if found is None:
            continue
        content, content_type = found
        page = held_page(url, content_type)  # as the fetch stage reads a corpus page
        page.body = held_body(content)
        doc = extract_page(page, None, 0)
        if doc is not None:
            out.update(((p.heading, p.text), None) for p in split_passages(doc))
    return list(out)


def corpus_sentence_texts(passages: list[tuple[str, str]]) -> list[str]:
    """The passages' candidate answer sentences as the answerability stage quotes them."""
    return list(dict.fromkeys(q for _, text in passages for q in quoted_sentences(text)))


def write_instruction_free(texts: list[str], path: Path) -> tuple[int, int]:
    """The keys of the passages from which the injection detector removes nothing, with the detector's
    fingerprint: the select stage skips scanning them (injection.preload_verified). Returns (clean, all)."""
    keys = sorted({text_key(t) for t in texts if strip_instructions(t)[1] == 0})
    path.write_text(json.dumps({"fingerprint": injection_fingerprint(), "keys": keys}, indent=0) + "\n")
    return len(keys), len(set(texts))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.pipeline.evidence_vectors", description=__doc__)
    ap.add_argument("source", type=Path, help="a corpus folder")
    ap.add_argument("--out", type=Path, help="folder of the files (default: SOURCE.vectors)")
    args = ap.parse_args(argv)
    out = args.out or vectors_dir(args.source)
    out.mkdir(parents=True, exist_ok=True)
    index, encoder = CorpusIndex.build(args.source), shared_encoder("")
    computed, reused = build_vectors(index, encoder, out / INDEX_VECTORS_NAME)
    print(f"index passages: {computed} embedded, {reused} reused -> {out / INDEX_VECTORS_NAME}")
    passages = corpus_passages(index)
    texts = [rerank_text(heading, text) for heading, text in passages]
    computed, reused = write_vectors(texts, encoder, out / EVIDENCE_VECTORS_NAME)
    print(f"evidence passages: {computed} embedded, {reused} reused -> {out / EVIDENCE_VECTORS_NAME}")
    computed, reused = write_vectors(corpus_sentence_texts(passages), encoder, out / SENTENCE_VECTORS_NAME)
    print(f"answer sentences: {computed} embedded, {reused} reused -> {out / SENTENCE_VECTORS_NAME}")
    # The detector the service runs by default (GA_INJECTION_ENCODER and GA_INJECTION_MULTILINGUAL
    # auto, with the models installed).
    use_encoder(InjectionEncoder(encoder), shared_reader())
    clean, total = write_instruction_free([text for _, text in passages], out / INSTRUCTION_FREE_NAME)
    print(f"passages without instructions: {clean} of {total} -> {out / INSTRUCTION_FREE_NAME}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
