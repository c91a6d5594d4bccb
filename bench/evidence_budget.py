"""Evidence budget sweep on replayed dev selections: recall, evidence size and CPU per setting.

    python -m eval.train_passages --save /tmp/sel.pkl     # records the dev split's selections (once)
    python bench/evidence_budget.py /tmp/sel.pkl [--primary-pages]
    python bench/evidence_budget.py /tmp/sel.pkl --wide   # budgets past the default: recall and size only
    python bench/evidence_budget.py /tmp/sel.pkl --seats  # GA_DENSE_EVIDENCE_SEATS swept at the default budget
    python bench/evidence_budget.py --record eval/labelled/questions/docs*.jsonl   # record in this process

For each (token budget, span ceiling, per-page cap) the recorded selections are replayed with the
hand-set scorer: the share of answerable dev cases whose evidence holds a gold answer, the median
evidence tokens, and the CPU ms per request of selection plus the answerability assessment (the two
stages the budget changes), median of three alternating passes, news and docs apart. Every
recorded request keeps its own other options; only these three change.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import statistics
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.language.question import analyse  # noqa: E402
from app.pipeline import select  # noqa: E402
from app.pipeline.answerability import build_scorer  # noqa: E402
from app.settings import Settings  # noqa: E402
from eval.metrics import states  # noqa: E402
from eval.train_passages import collect, load_records  # noqa: E402

SETTINGS = [
    (3000, 20, 8),
    (3000, 30, 12),
    (4000, 30, 12),
    (5000, 30, 12),
    (5000, 30, 16),
    (8000, 30, 30),
    (5000, 40, 12),
    (5000, 50, 16),
    (5000, 60, 20),
]
PASSES = 3
# --wide: budgets past the default, recall and evidence size only (what an operator buys with
# GA_DEFAULT_TOKEN_BUDGET / GA_DEFAULT_MAX_EVIDENCE; the per-page cap is MAX_PASSAGES_PER_DOC).
WIDE_SETTINGS = [(5000, 40, 12), (6000, 60, 20), (7000, 60, 20), (8000, 80, 24), (10000, 100, 30), (12000, 120, 40)]


SEATS = [0, 4, 8, 10, 12, 14, 16, 20]


def replay(records, budget: int, ceiling: int, cap: int, *, assess: bool = False, seats: int | None = None):
    scorer = build_scorer("learned")
    hits, tokens = 0, []
    t0 = time.process_time()
    for r in records:
        docs, question, freshness_days, ctx = r.args
        ctx = copy.copy(ctx)
        ctx.options = dataclasses.replace(ctx.options, token_budget=budget, max_evidence=ceiling)
        # the recorded settings, with the seats as given here or else as Settings() ships them now
        # (whatever the recording had: a file recorded before seats existed replays with them)
        ctx.settings = ctx.settings.model_copy(
            update={"dense_evidence_seats": Settings().dense_evidence_seats if seats is None else seats}
        )
        # The request's own options as recorded (the reranker among them), the per-page cap swept.
        sel = select.select_evidence(docs, question, freshness_days, ctx, **{**r.kwargs, "per_doc_cap": cap})
        if assess:
            scorer.assess(analyse(question), sel.evidence, date.today())
        hits += any(states(e.text.lower(), g) for g in r.golds for e in sel.evidence)
        tokens.append(sel.prompt_tokens)
    ms = (time.process_time() - t0) * 1000 / max(1, len(records))
    return hits / max(1, len(records)), statistics.median(tokens) if tokens else 0, ms


def _recall_table(records, docs, first: str, rows) -> None:
    """Recall and median tokens, all cases and docs apart; rows: (label, (budget, ceiling, cap), seats)."""
    print(f"| {first} | gold in evidence | median tokens | docs: gold in evidence | docs: median tokens |")
    print("|---|---|---|---|---|")
    for label, setting, seats in rows:
        recall, tokens, _ = replay(records, *setting, seats=seats)
        docs_recall, docs_tokens, _ = replay(docs, *setting, seats=seats)
        print(f"| {label} | {recall:.3f} | {tokens:.0f} | {docs_recall:.3f} | {docs_tokens:.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("records", type=Path, nargs="?", help="selections saved by eval.train_passages --save")
    ap.add_argument(
        "--record", nargs="+", metavar="CASES", help="instead: run these case files' dev split and record here"
    )
    ap.add_argument("--primary-pages", action="store_true", help="also sweep PRIMARY_DOCS_PER_DOMAIN at 5000/40/12")
    ap.add_argument(
        "--wide", action="store_true", help="only budgets past the default: recall and tokens, all and docs"
    )
    ap.add_argument("--seats", action="store_true", help="only the reranker's evidence seats, at 5000/40/12")
    args = ap.parse_args()
    if bool(args.records) == bool(args.record):
        ap.error("give a records file or --record CASES, one of the two")
    records = collect(args.record, "dev") if args.record else load_records(args.records)
    groups = {
        "news": [r for r in records if r.case_id.startswith("news")],
        "docs": [r for r in records if r.case_id.startswith("docs")],
    }
    print(f"{len(records)} answerable dev cases ({', '.join(f'{k} {len(v)}' for k, v in groups.items())})\n")
    if args.seats:
        _recall_table(records, groups["docs"], "seats", [(str(n), (5000, 40, 12), n) for n in SEATS])
        return
    if args.wide:
        rows = [(" / ".join(map(str, s)), s, None) for s in WIDE_SETTINGS]
        _recall_table(records, groups["docs"], "budget / ceiling / cap", rows)
        return
    print("| budget / ceiling / cap | gold in evidence | median tokens | CPU ms news | CPU ms docs |")
    print("|---|---|---|---|---|")
    for budget, ceiling, cap in SETTINGS:
        recall, tokens, _ = replay(records, budget, ceiling, cap)
        cpu = {}
        for name, group in groups.items():
            cpu[name] = statistics.median(replay(group, budget, ceiling, cap, assess=True)[2] for _ in range(PASSES))
        print(f"| {budget} / {ceiling} / {cap} | {recall:.3f} | {tokens:.0f} | {cpu['news']:.1f} | {cpu['docs']:.1f} |")
    if args.primary_pages:
        shipped = select.PRIMARY_DOCS_PER_DOMAIN
        for n in (2, 3, 4, 5, 6):
            select.PRIMARY_DOCS_PER_DOMAIN = n
            print(f"pages per primary domain {n}: gold in evidence {replay(records, 5000, 40, 12)[0]:.3f}")
        select.PRIMARY_DOCS_PER_DOMAIN = shipped


if __name__ == "__main__":
    main()
