"""Command line: build an index file, or search an index / folder / WARC.

    python -m app.corpus index corpus/sample --out var/corpus.sqlite
    python -m app.corpus search var/corpus.sqlite "what's new in Python 3.11"
    python -m app.corpus search corpus/sample "tomllib" --count 3 --json
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from app.corpus.index import CorpusIndex
from app.errors import GroundingError


def _is_index_file(path: Path) -> bool:
    if not path.is_file():
        return False
    with path.open("rb") as fh:
        return fh.read(16) == b"SQLite format 3\x00"


def _open(target: Path) -> CorpusIndex:
    return CorpusIndex.open(target) if _is_index_file(target) else CorpusIndex.build(target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.corpus", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p_index = sub.add_parser("index", help="index a folder or a WARC file into an SQLite file")
    p_index.add_argument("source", type=Path)
    p_index.add_argument("--out", type=Path, required=True, help="index file (reused if current)")
    p_search = sub.add_parser("search", help="search an index file, a folder or a WARC file")
    p_search.add_argument("target", type=Path)
    p_search.add_argument("query")
    p_search.add_argument("--count", type=int, default=5)
    p_search.add_argument("--include", action="append", default=[], metavar="DOMAIN")
    p_search.add_argument("--exclude", action="append", default=[], metavar="DOMAIN")
    p_search.add_argument("--json", action="store_true", help="print hits as JSON lines")
    args = parser.parse_args(argv)

    try:
        if args.command == "index":
            index = CorpusIndex.build(args.source, args.out)
            s = index.stats
            state = "reused (sources unchanged)" if s.reused else "built"
            print(f"{state}: {s.documents} documents in {s.build_ms:.0f} ms -> {s.path}")
            return 0
        index = _open(args.target)
        started = time.perf_counter()
        hits = index.search(args.query, count=args.count, include_domains=args.include,
                            exclude_domains=args.exclude)
        elapsed = (time.perf_counter() - started) * 1000
    except GroundingError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    for rank, hit in enumerate(hits):
        if args.json:
            print(json.dumps({"rank": rank, "url": hit.url, "title": hit.title, "score": hit.score,
                              "primary": hit.primary, "snippet": hit.snippet}, ensure_ascii=False))
        else:
            flag = " [primary]" if hit.primary else ""
            print(f"{rank + 1}. {hit.title}{flag}\n   {hit.url}\n   {hit.snippet}\n")
    if not args.json:
        print(f"{len(hits)} hits in {elapsed:.1f} ms ({index.stats.documents} documents)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
