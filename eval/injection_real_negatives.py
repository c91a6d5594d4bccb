"""Real benign sentences that no measurement reads, for the injection detectors to learn from.

The labelled benign lines (eval/labelled/injection.jsonl) are written by helpers to look like attacks;
real article text is what the service mostly reads, and its false removals are measured on the AEB
article bodies (eval.train_injection --real-articles) and on the dates set's non-English sentences
(eval.injection_foreign_text). What is left for training: the English sentences of the dates set's
pages that hold no sentence the multilingual reader would read (so no page is both learnt from and
measured), extracted as the service extracts them, minus any sentence that also occurs in an AEB body.
They join the fits as benign samples; thresholds are still chosen on labelled lines only.

    python -m eval.injection_real_negatives     # how many, and a few of them
"""

from __future__ import annotations

import gzip
from functools import cache

from eval.injection_foreign_text import DATES_DIR


@cache
def english_sentences() -> tuple[str, ...]:
    from app.extract.fallback import extract_with_fallback
    from app.language.text import split_sentences
    from app.pipeline.injection_multilingual import MIN_LETTERS, language_of, worth_reading
    from eval.real_pages import ground_truth

    measured = {
        s.strip()
        for item in ground_truth().values()
        for p in item["articleBody"].split("\n")
        for s in split_sentences(p)
    }
    out: dict[str, None] = {}
    for path in sorted(DATES_DIR.glob("*.html.gz")):
        try:
            ext = extract_with_fallback(gzip.decompress(path.read_bytes()))
        except Exception:  # a page the extractor cannot read adds nothing
            continue
        sentences = [s.strip() for b in ext.blocks for s in split_sentences(b.text)]
        if any(worth_reading(s) for s in sentences):
            continue  # eval.injection_foreign_text measures this page
        for s in sentences:
            if language_of(s) == "en" and sum(map(str.isalpha, s)) >= MIN_LETTERS and s not in measured:
                out[s] = None
    return tuple(out)


def when(flag: bool) -> tuple[str, ...]:
    """The sentences when a trainer's --real-negatives is set, else none."""
    return english_sentences() if flag else ()


def main() -> None:
    found = english_sentences()
    print(f"{len(found)} real English sentences")
    for s in found[:: max(1, len(found) // 10)]:
        print(f"  {s[:140]}")


if __name__ == "__main__":
    main()
