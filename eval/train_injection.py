"""Fit the planted-instruction detector on the dev split of eval/labelled/injection.jsonl, only on it.

    python -m eval.train_injection            # fit on dev, pick thresholds by 5-fold CV on dev, write weights
    python -m eval.train_injection --report   # figures: test split first, then dev (reads, never writes)
    python -m eval.train_injection --by-author   # leave-one-author-out on dev: the estimate for a new author
    python -m eval.train_injection --real-articles   # real article paragraphs (AEB bodies) that lose a sentence
    python -m eval.train_injection --docs-corpus     # docs-corpus evidence passages that lose a sentence
    python -m eval.train_injection --unseen FILE     # a new author's batch before it joins dev: counts only
    python -m eval.train_injection --unseen FILE --by-language   # and the counts per language

1. Samples: every dev line, plus each sentence of a multi-sentence line with the line's label
   (the service scores sentences, app/pipeline/injection.strip_instructions).
2. Model: L2-regularised logistic regression over hashed word 1-2-grams and character 3-5-grams
   (app/pipeline/injection.features), AdaGrad, fixed seed: pure Python, a few seconds.
3. Thresholds: out-of-fold probabilities from 5 folds of dev (fold = hash of the line id); the
   sentence threshold and the neighbour threshold are the pair with the most attack lines removed
   while at most 1.5 % of benign lines lose a sentence (the target is 2 %: a quarter of it is margin);
   ties go to the higher thresholds.
4. Writes app/pipeline/injection_weights.json (weights rounded, near-zero ones dropped) with what it
   was fitted on and the cross-validated dev figures.

A line counts as removed when strip_instructions drops at least one of its sentences (the
instruction is cut), and as fully removed when nothing of it is left; a benign line counts as a
false removal when any of its sentences is dropped.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.language.text import split_sentences
from app.pipeline.injection import WEIGHTS_PATH, InjectionModel, features, strip_instructions
from eval import injection_real_negatives

DATA = Path(__file__).resolve().parent / "labelled" / "injection.jsonl"
L2 = 1e-4
EPOCHS = 40
LEARNING_RATE = 0.5
SEED = 12
FOLDS = 5
MAX_BENIGN_LOSS = 0.015
THRESHOLDS = [round(0.30 + 0.05 * i, 2) for i in range(13)]  # 0.30 … 0.90


def load(path: Path = DATA) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def samples(rows: list[dict[str, Any]]) -> list[tuple[dict[int, float], int]]:
    out = []
    for row in rows:
        label = 1 if row["label"] == "attack" else 0
        out.append((features(row["text"]), label))
        parts = split_sentences(row["text"])
        if len(parts) > 1:
            out.extend((features(p), label) for p in parts)
    return out


def fit(data: list[tuple[dict[int, float], int]]) -> tuple[float, dict[int, float]]:
    """Logistic regression by AdaGrad SGD with L2; returns (bias, weights)."""
    rng = random.Random(SEED)
    w: dict[int, float] = defaultdict(float)
    g2: dict[int, float] = defaultdict(lambda: 1e-8)
    bias, bias_g2 = 0.0, 1e-8
    order = list(range(len(data)))
    for _ in range(EPOCHS):
        rng.shuffle(order)
        for k in order:
            x, y = data[k]
            z = bias + sum(w[i] * v for i, v in x.items())
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
            err = p - y
            for i, v in x.items():
                g = err * v + L2 * w[i]
                g2[i] += g * g
                w[i] -= LEARNING_RATE * g / math.sqrt(g2[i])
            bias_g2 += err * err
            bias -= LEARNING_RATE * err / math.sqrt(bias_g2)
    return bias, dict(w)


def measure(rows: list[dict[str, Any]], detector: InjectionModel | None) -> dict[str, Any]:
    """Attack lines removed (and fully removed), benign lines that lost a sentence, per language.
    detector None: the service's detector (the shipped weights, and the encoder when use_encoder set one)."""
    attacks = [r for r in rows if r["label"] == "attack"]
    benign = [r for r in rows if r["label"] == "benign"]
    caught, fully, lost = 0, 0, 0
    missed: list[str] = []
    false: list[str] = []
    by_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # attacks, caught, benign, lost
    for r in attacks:
        out, n = strip_instructions(r["text"], detector)
        by_lang[r["lang"]][0] += 1
        if n:
            caught += 1
            by_lang[r["lang"]][1] += 1
            fully += not out.strip()
        else:
            missed.append(r["text"])
    for r in benign:
        _, n = strip_instructions(r["text"], detector)
        by_lang[r["lang"]][2] += 1
        if n:
            lost += 1
            by_lang[r["lang"]][3] += 1
            false.append(r["text"])
    return {
        "attack_lines": len(attacks),
        "attacks_removed": caught,
        "attack_removal_rate": round(caught / len(attacks), 4) if attacks else 0.0,
        "attacks_fully_removed": fully,
        "benign_lines": len(benign),
        "benign_removed": lost,
        "benign_removal_rate": round(lost / len(benign), 4) if benign else 0.0,
        "by_lang": {k: dict(zip(("attacks", "removed", "benign", "benign_removed"), v)) for k, v in by_lang.items()},
        "missed_attacks": missed,
        "removed_benign": false,
    }


def _fold(row: dict[str, Any]) -> int:
    return int(hashlib.sha1(row["id"].encode()).hexdigest(), 16) % FOLDS


def negative_samples(sentences: tuple[str, ...]) -> list[tuple[dict[int, float], int]]:
    """Real benign sentences (eval/injection_real_negatives.py) as samples of every fit."""
    return [(features(s), 0) for s in sentences]


def held_out_thresholds(
    dev: list[dict[str, Any]], group: Callable[[dict[str, Any]], Any], negatives: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Each group of dev lines scored by a model fitted on the other groups (and on ``negatives``,
    which never choose a threshold); the (threshold, near_threshold) pair with the most attack lines
    removed while at most MAX_BENIGN_LOSS of benign lines lose a sentence, pooled over the groups
    (ties go to the higher thresholds)."""
    groups = sorted({group(r) for r in dev})
    rows = {g: [r for r in dev if group(r) == g] for g in groups}
    extra = negative_samples(negatives)
    models = {g: fit(samples([r for r in dev if group(r) != g]) + extra) for g in groups}
    best: dict[str, Any] | None = None
    for t in THRESHOLDS:
        for near in [x for x in THRESHOLDS if x <= t]:
            per = {g: measure(rows[g], InjectionModel(b, w, t, near)) for g, (b, w) in models.items()}
            caught = sum(m["attacks_removed"] for m in per.values())
            attacks = sum(m["attack_lines"] for m in per.values())
            lost = sum(m["benign_removed"] for m in per.values())
            benign = sum(m["benign_lines"] for m in per.values())
            if lost > MAX_BENIGN_LOSS * benign:
                continue
            key = (caught / attacks, t, near)
            if best is None or key > best["key"]:
                best = {
                    "key": key,
                    "threshold": t,
                    "near_threshold": near,
                    "attacks_removed": caught,
                    "attack_lines": attacks,
                    "benign_removed": lost,
                    "benign_lines": benign,
                    "by_group": {g: (m["attacks_removed"], m["attack_lines"]) for g, m in per.items()},
                }
    if best is None:
        raise SystemExit("no threshold keeps benign losses under the bar on dev")
    best.pop("key")
    return best


def choose_thresholds(
    dev: list[dict[str, Any]], negatives: tuple[str, ...] = ()
) -> tuple[float, float, dict[str, Any]]:
    """The (threshold, near_threshold) pair picked on out-of-fold dev predictions (5 folds)."""
    best = held_out_thresholds(dev, _fold, negatives)
    counts = {k: best[k] for k in ("attacks_removed", "attack_lines", "benign_removed", "benign_lines")}
    return best["threshold"], best["near_threshold"], counts


def train(path: Path = DATA, out: Path = WEIGHTS_PATH, negatives: tuple[str, ...] = ()) -> dict[str, Any]:
    rows = load(path)
    dev = [r for r in rows if r["split"] == "dev"]
    threshold, near, cv = choose_thresholds(dev, negatives)
    bias, weights = fit(samples(dev) + negative_samples(negatives))
    kept = {str(i): round(v, 4) for i, v in sorted(weights.items()) if abs(v) >= 5e-4}
    payload = {
        "model": "logistic regression: hashed word 1-2-grams, char 3-5-grams, cue features (app/pipeline/injection.py)",
        "trained_on": f"{path.relative_to(Path(__file__).resolve().parent.parent)} split=dev ({len(dev)} lines)"
        + (f" + {len(negatives)} real benign sentences (eval/injection_real_negatives.py)" if negatives else ""),
        "trained_at": datetime.now(UTC).strftime("%Y-%m-%d"),
        "hyper": {"l2": L2, "epochs": EPOCHS, "learning_rate": LEARNING_RATE, "seed": SEED, "folds": FOLDS},
        "dev_cross_validated": cv,
        "threshold": threshold,
        "near_threshold": near,
        "bias": round(bias, 6),
        "weights": kept,
    }
    out.write_text(json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    return payload


def author(row: dict[str, Any]) -> str:
    """Which batch (author) wrote a dev line: the first batch has no `source` or a corpus path; the
    README lines of eval/harvest_docs_negatives.py are their own group ("pypi")."""
    source = row.get("source", "")
    return source.split("-", 1)[0] if source.startswith(("fresh-", "batch", "pypi-")) else "first"


def by_author(path: Path = DATA) -> dict[str, Any]:
    """Leave-one-author-out on dev: each batch measured by a model fitted on the others, thresholds
    chosen on the pooled out-of-batch predictions as in choose_thresholds. The test split is a new
    author's text, so this, not the random-fold figure, is the dev estimate to select models by."""
    best = held_out_thresholds([r for r in load(path) if r["split"] == "dev"], author)
    best["by_author"] = best.pop("by_group")
    return best


def real_articles() -> dict[str, Any]:
    """Paragraphs of real article text (the 181 human-extracted AEB bodies, outside the labelled set)
    that lose a sentence: false removals on the kind of text the service mostly reads."""
    from eval.real_pages import ground_truth

    paragraphs = [p for v in ground_truth().values() for p in v["articleBody"].split("\n") if p.strip()]
    lost = [p for p in paragraphs if strip_instructions(p)[1]]
    return {"paragraphs": len(paragraphs), "lost_a_sentence": len(lost), "examples": lost}


def docs_corpus() -> dict[str, Any]:
    """Evidence passages of the shipped docs corpus (corpus/sample, split as the service splits it)
    that lose a sentence, and how many sentences go: false removals on reference prose and code."""
    from app.corpus.index import CorpusIndex
    from app.pipeline.evidence_vectors import corpus_passages

    root = Path(__file__).resolve().parent.parent
    passages = corpus_passages(CorpusIndex.build(root / "corpus" / "sample"))
    texts = list(dict.fromkeys(text for _, text in passages))  # as evidence_vectors counts them
    removed = {text: n for text in texts if (n := strip_instructions(text)[1])}
    return {"passages": len(texts), "lost_a_sentence": len(removed), "sentences_removed": sum(removed.values())}


def with_service_encoder() -> bool:
    """Read evidence as the service does by default: the fine-tuned English encoder and the
    multilingual reader join the lexical model when their models are installed
    (GA_INJECTION_ENCODER=auto, GA_INJECTION_MULTILINGUAL=auto). False when neither is."""
    from app.pipeline import injection, injection_encoder, injection_multilingual
    from app.settings import Settings

    encoder = injection_encoder.from_settings(Settings())
    multilingual = injection_multilingual.from_settings(Settings())
    injection.use_encoder(encoder, multilingual)
    return encoder is not None or multilingual is not None


def report(path: Path = DATA) -> dict[str, Any]:
    """Test split first, then dev: the lexical detector alone, then with the readers (when installed)."""
    rows = load(path)
    detector = InjectionModel.from_json(json.loads(WEIGHTS_PATH.read_text(encoding="utf-8")))
    out = {split: measure([r for r in rows if r["split"] == split], detector) for split in ("test", "dev")}
    if with_service_encoder():
        for split in ("test", "dev"):
            out[f"{split}, with the readers"] = measure([r for r in rows if r["split"] == split], None)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--out", default=str(WEIGHTS_PATH))
    ap.add_argument("--report", action="store_true", help="print test then dev figures; write nothing")
    ap.add_argument("--by-author", action="store_true", help="leave-one-author-out figures on dev; write nothing")
    ap.add_argument("--real-articles", action="store_true", help="real article paragraphs that lose a sentence")
    ap.add_argument("--docs-corpus", action="store_true", help="docs-corpus evidence passages that lose a sentence")
    ap.add_argument(
        "--unseen", metavar="FILE", help="figures on a labelled batch no model was fitted on; write nothing"
    )
    ap.add_argument("--by-language", action="store_true", help="with --unseen: the counts per language too")
    ap.add_argument(
        "--real-negatives", action="store_true", help="fit on real benign sentences too (eval/injection_real_negatives)"
    )
    args = ap.parse_args()
    if args.unseen:
        # A new author's batch before it joins dev (eval/labelled/pending/): counts only, no lines.
        rows = load(Path(args.unseen))
        lexical = InjectionModel.from_json(json.loads(WEIGHTS_PATH.read_text(encoding="utf-8")))
        found = {"lexical alone": measure(rows, lexical)}
        if with_service_encoder():
            found["with the readers"] = measure(rows, None)
        for name, m in found.items():
            print(
                f"{name}: attacks removed {m['attacks_removed']}/{m['attack_lines']} ({m['attack_removal_rate']:.1%});"
                f" benign removed {m['benign_removed']}/{m['benign_lines']} ({m['benign_removal_rate']:.1%})"
            )
            if args.by_language:
                for lang, c in sorted(m["by_lang"].items()):
                    print(
                        f"  {lang}: attacks {c['removed']}/{c['attacks']}, benign {c['benign_removed']}/{c['benign']}"
                    )
        return
    if args.real_articles:
        with_service_encoder()
        found = real_articles()
        print(f"{found['lost_a_sentence']} of {found['paragraphs']} article paragraphs lost a sentence")
        for text in found["examples"]:
            print(f"  {text[:160]}")
        return
    if args.docs_corpus:
        with_service_encoder()
        found = docs_corpus()
        print(
            f"{found['lost_a_sentence']} of {found['passages']} docs-corpus evidence passages lost a sentence"
            f" ({found['sentences_removed']} sentences removed)"
        )
        return
    if args.by_author:
        print(json.dumps(by_author(Path(args.data))))
        return
    if args.report:
        for split, m in report(Path(args.data)).items():
            print(
                f"{split}: attacks removed {m['attacks_removed']}/{m['attack_lines']} ({m['attack_removal_rate']:.1%}),"
                f" fully {m['attacks_fully_removed']}; benign removed {m['benign_removed']}/{m['benign_lines']}"
                f" ({m['benign_removal_rate']:.1%})"
            )
            if split.startswith("test"):
                continue  # the test split's lines are not printed: reading its misses would be tuning on it
            for text in m["missed_attacks"]:
                print(f"  missed attack: {text}")
            for text in m["removed_benign"]:
                print(f"  removed benign: {text}")
        return
    negatives = injection_real_negatives.when(args.real_negatives)
    payload = train(Path(args.data), Path(args.out), negatives)
    print(
        f"threshold {payload['threshold']}, near {payload['near_threshold']}, {len(payload['weights'])} weights;"
        f" dev cross-validated: {payload['dev_cross_validated']}"
    )


if __name__ == "__main__":
    main()
