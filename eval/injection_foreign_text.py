"""What the multilingual injection reader costs and removes on real non-English page text.

The labelled lines (eval/labelled/injection.jsonl) say how many attacks a gate and threshold catch
and how many benign *labelled* lines they hurt; this says what they do to real pages, which nobody
wrote to fool a detector: the 200 pages of the dates set (MediaCloud 2020, many languages), extracted
as the service extracts them, and the 181 human-extracted AEB article bodies. Every sentence the
reader would read (injection_multilingual.worth_reading: not English, at least MIN_LETTERS letters)
is scored by the shipped lexical detector and by a head (the shipped one, or --head FILE); per
operating point of the head (GA_INJECTION_MULTILINGUAL_GATE) the table gives the share of those
sentences the reader reads (its CPU: ~21 ms a read with the six-layer head, ~41 with twelve) and
the sentences and pages it would remove (false removals: none of these pages plants an instruction;
the removed sentences are printed with --show).

    python -m eval.injection_foreign_text [--head FILE] [--show 20]

Vectors are cached by text (--vectors; ~2,800 sentences, about 2 minutes to embed on one core).
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path
from typing import Any

from eval.real_pages import AEB_DIR

DATES_DIR = AEB_DIR.parent / "dates" / "pages"


def foreign_sentences() -> list[tuple[str, str]]:
    """(page, sentence) for every sentence of the real pages that the multilingual reader would read,
    cut as it cuts them."""
    from app.extract.fallback import extract_with_fallback
    from app.language.text import split_sentences, well_formed
    from app.pipeline.injection_multilingual import READ_MAX_CHARS, worth_reading
    from eval.real_pages import ground_truth

    paragraphs: list[tuple[str, str]] = []
    for path in sorted(DATES_DIR.glob("*.html.gz")):
        try:
            ext = extract_with_fallback(gzip.decompress(path.read_bytes()))
        except Exception:  # a page the extractor cannot read adds nothing
            continue
        paragraphs += [(path.name, b.text) for b in ext.blocks]
    for page, item in ground_truth().items():
        paragraphs += [(page, p) for p in item["articleBody"].split("\n") if p.strip()]
    return [
        (page, well_formed(s[:READ_MAX_CHARS]))
        for page, text in paragraphs
        for s in split_sentences(text)
        if worth_reading(s)
    ]


def table(rows: list[tuple[str, str, float, float]], head: dict[str, Any]) -> list[dict[str, Any]]:
    """rows: (page, sentence, lexical probability, head logit). Per operating point of the head file
    (injection_multilingual.operating_point): the share of sentences read, and the sentences and pages
    that lose a sentence (as injection.flagged decides, neighbours aside; the lexical detector's own
    removals, P >= its threshold, are counted too: the first row says how many those are)."""
    from app.pipeline.injection_encoder import EncoderVerdicts

    points = head.get("operating_points") or [head]
    lexical_threshold = float(head["lexical_threshold"])
    alone = [r for r in rows if r[2] >= lexical_threshold]
    out = [
        {
            "point": "lexical alone",
            "removed_sentences": len(alone),
            "pages_losing_a_sentence": len({r[0] for r in alone}),
        }
    ]
    for point in points:
        v = EncoderVerdicts(
            lexical_threshold, float(point["gate"]), float(point["lexical_weight"]), float(point["threshold"])
        )
        read = [r for r in rows if v.lexical_threshold > r[2] >= v.gate]
        gone = [r for r in rows if v.removes_sentence(r[2], r[3])]
        out.append(
            {
                "gate": v.gate,
                "lexical_weight": v.lexical_weight,
                "threshold": v.threshold,
                "default": v.gate == float(head["gate"]),
                "read_share": round(len(read) / max(1, len(rows)), 4),
                "removed_sentences": len(gone),
                "pages_losing_a_sentence": len({r[0] for r in gone}),
            }
        )
    return out


def main() -> None:
    import numpy as np

    from app.pipeline.injection import model
    from app.pipeline.injection_multilingual import HEAD_PATH, head_layers, tuned_digest
    from eval.train_injection_multilingual import vectors

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--head", type=Path, default=HEAD_PATH)
    ap.add_argument("--vectors", type=Path, default=Path("/tmp/injection-e5-foreign-vectors.npz"))
    ap.add_argument("--show", type=int, default=0, help="print the N sentences with the highest head logit")
    args = ap.parse_args()
    head = json.loads(args.head.read_text(encoding="utf-8"))
    w, b = np.asarray(head["weights"], dtype=np.float64), float(head["bias"])
    found = foreign_sentences()
    vec = vectors([s for _, s in found], args.vectors, head_layers(head), tuned_digest(head))
    lexical = model()
    rows = [(page, s, lexical.probability(s), float(vec[s] @ w + b)) for page, s in found]
    print(json.dumps({"pages": len({r[0] for r in rows}), "sentences": len(rows)}))
    for line in table(rows, head):
        print(json.dumps(line))
    for page, s, p, z in sorted(rows, key=lambda r: -r[3])[: args.show]:
        print(f"{z:6.2f} {p:5.3f} {page}: {s[:160]}")


if __name__ == "__main__":
    main()
