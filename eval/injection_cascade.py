"""Choose how the lexical detector and the fine-tuned encoder combine, by leave-one-author-out on dev.

A sentence is removed when its lexical probability reaches ``lexical_threshold``; an English sentence
(app/language/identify.py) whose lexical probability reaches ``gate`` is read by the encoder too (its
cost falls on those only) and removed when ``lexical_weight`` x the lexical logit + (1 -
``lexical_weight``) x the encoder's logit reaches ``threshold``
(app/pipeline/injection_encoder.EncoderVerdicts). Each author's dev lines are scored by both models
fitted without that author (``python -m eval.train_injection_encoder --by-author FILE`` writes the
encoder's); per gate, the values with the most attack lines removed while at most 1.5 % of benign
lines lose a sentence, pooled over the authors, are printed with the share of real article sentences
(AEB bodies) the encoder would read.

    python -m eval.injection_cascade --encoder FILE     # the grid, one line per gate
    python -m eval.injection_cascade --languages        # the language identifier on the labelled lines
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from app.language.identify import language_of
from app.pipeline.injection import InjectionModel
from app.pipeline.injection_encoder import EncoderVerdicts
from eval.train_injection import MAX_BENIGN_LOSS, author, fit, load, samples
from eval.train_injection_encoder import sentences_of

GATES = [0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
LEXICAL_THRESHOLDS = [0.8, 0.85, 0.9, 0.95, 1.01]
LEXICAL_WEIGHTS = [0.0, 0.3, 0.5, 0.7]
MIXED_THRESHOLDS = [x / 4 for x in range(-8, 33)]


def _fit_without(group: str) -> tuple[float, dict[int, float]]:
    dev = [r for r in load() if r["split"] == "dev"]
    return fit(samples([r for r in dev if author(r) != group]))


def lexical_by_author(cache: Path) -> dict[str, list[float]]:
    """Out-of-author lexical probability of each dev line's sentences (cached: one fit per author, ~45 min)."""
    if cache.is_file():
        return json.loads(cache.read_text())
    dev = [r for r in load() if r["split"] == "dev"]
    groups = sorted({author(r) for r in dev})
    with ProcessPoolExecutor(2) as pool:
        models = dict(zip(groups, pool.map(_fit_without, groups)))
    out = {}
    for r in dev:
        m = InjectionModel(*models[author(r)], 0.5, 0.5)
        out[r["id"]] = [m.probability(s) for s in sentences_of(r["text"])]
    cache.write_text(json.dumps(out))
    return out


def search(
    rows: list[dict[str, Any]], lexical: dict[str, list[float]], encoder: dict[str, list[float]]
) -> list[dict[str, Any]]:
    attacks = [r for r in rows if r["label"] == "attack"]
    benign = [r for r in rows if r["label"] == "benign"]
    english = {r["id"]: [language_of(s) == "en" for s in sentences_of(r["text"])] for r in rows}
    results = []
    for gate in GATES:
        best: tuple | None = None
        for t in LEXICAL_THRESHOLDS:
            for weight in LEXICAL_WEIGHTS:
                for bar in MIXED_THRESHOLDS:
                    verdicts = EncoderVerdicts(t, gate, weight, bar)

                    def removed(r: dict[str, Any], v: EncoderVerdicts = verdicts) -> bool:
                        return any(map(v.removes_sentence, lexical[r["id"]], encoder[r["id"]], english[r["id"]]))

                    lost = sum(map(removed, benign))
                    if lost > MAX_BENIGN_LOSS * len(benign):
                        continue
                    caught = sum(map(removed, attacks))
                    if best is None or caught > best[0]:
                        by = {
                            g: (
                                sum(removed(r) for r in attacks if author(r) == g),
                                sum(author(r) == g for r in attacks),
                            )
                            for g in sorted({author(r) for r in rows})
                        }
                        best = (caught, lost, verdicts, by)
        if best:
            caught, lost, v, by = best
            results.append(
                {
                    "gate": gate,
                    "lexical_threshold": v.lexical_threshold,
                    "lexical_weight": v.lexical_weight,
                    "threshold": v.threshold,
                    "attacks_removed": caught,
                    "attack_lines": len(attacks),
                    "benign_removed": lost,
                    "benign_lines": len(benign),
                    "by_author": by,
                }
            )
    return results


def languages() -> None:
    rows = load()
    said = [language_of(r["text"]) == "en" for r in rows]
    truth = [r["lang"] == "en" for r in rows]
    hits = sum(s and t for s, t in zip(said, truth))
    print(
        f"English lines called English: {hits} of {sum(truth)}; other lines called English:"
        f" {sum(s and not t for s, t in zip(said, truth))} of {len(rows) - sum(truth)}"
    )


def gated_share(gates: list[float]) -> dict[float, float]:
    """Share of real article sentences whose shipped lexical probability reaches each gate."""
    from app.pipeline.injection import model
    from eval.real_pages import ground_truth

    probs = [
        model().probability(s)
        for v in ground_truth().values()
        for p in v["articleBody"].split("\n")
        if p.strip()
        for s in sentences_of(p)
    ]
    return {g: sum(p >= g for p in probs) / len(probs) for g in gates}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoder", type=Path)
    ap.add_argument("--languages", action="store_true")
    ap.add_argument("--lexical", type=Path, default=Path("/tmp/injection-lexical-by-author.json"))
    args = ap.parse_args()
    if args.languages or not args.encoder:
        languages()
        return
    rows = [r for r in load() if r["split"] == "dev"]
    lexical = lexical_by_author(args.lexical)
    encoder = json.loads(args.encoder.read_text())
    share = gated_share(GATES)
    for res in search(rows, lexical, encoder):
        res["real_sentences_gated"] = round(share[res["gate"]], 4)
        print(json.dumps(res))


if __name__ == "__main__":
    main()
