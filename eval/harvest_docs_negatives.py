"""Benign technical-documentation lines for the injection set, from the READMEs of installed packages.

The labelled benign lines are mostly hard negatives about assistants, prompts and AI, written to look
like attacks; terse reference prose and code ("Return the current Task.", "Thread-safe.", doctest
lines) is nearly absent, and the refit of 2026-12-05 evening removed 91 such sentences of the docs
corpus (docs/SECURITY.md). The corpus itself cannot supply them (the question set answers from it),
so they come from another source of the same genre: the long descriptions (README) in the
``*.dist-info/METADATA`` files of the packages installed beside the service. Sentences and code lines
of 3-60 words, deduplicated, sampled deterministically; none is read for content beyond a filter
that drops lines naming a model, an assistant or a prompt (those are what the written batches cover,
and a README about an LLM library could hold a real example attack).

    python -m eval.harvest_docs_negatives --out /tmp/docneg.jsonl --n 600 \
        --exclude <(git show 8b76b2e:eval/labelled/injection.jsonl)
    cat /tmp/docneg.jsonl >> eval/labelled/injection.jsonl      # as dev lines (2026-12-05 evening)

The sample depends on the packages installed (the test, bench and semantic extras of 2026-12-05:
600 lines from 126 of 152 READMEs, 359 prose sentences and 241 code lines).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sysconfig
from email.parser import Parser
from pathlib import Path

from app.language.identify import language_of
from app.language.text import split_sentences

SOURCE = "pypi-readmes-2026-12-05"
_AI_WORDS = re.compile(
    r"\b(ai|llm|llms|gpt|chatgpt|openai|anthropic|claude|gemini|assistant|assistants|prompt|prompts|"
    r"chatbot|model|models|agent|agents|instruction|instructions|ignore|jailbreak|injection)\b",
    re.I,
)
_URLISH = re.compile(r"https?://|www\.|\]\(|\[!\[|<img|<a |badge", re.I)


def readmes(site_packages: Path) -> list[tuple[str, str]]:
    out = []
    for meta in sorted(site_packages.glob("*.dist-info/METADATA")):
        msg = Parser().parsestr(meta.read_text(encoding="utf-8", errors="replace"))
        body = msg.get_payload() or msg.get("Description") or ""
        if isinstance(body, str) and len(body) > 200:
            out.append((meta.parent.name.split("-")[0], body))
    return out


def lines_of(text: str) -> list[tuple[str, str]]:
    """(kind, line): prose sentences and code lines of a README (markdown or reStructuredText)."""
    out: list[tuple[str, str]] = []
    in_code = False
    para: list[str] = []

    def flush() -> None:
        if para:
            out.extend(("docs_prose", s) for s in split_sentences(" ".join(para)))
            para.clear()

    for raw in text.splitlines():
        line = raw.rstrip()
        if line.strip().startswith("```"):
            flush()
            in_code = not in_code
            continue
        if in_code or line.startswith(("    ", "\t", ">>> ", "$ ")):
            flush()
            if line.strip():
                out.append(("docs_code", line.strip()))
            continue
        if (
            not line.strip()
            or re.fullmatch(r"[=\-~^*#`]{3,}", line.strip())
            or line.lstrip().startswith(("#", "..", ":"))
        ):
            flush()
            continue
        para.append(line.strip(" *-"))
    flush()
    return out


def keep(line: str) -> bool:
    words = line.split()
    return 3 <= len(words) <= 60 and not _AI_WORDS.search(line) and not _URLISH.search(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site-packages", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument(
        "--exclude", type=Path, default=Path("eval/labelled/injection.jsonl"), help="texts already labelled"
    )
    args = ap.parse_args()
    taken = {json.loads(r)["text"] for r in args.exclude.read_text(encoding="utf-8").splitlines() if r.strip()}
    seen: dict[str, tuple[str, str]] = {}
    packages = readmes(args.site_packages)
    for package, body in packages:
        for kind, line in lines_of(body):
            if keep(line) and line not in taken and (kind == "docs_code" or language_of(line) == "en"):
                seen.setdefault(line, (package, kind))
    # Deterministic sample, spread over packages: at most 8 lines a package, by hash order.
    ranked = sorted(seen, key=lambda t: hashlib.sha1(t.encode()).hexdigest())
    per: dict[str, int] = {}
    rows = []
    for text in ranked:
        package, kind = seen[text]
        if per.get(package, 0) >= 8:
            continue
        per[package] = per.get(package, 0) + 1
        digest = hashlib.sha1(text.encode()).hexdigest()[:12]
        rows.append(
            {
                "id": f"docneg-{digest}",
                "text": text,
                "label": "benign",
                "lang": "en",
                "kind": kind,
                "source": SOURCE,
                "split": "dev",
            }
        )
        if len(rows) >= args.n:
            break
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    kinds = {k: sum(r["kind"] == k for r in rows) for k in ("docs_prose", "docs_code")}
    print(
        f"{len(rows)} lines from {len(per)} of {len(packages)} READMEs ({len(seen)} candidates): {kinds} -> {args.out}"
    )


if __name__ == "__main__":
    main()
