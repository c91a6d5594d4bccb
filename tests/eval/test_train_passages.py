"""eval.train_passages --save / --load: recorded selections survive the round trip (the CPU queue and the
reranker, which do not pickle, are left out and rebuilt) and replay to the same evidence."""

from __future__ import annotations

import json
from pathlib import Path

from app.pipeline.passage_rank import HandSetScorer
from eval.train_passages import RERANKER_MARK, collect, load_records, recall, save_records

QUESTIONS = Path(__file__).resolve().parents[2] / "eval" / "labelled" / "questions" / "docs.jsonl"


def test_recorded_selections_round_trip_through_a_file(tmp_path: Path) -> None:
    lines = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    two = [c for c in lines if c["split"] == "dev" and c["expected_status"] == "grounded"][:2]
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in two), encoding="utf-8")

    records = collect([str(cases)], "dev")
    assert [r.case_id for r in records] == [c["id"] for c in two]
    assert all(r.args[3].cpu is not None for r in records)  # what made --save fail: a queue of threads

    saved = tmp_path / "sel.pkl"
    save_records(records, saved)
    loaded = load_records(saved)

    assert [r.case_id for r in loaded] == [r.case_id for r in records]
    assert all(r.args[3].cpu is None for r in loaded)
    # The docs corpus ranks with the stored-vector reranker when the semantic extra is installed:
    # a loaded record gets one rebuilt, never the placeholder.
    assert all(r.kwargs.get("reranker") != RERANKER_MARK for r in loaded)
    assert [type(r.kwargs.get("reranker")) for r in loaded] == [type(r.kwargs.get("reranker")) for r in records]
    assert recall(loaded, HandSetScorer()) == recall(records, HandSetScorer())
