"""Page recall of the corpus search legs on the labelled docs questions: is a gold page among the
first six pages BM25, dense retrieval, or their fusion returns for the question?

    python -m eval.dense_page_recall [--split dev]

One query per case (the question; a follow-up's last user message), over the shipped index and its
stored passage vectors (app/corpus/dense.py), so the legs are compared apart from the search stage's
query planning and fusion across queries. Dev only unless told otherwise.
"""

from __future__ import annotations

import argparse
import glob

from app.corpus.dense import DENSE_POOL, DenseIndex, fuse
from app.corpus.index import CorpusIndex
from app.corpus.vectors import INDEX_VECTORS_NAME, vectors_dir
from app.providers.rerank.minilm import shared_encoder
from app.settings import Settings
from eval.cases import load_cases

PAGES = 6  # the pages the fetch stage reads by default (GA_DEFAULT_MAX_FETCHES)
FILES = "eval/labelled/questions/docs*.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="dev")
    args = ap.parse_args()
    settings = Settings()
    index = CorpusIndex.build(settings.corpus_dir)
    dense = DenseIndex.load(index, vectors_dir(settings.corpus_dir) / INDEX_VECTORS_NAME)
    assert dense is not None, "no stored vectors: python -m app.pipeline.evidence_vectors corpus/sample"
    encoder = shared_encoder("")
    cases = [
        c
        for c in load_cases(sorted(glob.glob(FILES)))
        if c.split == args.split and c.expected_status == "grounded" and c.gold_pages
    ]
    hits = {"bm25": 0, "dense": 0, "fused": 0}
    for case in cases:
        question = [m["content"] for m in case.messages if m["role"] == "user"][-1]
        lexical = [h.url for h in index.search(question, count=DENSE_POOL, with_content=False)]
        rows = dense.search(encoder.embed([question])[0], DENSE_POOL)
        found = [h.url for h in index.hits_for(rows, with_content=False)]  # as the local provider does
        for leg, ranked in (("bm25", lexical), ("dense", found), ("fused", fuse(lexical, found))):
            hits[leg] += any(u.endswith(g) for u in ranked[:PAGES] for g in case.gold_pages)
    print(f"{len(cases)} answerable docs questions ({args.split}); a gold page among the first {PAGES}:")
    for leg, n in hits.items():
        print(f"  {leg:6} {n}/{len(cases)} = {n / max(1, len(cases)):.3f}")


if __name__ == "__main__":
    main()
