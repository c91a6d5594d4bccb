"""What the opt-in sentence model costs (GA_SENTENCE_RANKER=minilm / GA_RERANKER=minilm).

Sentences of the 181 human-extracted AEB article bodies (../shared/bench-data/aeb), embedded cold
(a fresh encoder, so no memo hits) by the numpy forward pass, one core pinned, CPU time of the
process. Reports ms of CPU per token and per sentence, and what a request's candidate set costs
(CANDIDATES sentences, the mean of the labelled dev split's collection: 8,944 sentences over 263
cases, eval/train_answerability.py).

    python bench/sentence_model.py [--sentences 600] [--json out.json]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import pin_one_core, write_json  # noqa: E402

CANDIDATES = 34  # candidate sentences per request on the dev split (8,944 / 263)


def load_sentences(limit: int) -> list[str]:
    from app.language.text import split_sentences
    from eval.real_pages import ground_truth

    out: list[str] = []
    for item in ground_truth().values():
        for para in item["articleBody"].split("\n"):
            out.extend(s for s in split_sentences(para) if len(s) > 20)
    return out[:limit]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=600)
    ap.add_argument("--json")
    args = ap.parse_args()
    pin_one_core()
    from app.providers.rerank.minilm import MiniLMEncoder

    sentences = load_sentences(args.sentences)
    encoder = MiniLMEncoder()
    tokens = sum(len(e.ids) for e in encoder._tokenizer.encode_batch(sentences))
    encoder.embed(sentences[:32])  # warm-up (BLAS threads, allocations)
    encoder._memo.clear()  # cold memo for the timed pass
    t0 = time.process_time()
    encoder.embed(sentences)
    cpu_s = time.process_time() - t0
    per_token_ms = cpu_s * 1000 / tokens
    per_sentence_ms = cpu_s * 1000 / len(sentences)
    result = {
        "sentences": len(sentences),
        "tokens": tokens,
        "cpu_s": round(cpu_s, 3),
        "ms_per_token": round(per_token_ms, 4),
        "ms_per_sentence": round(per_sentence_ms, 3),
        "request_sentence_ranker_ms": round(per_sentence_ms * CANDIDATES, 1),
    }
    print(
        f"{len(sentences)} sentences, {tokens} tokens (mean {tokens / len(sentences):.1f}), one core, cold memo:"
        f" {per_token_ms:.3f} ms of CPU a token, {per_sentence_ms:.2f} ms a sentence;"
        f" a request's {CANDIDATES} candidate sentences ≈ {result['request_sentence_ranker_ms']} ms"
    )
    write_json(args.json, result)


if __name__ == "__main__":
    main()
