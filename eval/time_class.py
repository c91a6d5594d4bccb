"""Time sensitivity measured: app.language.time's class of each labelled question against its label.

    python -m eval.time_class                 # test split first, then dev
    python -m eval.time_class --errors dev    # the dev split's misclassified questions (tuning reads dev only)
    python -m eval.time_class --classifier words   # as GA_TIME_CLASSIFIER: model (default), words, keywords

Data: eval/labelled/time.jsonl, one question a line, {"id", "question", "time", "note", "split"}, the
class a careful editor would give it (live ~30 days, news ~3 months, dated ~2 years, stable: reference;
app/language/time.py's windows). Written by helpers who saw neither the code nor the other files;
split once by a hash of the id (`python -m eval.split`) before the classifier was first run on them.
Those questions are a quarter of each class and full of traps; what the service mostly hears is
reference questions. So the docs-corpus questions of the labelled question set
(eval/labelled/questions/docs*.jsonl, their own dev/test split) join as "stable" — questions about
the shipped Python 3.11 documentation, whose answers do not age — and are reported apart.

An error has a direction, and the two cost differently: a class *staler* than the label (a wider window)
can cite an outdated price as current, a confidently wrong answer; a *fresher* one (a narrower window)
refuses reference pages as stale, a false abstention.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from app.language.question import analyse, use_time_model
from app.language.time import WINDOW_DAYS, TimeClass

LABELLED = Path(__file__).resolve().parent / "labelled" / "time.jsonl"
DOCS_QUESTIONS = Path(__file__).resolve().parent / "labelled" / "questions"
# The last three authors wrote in the mix a service hears (about half stable), the first six a quarter
# of each class with traps both ways.
NATURAL_MIX = ("timeg-", "timeh-", "timei-")
ORDER = (TimeClass.live, TimeClass.news, TimeClass.dated, TimeClass.stable)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load(split: str) -> list[dict]:
    """The labelled time questions of a split."""
    return [r for r in _jsonl(LABELLED) if r["split"] == split]


def load_docs(split: str) -> list[dict]:
    """The docs-corpus questions of a split, as stable time questions (the last user turn)."""
    out = []
    for path in sorted(DOCS_QUESTIONS.glob("docs*.jsonl")):
        for case in _jsonl(path):
            if case["split"] != split:
                continue
            question = case.get("question") or [m for m in case["messages"] if m["role"] == "user"][-1]["content"]
            out.append({"id": case["id"], "question": question, "time": TimeClass.stable.value})
    return out


def error_direction(gold: TimeClass, got: TimeClass) -> str:
    """ "right", "staler" (a wider window than the label's) or "fresher"."""
    if got is gold:
        return "right"
    return "staler" if WINDOW_DAYS[got] > WINDOW_DAYS[gold] else "fresher"


def score(rows: list[dict]) -> dict:
    """Accuracy, errors by direction and the confusion (label → predicted) over `rows`."""
    confusion: Counter[tuple[str, str]] = Counter()
    staler = fresher = 0
    errors = []
    for r in rows:
        gold, got = TimeClass(r["time"]), analyse(r["question"]).time
        confusion[(gold.value, got.value)] += 1
        direction = error_direction(gold, got)
        if direction != "right":
            errors.append((r["id"], gold.value, got.value, r["question"]))
            staler += direction == "staler"
            fresher += direction == "fresher"
    n = len(rows)
    return {
        "questions": n,
        "accuracy": round(sum(confusion[(c.value, c.value)] for c in ORDER) / n, 3) if n else None,
        "staler_than_label": staler,
        "fresher_than_label": fresher,
        "confusion": {f"{g}->{p}": k for (g, p), k in sorted(confusion.items())},
        "errors": errors,
    }


def _table(name: str, s: dict) -> str:
    head = "label \\ predicted | " + " | ".join(c.value for c in ORDER)
    rows = [head, "|".join(["---"] * (len(ORDER) + 1))]
    for g in ORDER:
        cells = [str(s["confusion"].get(f"{g.value}->{p.value}", 0)) for p in ORDER]
        rows.append(f"{g.value} | " + " | ".join(cells))
    return (
        f"{name}: {s['questions']} questions, accuracy {s['accuracy']}, staler than the label "
        f"{s['staler_than_label']} (may cite outdated values), fresher {s['fresher_than_label']} "
        "(may refuse reference pages)\n" + "\n".join(rows)
    )


def use_classifier(name: str) -> str:
    """Set up the time class as the service does for GA_TIME_CLASSIFIER=`name` (app/main.py); returns
    what decides: "model (vectors)", "model (words)" or "keywords"."""
    from app.providers.rerank.minilm_shallow import optional_encoder
    from app.settings import Settings

    encoder = optional_encoder(Settings().sentence_model_path) if name == "model" else None
    vectors = use_time_model(name != "keywords", encoder)
    return "keywords" if name == "keywords" else f"model ({'vectors' if vectors else 'words'})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--errors", choices=("dev", "test"), help="list this split's misclassified questions")
    ap.add_argument("--json", help="write both splits' figures here")
    ap.add_argument("--classifier", choices=("model", "words", "keywords"), default="model")
    args = ap.parse_args()
    print("time class:", use_classifier(args.classifier), end="\n\n")
    out = {split: score(load(split)) for split in ("test", "dev")}
    for split, s in out.items():
        print(_table(split, s), end="\n\n")
    for split in ("test", "dev"):
        natural = score([r for r in load(split) if r["source"].startswith(NATURAL_MIX)])
        out[f"natural_{split}"] = natural
        print(_table(f"{split}, natural-mix part only", natural), end="\n\n")
    for split in ("test", "dev"):
        docs = score(load_docs(split))
        out[f"docs_{split}"] = docs
        print(f"docs-corpus questions, {split}: {docs['questions']}, kept stable {docs['accuracy']}")
    if args.errors:
        for qid, gold, got, q in out[args.errors]["errors"]:
            print(f"{qid}\t{gold} -> {got}\t{q}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
