"""What reading evidence for planted instructions costs, with and without the fine-tuned encoder
(GA_INJECTION_ENCODER=auto / off).

Every sentence of the 181 human-extracted AEB article bodies (../shared/bench-data/aeb), scored cold
(memos cleared) on one pinned core, CPU time of the process: the lexical detector on every
sentence, then the encoder on the English sentences at or above its gate (app/pipeline/injection.py
`flagged`). Reports the gated share and ms of CPU per article sentence for each mode, then what one encoder read
costs (the first 256 sentences, in batches of 1, 4, 16 and 64).

    python bench/injection_scan.py [--json out.json]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import pin_one_core, write_json  # noqa: E402


def paragraphs() -> list[list[str]]:
    from app.language.text import split_sentences
    from eval.real_pages import ground_truth

    return [split_sentences(p) for v in ground_truth().values() for p in v["articleBody"].split("\n") if p.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json")
    args = ap.parse_args()
    pin_one_core()
    from app.pipeline import injection, injection_encoder
    from app.settings import Settings

    encoder = injection_encoder.from_settings(Settings())
    if encoder is None:
        raise SystemExit("the encoder needs the MiniLM model and py3langid (scripts/bootstrap semantic)")
    paras = paragraphs()
    sentences = sum(len(p) for p in paras)
    injection.model().probability("warm up")  # the weights load outside the timing
    encoder.logits(["warm up"])
    from app.language.identify import language_of

    language_of("warm up")
    out: dict[str, object] = {"sentences": sentences}
    for mode, chosen in (("lexical only", None), ("with the encoder", encoder)):
        injection.use_encoder(chosen)
        injection._probability.cache_clear()
        start = time.process_time()
        removed = sum(sum(injection.flagged(p)) for p in paras)
        spent = time.process_time() - start
        out[mode] = {"ms_per_sentence": round(1000 * spent / sentences, 3), "sentences_removed": removed}
    gated = sum(
        1
        for p in paras
        for s in p
        if encoder.verdicts.gate <= injection.model().probability(s) < encoder.verdicts.lexical_threshold
    )
    out["gated_share"] = round(gated / sentences, 4)
    # What one encoder read costs, and whether batching would make it cheaper: the first 256
    # sentences, cold, in batches of each size.
    sample = [s for p in paras for s in p][:256]
    out["encoder_tokens_per_sentence"] = round(sum(map(len, encoder._base.token_ids(sample))) / len(sample), 1)
    for size in (1, 4, 16, 64):
        start = time.process_time()
        for i in range(0, len(sample), size):
            encoder.logits(sample[i : i + size])
        out[f"encoder_ms_per_sentence_batch_{size}"] = round(1000 * (time.process_time() - start) / len(sample), 2)
    for key, value in out.items():
        print(f"{key}: {value}")
    if args.json:
        write_json(args.json, out)


if __name__ == "__main__":
    main()
