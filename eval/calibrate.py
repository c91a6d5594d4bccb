"""Calibrate the answerability thresholds on the labelled development split.

    python -m eval.calibrate [--split dev] [--cases eval/labelled]

Runs the split once (extractive mode) to collect the evidence each case's composer saw, scores it
with the answerability component offline, and sweeps the threshold: for each value, the share of
answerable cases (gold in evidence) that would be answered and of unanswerable ones that would be
declined. Prints the table, the threshold with the best balanced accuracy (policy.answerable_at) and
the highest threshold with no false abstention (policy.skip_model_below, the cost cut-off).
"""

from __future__ import annotations

import argparse
from datetime import date

from app.domain.types import Evidence
from app.language.question import analyse
from app.pipeline.answerability import LexicalAnswerability
from eval.cases import load_cases
from eval.metrics import states
from eval.runner import run_mode


def _evidence(rows: list[dict]) -> list[Evidence]:
    return [
        Evidence(
            span_id=r["span_id"],
            url=r["url"],
            title=r.get("title", ""),
            domain=r["url"].split("/")[2],
            text=r["text"],
            published_at=None,
            date_source="unknown",
            fetched_at=None,
            score=r.get("score", 0.0),
            lexical_score=r.get("lexical_score"),
            primary=False,
            tokens=r.get("tokens", 0),
            section=r.get("section", ""),
            kind=r.get("kind", "prose"),
        )
        for r in rows
    ]


def scores(split: str, paths: list[str]) -> list[tuple[str, bool, float]]:
    cases = [c for c in load_cases(paths) if c.slice and c.split == split]
    run = run_mode(cases, "extractive")
    scorer = LexicalAnswerability()
    out = []
    for case in cases:
        got = run.evidence.get(case.id)
        if not got or not got["evidence"]:
            continue  # the gate decided; nothing to calibrate
        golds = [g.lower() for g in case.gold_answers]
        answerable = case.expected_status == "grounded" and any(
            states(e["text"].lower(), g) for g in golds for e in got["evidence"]
        )
        if case.expected_status == "grounded" and not answerable:
            continue  # recall's failure, not answerability's
        a = scorer.assess(analyse(got["question"] or case.question), _evidence(got["evidence"]), date.today())
        out.append((case.id, answerable, a.score))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="dev")
    ap.add_argument("--cases", nargs="+", default=["eval/labelled/questions"])
    args = ap.parse_args()
    rows = scores(args.split, args.cases)
    pos = [s for _, a, s in rows if a]
    neg = [s for _, a, s in rows if not a]
    print(f"{len(pos)} answerable, {len(neg)} unanswerable cases with evidence ({args.split})")
    print("| threshold | answered (answerable) | declined (unanswerable) | balanced |\n|---|---|---|---|")
    best = (0.0, 0.0)
    for i in range(0, 61):
        t = i / 100
        tpr = sum(s >= t for s in pos) / max(1, len(pos))
        tnr = sum(s < t for s in neg) / max(1, len(neg))
        if i % 5 == 0:
            print(f"| {t:.2f} | {tpr:.3f} | {tnr:.3f} | {(tpr + tnr) / 2:.3f} |")
        if (tpr + tnr) / 2 > best[1]:
            best = (t, (tpr + tnr) / 2)
    safe = max((i / 100 for i in range(0, 61) if all(s >= i / 100 for s in pos)), default=0.0)
    print(f"\nanswerable_at (best balanced accuracy): {best[0]:.2f} ({best[1]:.3f})")
    print(f"skip_model_below (no answerable case under it): {safe:.2f}")


if __name__ == "__main__":
    main()
