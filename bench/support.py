"""Claim-support scorers on the labelled set eval/labelled/support.jsonl.

    .venv/bin/python bench/support.py                 # the report (test split first)
    .venv/bin/python bench/support.py --errors dev    # also list the dev split's wrong verdicts
    .venv/bin/python bench/support.py --json out.json

Each line of the set is a claim, the passage it cites, a label (supported/unsupported) and the trap
it was written as (verbatim, paraphrase, negation, antonym, number, other_entity, unrelated). The
split is fixed by the claim text: sha1(claim) with an even last hex digit is dev (tune on it), odd
is test. Reported per split and per trap: accuracy at the threshold, the share of verdicts that
are decisive (outside the gray band, so no judge is asked), the share of decisive verdicts that
are wrong, and how many negation/antonym traps labelled unsupported score as supported (target 0).
Real sentences: every English sentence of the AEB articles against its own window, verbatim (must be
supported), with "not" inserted and with a word swapped for its opposite (must not be).
Speed: microseconds per claim, on the set (1 passage of ~600 characters) and on 3 passages of
1,000 characters per claim, with the per-passage cache cold (the first claim to cite them) and warm
(the answer's other claims citing the same spans; claim and sentence caches still cleared).

Scorers: `lexical` (app.language.support.LexicalSupport, threshold 0.6, band 0.25) and the current
`baseline` (app.pipeline.verify.support_of, at the service's own settings: threshold 0.5 and
verify.unsettled's band 0.3). With `--model DIR` (a BERT NLI folder, GA_SUPPORT_MODEL=bert-nli), also
`lexical+model`: the lexical verdict, and for the claims it leaves undecided the entailment model's at
`--entail-at` / `--contradict-at` (app/pipeline/entail.settle; the claim's best quote and its passage
as premises, as the service reads them): the command that calibrates GA_SUPPORT_MODEL_ENTAIL_AT and
GA_SUPPORT_MODEL_CONTRADICT_AT on the dev split.

    .venv/bin/python bench/support.py --model /models/nli --entail-at 0.9 --contradict-at 0.9 --no-real --no-speed
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.language import support_passages, support_polarity  # noqa: E402
from app.language.support import LexicalSupport  # noqa: E402
from app.language.text import split_sentences  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "eval" / "labelled" / "support.jsonl"
AEB = REPO.parent / "shared" / "bench-data" / "aeb" / "ground-truth.json"
TRAPS = ["verbatim", "paraphrase", "number", "negation", "antonym", "other_entity", "unrelated"]


@dataclass
class _Span:
    text: str


def split_of(claim: str) -> str:
    return "dev" if int(hashlib.sha1(claim.encode("utf-8")).hexdigest()[-1], 16) % 2 == 0 else "test"


def load() -> list[dict]:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in rows:
        r["split"] = split_of(r["claim"])
    return rows


class Baseline:
    name = "baseline"
    threshold, band = 0.5, 0.3

    def __init__(self) -> None:
        from app.pipeline.verify import support_of  # the scorer in service today

        self._support_of = support_of

    def run(self, claim: str, passages: list[str]) -> tuple[float, bool]:
        score, _quote = self._support_of(claim, [_Span(p) for p in passages])
        return score, not (self.threshold - self.band <= score < self.threshold + self.band)


class Lexical:
    name = "lexical"

    def __init__(self) -> None:
        self.scorer = LexicalSupport()
        self.threshold, self.band = self.scorer.threshold, self.scorer.band

    def run(self, claim: str, passages: list[str]) -> tuple[float, bool]:
        s = self.scorer.score(claim, passages)
        return s.score, s.decisive


class LexicalThenModel(Lexical):
    """The service's order: the lexical verdict; an undecided one goes to the entailment model, whose
    confident verdict settles it (decisive, scored 1 or 0); an unsure one keeps the lexical score."""

    name = "lexical+model"

    def __init__(self, folder: Path, entail_at: float, contradict_at: float) -> None:
        super().__init__()
        from app.providers.entailment.bert_nli import BertNLI

        self.model, self.entail_at, self.contradict_at = BertNLI(folder), entail_at, contradict_at
        self.asked = self.settled = 0

    def run(self, claim: str, passages: list[str]) -> tuple[float, bool]:
        from app.pipeline.entail import premises, read_claims, settle

        s = self.scorer.score(claim, passages)
        if s.decisive:
            return s.score, True
        self.asked += 1
        [found] = read_claims(self.model, [(claim, premises(s.quote, passages))], self.entail_at)
        verdict = settle(found, entail_at=self.entail_at, contradict_at=self.contradict_at)
        if verdict is None:
            return s.score, False
        self.settled += 1
        return (1.0 if verdict else 0.0), True


def evaluate(scorer, rows: list[dict]) -> list[dict]:
    out = []
    for r in rows:
        score, decisive = scorer.run(r["claim"], [r["passage"]])
        pred = score >= scorer.threshold
        out.append(
            {**r, "score": score, "decisive": decisive, "pred": pred, "correct": pred == (r["label"] == "supported")}
        )
    return out


def summarise(results: list[dict]) -> dict:
    n = len(results)
    if not n:
        return {"n": 0}
    decisive = [r for r in results if r["decisive"]]
    wrong_decisive = [r for r in decisive if not r["correct"]]
    traps = [r for r in results if r["trap"] in ("negation", "antonym") and r["label"] == "unsupported"]
    return {
        "n": n,
        "accuracy": round(sum(r["correct"] for r in results) / n, 3),
        "decisive": round(len(decisive) / n, 3),
        "decisive_wrong": round(len(wrong_decisive) / len(decisive), 3) if decisive else 0.0,
        "traps_supported": sum(r["pred"] for r in traps),
        "traps": len(traps),
    }


def table(title: str, per: dict[str, dict]) -> str:
    lines = [
        title,
        f"  {'slice':<22}{'n':>5}{'acc':>8}{'decisive':>10}{'dec.wrong':>11}{'neg/ant traps scored supported':>33}",
    ]
    for name, s in per.items():
        if not s.get("n"):
            continue
        trap = f"{s['traps_supported']}/{s['traps']}" if s["traps"] else "-"
        lines.append(
            f"  {name:<22}{s['n']:>5}{s['accuracy']:>8.3f}{s['decisive']:>10.3f}{s['decisive_wrong']:>11.3f}{trap:>33}"
        )
    return "\n".join(lines)


def report(scorer, rows: list[dict]) -> tuple[str, dict]:
    results = evaluate(scorer, rows)
    text, payload = [], {}
    for split in ("test", "dev", "all"):
        part = [r for r in results if split == "all" or r["split"] == split]
        per: dict[str, dict] = {"ALL": summarise(part)}
        for trap in TRAPS:
            sub = [r for r in part if r["trap"] == trap]
            per[trap] = summarise(sub)
            for label in ("supported", "unsupported"):
                sub2 = [r for r in sub if r["label"] == label]
                if sub2 and len(sub2) != len(sub):
                    per[f"  {trap}/{label[:5]}"] = summarise(sub2)
        payload[split] = per
        text.append(table(f"[{scorer.name}] split={split} (threshold {scorer.threshold}, band {scorer.band})", per))
    return "\n".join(text), {"summary": payload, "results": results}


# --- real sentences ---------------------------------------------------------------------------
# Beyond the hand-written set: every English sentence of the AEB articles (40-300 characters)
# against its own 5-sentence window. Verbatim, it must be supported (a flag is a false positive of
# the negation/antonym/number rules); with "not" put after its first auxiliary, or one word swapped
# for its opposite, it must not be.

_AUX = re.compile(r"\b(is|are|was|were|has|have|had|will|can|could|would|should|did|does|do)\b (?!not\b)")
_SWAP = {
    "rose": "fell",
    "fell": "rose",
    "increased": "decreased",
    "decreased": "increased",
    "won": "lost",
    "lost": "won",
    "higher": "lower",
    "lower": "higher",
    "before": "after",
    "after": "before",
    "more": "less",
    "less": "more",
    "approved": "rejected",
    "rejected": "approved",
    "opened": "closed",
    "closed": "opened",
    "high": "low",
    "low": "high",
    "beat": "lost to",
    "increase": "decrease",
    "decrease": "increase",
    "largest": "smallest",
    "biggest": "smallest",
    "early": "late",
    "earlier": "later",
    "later": "earlier",
    "cut": "raised",
    "raised": "cut",
    "allowed": "banned",
    "strong": "weak",
    "long": "short",
    "short": "long",
}
_SWAP_RX = re.compile(r"\b(" + "|".join(_SWAP) + r")\b")


def real_sentences() -> list[tuple[str, str]]:
    out = []
    for v in json.loads(AEB.read_text(encoding="utf-8")).values():
        body = v["articleBody"]
        if not re.search(r"\b(the|and)\b", body[:400]):
            continue  # not English
        sents = split_sentences(body)
        for i, s in enumerate(sents):
            if 40 <= len(s) <= 300:
                out.append((s, "\n".join(sents[max(0, i - 2) : i + 3])))
    return out


def real_report(scorers) -> tuple[str, dict]:
    pairs = real_sentences()
    negated = [(s[: m.end(1)] + " not" + s[m.end(1) :], p) for s, p in pairs if (m := _AUX.search(s))]
    swapped = [(s[: m.start()] + _SWAP[m.group(1)] + s[m.end() :], p) for s, p in pairs if (m := _SWAP_RX.search(s))]
    lines = [
        f"real sentences (AEB articles, each against its own 5-sentence window): {len(pairs)} verbatim, "
        f"{len(negated)} with 'not' inserted, {len(swapped)} with one word swapped for its opposite"
    ]
    out = {}
    for sc in scorers:
        verb = [sc.run(s, [p]) for s, p in pairs]
        neg = [sc.run(s, [p]) for s, p in negated]
        swp = [sc.run(s, [p]) for s, p in swapped]
        r = {
            "verbatim_supported": round(sum(x[0] >= sc.threshold for x in verb) / len(verb), 4),
            "verbatim_decisive_supported": round(sum(x[0] >= sc.threshold and x[1] for x in verb) / len(verb), 4),
            "negated_unsupported": round(sum(x[0] < sc.threshold for x in neg) / len(neg), 4),
            "swapped_unsupported": round(sum(x[0] < sc.threshold for x in swp) / len(swp), 4),
        }
        out[sc.name] = r
        lines.append(
            f"  {sc.name:<9}verbatim supported {r['verbatim_supported']:.4f} (decisive {r['verbatim_decisive_supported']:.4f})"
            f"   negated -> unsupported {r['negated_unsupported']:.3f}   swapped -> unsupported {r['swapped_unsupported']:.3f}"
        )
    lines.append("  (inserted 'not' and swaps are mechanical: some make no sense or keep the meaning, e.g. 'not only')")
    return "\n".join(lines), out


# --- speed ------------------------------------------------------------------------------------


def _clear_caches() -> None:
    # the per-text caches; the per-word caches (_term, chunk terms, marks) stay warm, as in a running service
    for fn in (support_passages.read_passage, support_polarity.claim_analysis, support_polarity.full_analysis):
        if fn is not None and hasattr(fn, "cache_clear"):
            fn.cache_clear()


def speed_inputs(rows: list[dict]) -> list[tuple[str, list[str]]]:
    """Each labelled claim against 3 passages of ~1,000 characters: its own (cut or padded to 1,000)
    and two more from other articles."""
    bodies = [
        v["articleBody"] for v in json.loads(AEB.read_text(encoding="utf-8")).values() if len(v["articleBody"]) > 3000
    ]

    def thousand(text: str) -> str:
        out, total = [], 0
        for s in split_sentences(text):
            if total + len(s) > 1000:
                break
            out.append(s)
            total += len(s) + 1
        return " ".join(out)

    inputs = []
    for i, r in enumerate(rows):
        own = (r["passage"] + " " + bodies[i % len(bodies)])[:1000]
        inputs.append(
            (
                r["claim"],
                [own, thousand(bodies[(i * 7 + 1) % len(bodies)]), thousand(bodies[(i * 13 + 5) % len(bodies)][1000:])],
            )
        )
    return inputs


def time_scorer(scorer, inputs: list[tuple[str, list[str]]], *, cold: bool, repeats: int = 5) -> float:
    """Median over repeats of the mean µs per claim. cold: every per-text cache cleared before each
    claim (the first claim to cite these passages). warm: the claim and sentence caches cleared but
    its passages already analysed (the answer's other claims citing the same spans)."""
    runs = []
    for _ in range(repeats):
        total = 0.0
        for claim, passages in inputs:
            _clear_caches()
            if not cold:
                for p in passages:
                    _ = support_passages.read_passage(
                        p
                    ).numbers  # split, term sets and numbers, as an earlier claim leaves them
            start = time.perf_counter()
            scorer.run(claim, passages)
            total += time.perf_counter() - start
        runs.append(total / len(inputs) * 1e6)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--errors", choices=["dev", "test", "all"], help="list wrong verdicts of this split")
    ap.add_argument("--json", help="write the summaries and per-claim results here")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--no-real", action="store_true", help="skip the real-sentence checks")
    ap.add_argument("--model", type=Path, help="a BERT NLI model folder: also score lexical, then the model")
    ap.add_argument("--entail-at", type=float, default=0.9, help="with --model: P(entailment) that settles")
    ap.add_argument("--contradict-at", type=float, default=0.9, help="with --model: P(contradiction) that settles")
    args = ap.parse_args()

    rows = load()
    counts = defaultdict(int)
    for r in rows:
        counts[(r["split"], r["label"])] += 1
    print(
        f"{DATA.relative_to(REPO)}: {len(rows)} claims; "
        + ", ".join(f"{k[0]}/{k[1]}={v}" for k, v in sorted(counts.items()))
    )
    payload = {}
    scorers: list = [Lexical(), Baseline()]
    if args.model:
        scorers.append(LexicalThenModel(args.model, args.entail_at, args.contradict_at))
    for scorer in scorers:
        text, data = report(scorer, rows)
        print()
        print(text)
        payload[scorer.name] = data
        if isinstance(scorer, LexicalThenModel):
            print(f"  the model was asked about {scorer.asked} claims and settled {scorer.settled}")
        if args.errors and scorer.name == "lexical":
            print(f"\n[lexical] wrong verdicts, split={args.errors}")
            for r in data["results"]:
                if not r["correct"] and (args.errors == "all" or r["split"] == args.errors):
                    s = scorer.scorer.score(r["claim"], [r["passage"]])
                    print(
                        f"  {r['label'][:5]:<6}{r['trap']:<13}{s.score:.2f} {'D' if s.decisive else '-'} "
                        f"{r['claim'][:110]}  {s.reasons}"
                    )

    if not args.no_real:
        text, payload["real_sentences"] = real_report([Lexical(), Baseline()])
        print()
        print(text)

    if not args.no_speed:
        print("\nspeed (µs per claim, median of 5 runs)")
        set_inputs = [(r["claim"], [r["passage"]]) for r in rows]
        big = speed_inputs(rows)
        speed = {}
        for scorer in (Lexical(), Baseline()):
            speed[scorer.name] = {
                "set_cold": time_scorer(scorer, set_inputs, cold=True),
                "set_warm": time_scorer(scorer, set_inputs, cold=False),
                "3x1000_cold": time_scorer(scorer, big, cold=True),
                "3x1000_warm": time_scorer(scorer, big, cold=False),
            }
            print(f"  {scorer.name:<9}" + "  ".join(f"{k}={v:7.1f}" for k, v in speed[scorer.name].items()))
        if args.model:
            # The model's cost where the service pays it: a claim the lexical check leaves open (its best
            # quote and its passage read as premises), one claim at a time as verification asks.
            both = LexicalThenModel(args.model, args.entail_at, args.contradict_at)
            open_claims = [(c, p) for c, p in set_inputs if not both.scorer.score(c, p).decisive]
            speed["lexical+model_open_claims"] = {"open_set": time_scorer(both, open_claims, cold=True, repeats=3)}
            print(
                f"  lexical+model, the {len(open_claims)} open claims: {speed['lexical+model_open_claims']['open_set']:9.1f}"
            )
        payload["speed_us"] = speed
    if args.json:
        for data in payload.values():
            if isinstance(data, dict):
                data.pop("results", None)
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
