r"""Main-content extraction benchmark on ../shared/bench-data/aeb (181 real pages, human gold text).

Metric (the benchmark's official one, implemented here): lowercase, ``\w+`` tokens, 4-gram shingles
counted as a multiset; per-page precision and recall, averaged over pages; F1 of the averages. An
empty prediction scores 0/0 unless the gold text is empty too. This reproduces the README's table
(trafilatura 0.960); the README's prose (whitespace split, shingle sets) gives lower numbers for
every extractor and is reported too, as "F1 ws-set".

Also reported: bag-of-words F1 ("BoW", the same per-page averaging over lowercase ``\w+`` tokens
counted as a multiset, i.e. 1-grams), whole set and per half.

Runs ours, ours + fallback (trafilatura on low-confidence pages, app/extract/fallback.py),
trafilatura and readability-lxml side by side on the same pages, one core pinned,
warm-up pass then three timed passes (per page the fastest: the machine is shared). Reports the whole set and the two halves (even / odd positions in
id order): ours was tuned looking at the even half only, so the odd half shows whether it
generalises. Ours reads a page as the service does: one over the extraction bound (1 MB) is first cut
by app/pipeline/extract.bounded_markup (3 of the 181 pages); the other extractors read whole pages.

    python bench/extraction.py [--json out.json] [--limit N] [--only ours,trafilatura]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (  # noqa: E402
    BENCH_DATA,
    decode_lenient,
    markdown_table,
    median,
    percentile,
    pin_one_core,
    read_gz,
    timed_run,
    write_json,
)

AEB = BENCH_DATA / "aeb"


_TOKEN_RE = re.compile(r"\w+")


def shingles(text: str, n: int = 4, literal: bool = False) -> Counter[str]:
    r"""4-gram shingles. Official (Zyte's evaluate.py): lowercase ``\w+`` tokens, shingles counted
    as a multiset: this reproduces the README's published figures (trafilatura 0.960). ``literal``:
    the README's prose (whitespace tokens, shingle *sets*), reported alongside."""
    lowered = text.lower()
    tokens = lowered.split() if literal else _TOKEN_RE.findall(lowered)
    if not tokens:
        return Counter()
    grams = (" ".join(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)))
    return Counter(set(grams)) if literal else Counter(grams)


def page_scores(pred: str | None, gold: str, literal: bool = False, n: int = 4) -> tuple[float, float]:
    """Precision and recall of one page over n-gram shingles (official: 4; ``n=1``: bag of words)."""
    p_sh, g_sh = shingles(pred or "", n=n, literal=literal), shingles(gold, n=n, literal=literal)
    if not p_sh and not g_sh:
        return 1.0, 1.0
    if not p_sh or not g_sh:
        return 0.0, 0.0
    common = sum((p_sh & g_sh).values())
    return common / sum(p_sh.values()), common / sum(g_sh.values())


def aggregate(scores: list[tuple[float, float]]) -> dict[str, float]:
    if not scores:
        return {"f1": 0.0, "precision": 0.0, "recall": 0.0}
    p = sum(s[0] for s in scores) / len(scores)
    r = sum(s[1] for s in scores) / len(scores)
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {"f1": f1, "precision": p, "recall": r}


def load_pages(limit: int | None) -> list[tuple[str, str, str, str]]:
    """[(id, url, html, gold)] in id order."""
    gold = json.loads((AEB / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for page_id in sorted(gold):
        html = decode_lenient(read_gz(AEB / "html" / f"{page_id}.html.gz"))
        pages.append((page_id, gold[page_id].get("url", ""), html, gold[page_id]["articleBody"]))
    return pages[:limit] if limit else pages


def as_served(html: str) -> str:
    """The page as the service extracts it: a page over the extraction bound is cut the service's way
    (app/pipeline/extract.bounded_markup), so the figure covers the bound too."""
    from app.pipeline.extract import EXTRACT_MAX_BYTES, bounded_markup

    if len(html) <= EXTRACT_MAX_BYTES // 4:  # surely under the bound in bytes (UTF-8: at most 4 per char)
        return html
    raw = html.encode("utf-8", "surrogatepass")
    return html if len(raw) <= EXTRACT_MAX_BYTES else bounded_markup(raw).decode("utf-8", "replace")


def ours() -> Callable[[tuple[str, str]], str]:
    from app.extract.html import extract_html

    return lambda item: extract_html(as_served(item[0]), url=item[1]).text


def ours_fallback() -> Callable[[tuple[str, str]], str]:
    from app.extract.fallback import extract_with_fallback

    return lambda item: extract_with_fallback(as_served(item[0]), url=item[1]).text


def fallback_asked(inputs: list[tuple[str, str]]) -> list[bool]:
    """Per page, whether "ours + fallback" asked trafilatura (an untimed pass of ours alone)."""
    from app.extract.fallback import low_confidence
    from app.extract.html import extract_html

    return [low_confidence(extract_html(html, url=url)) for html, url in inputs]


def trafilatura_extractor() -> Callable[[tuple[str, str]], str]:
    import trafilatura

    return lambda item: trafilatura.extract(item[0], include_comments=False) or ""


def readability_extractor() -> Callable[[tuple[str, str]], str]:
    from readability import Document
    from selectolax.lexbor import LexborHTMLParser

    def run(item: tuple[str, str]) -> str:
        summary = Document(item[0]).summary()
        return LexborHTMLParser(summary).text(separator=" ", strip=True)

    return run


EXTRACTORS: dict[str, Callable[[], Callable[[tuple[str, str]], str]]] = {
    "ours": ours,
    "ours + fallback": ours_fallback,
    "trafilatura": trafilatura_extractor,
    "readability-lxml": readability_extractor,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="write results as JSON to this path")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--only", default=",".join(EXTRACTORS), help="comma-separated extractor names")
    ap.add_argument("--worst", type=int, default=0, help="print the N worst pages for ours")
    ap.add_argument("--repeats", type=int, default=3, help="timed passes; per-page time is the fastest")
    args = ap.parse_args()

    pin_one_core()
    pages = load_pages(args.limit)
    inputs = [(html, url) for _, url, html, _ in pages]
    rows, results, notes = [], {}, []
    for name in args.only.split(","):
        fn = EXTRACTORS[name]()
        outputs, times = timed_run(fn, inputs, repeats=args.repeats)
        scores = [page_scores(out, gold) for out, (_, _, _, gold) in zip(outputs, pages)]
        bow = [page_scores(out, gold, n=1) for out, (*_, gold) in zip(outputs, pages)]
        literal = aggregate([page_scores(out, g, literal=True) for out, (*_, g) in zip(outputs, pages)])
        whole, even, odd = aggregate(scores), aggregate(scores[0::2]), aggregate(scores[1::2])
        bow_whole, bow_even, bow_odd = aggregate(bow), aggregate(bow[0::2]), aggregate(bow[1::2])
        results[name] = {
            **whole,
            "f1_even": even["f1"],
            "f1_odd": odd["f1"],
            "f1_bow": bow_whole["f1"],
            "f1_bow_even": bow_even["f1"],
            "f1_bow_odd": bow_odd["f1"],
            "f1_literal_readme": literal["f1"],
            "median_ms": median(times),
            "p95_ms": percentile(times, 0.95),
            "pages": len(pages),
            "per_page": {pid: {"p": s[0], "r": s[1], "ms": t} for (pid, *_), s, t in zip(pages, scores, times)},
        }
        if name == "ours + fallback":
            asked = fallback_asked(inputs)
            results[name]["fallback_rate"] = _rate(asked)
            results[name]["fallback_rate_even"] = _rate(asked[0::2])
            results[name]["fallback_rate_odd"] = _rate(asked[1::2])
            notes.append(
                f"ours + fallback asked trafilatura on {sum(asked)} of {len(asked)} pages "
                f"({_rate(asked):.0%}; even {_rate(asked[0::2]):.0%}, odd {_rate(asked[1::2]):.0%})"
            )
        rows.append(
            [
                name,
                whole["f1"],
                whole["precision"],
                whole["recall"],
                even["f1"],
                odd["f1"],
                bow_whole["f1"],
                bow_even["f1"],
                bow_odd["f1"],
                literal["f1"],
                f"{median(times):.2f}",
                f"{percentile(times, 0.95):.2f}",
            ]
        )
        if args.worst and name == "ours":
            # tuning looks at the even half only, so the odd half stays held out
            ranked = sorted(list(zip(pages, scores))[0::2], key=lambda ps: sum(ps[1]))
            for (pid, url, _, _), (p, r) in ranked[: args.worst]:
                print(f"  worst {pid[:12]} p={p:.2f} r={r:.2f} {url}", file=sys.stderr)
    if "trafilatura" in results:  # the machine is shared: times compare within one run
        base = results["trafilatura"]["median_ms"]
        ratios = ", ".join(f"{n} {r['median_ms'] / base:.2f}" for n, r in results.items() if base)
        notes.append(f"median time relative to trafilatura in this run: {ratios}")
    print(f"aeb: {len(pages)} pages, one core, fastest of {args.repeats} timed passes per page\n")
    headers = ["extractor", "F1", "precision", "recall", "F1 even", "F1 odd", "BoW F1", "BoW even", "BoW odd"]
    print(markdown_table(headers + ["F1 ws-set", "median ms", "p95 ms"], rows))
    for note in notes:
        print(f"\n{note}")
    write_json(args.json, results)


def _rate(flags: list[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


if __name__ == "__main__":
    main()
