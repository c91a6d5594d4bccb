"""Labelled evaluation cases: the JSONL format, loading, and relative dates.

One case per line (see eval/README.md). Page dates are written relative to the case's `as_of`
("-3d", "-6w", "-2m", "-1y") or as absolute dates that shift with it, because the service judges
freshness against the real today: the runner turns them into absolute dates relative to today, so a
case means the same thing whenever it runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

STATUSES = ("grounded", "abstained", "ungrounded")
PAGE_KINDS = ("article", "hostile", "plain", "text", "robots", "real")
_RELATIVE = re.compile(r"^([+-]?\d+)([dwmy])$")
_PLACEHOLDER = re.compile(r"\{date:([+-]?\d+[dwmy])\}")
_UNIT_DAYS = {"d": 1, "w": 7, "m": 30, "y": 365}


class CaseError(ValueError):
    """A case line that does not follow the format (names the file, line and problem)."""


@dataclass
class PageSpec:
    site: str
    path: str
    title: str
    paragraphs: list[str]
    published: str | None = None
    modified: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    kind: str = "article"
    instruction: str | None = None  # hostile pages: the planted instruction (default: say BANANA)
    aeb: str | None = None  # a real page of ../shared/bench-data/aeb served as it is (site and path from its URL)


@dataclass
class Case:
    id: str
    tags: list[str]
    messages: list[dict[str, str]]
    expected_status: str
    as_of: date | None = None
    grounding: dict[str, Any] = field(default_factory=dict)
    gold_answers: list[str] = field(default_factory=list)  # any one must appear when grounded
    gold_all: list[str] = field(default_factory=list)  # every one must appear when grounded
    gold_urls: list[str] = field(default_factory=list)  # "site/path" expected among sources
    expected_reason: str | None = None
    forbidden: list[str] = field(default_factory=list)  # never in the answer, whatever the status
    pages: list[PageSpec] = field(default_factory=list)
    search: dict[str, Any] = field(default_factory=dict)  # {"default": [...], "queries": {q: [...]}}
    model: dict[str, Any] = field(default_factory=dict)  # {"composer": "..."} for the scripted mode
    note: str = ""
    source: str = ""  # file:line, for messages
    # Labelled sets (eval/labelled): the slice a case belongs to, its split, the page that holds
    # the answer, and "docs" for cases run on the embedded corpus instead of a simulated web.
    slice: str = ""
    split: str = ""
    answer_page: str | None = None
    gold_pages: list[str] = field(default_factory=list)
    corpus: str | None = None

    @property
    def question(self) -> str:
        return next(m["content"] for m in reversed(self.messages) if m["role"] == "user")


def resolve_date(value: str | None, as_of: date | None, today: date) -> str | None:
    """'-3d' → today - 3 days; an absolute ISO date → shifted by (today - as_of); None stays None."""
    if value is None:
        return None
    m = _RELATIVE.match(value.strip())
    if m:
        return (today + timedelta(days=int(m.group(1)) * _UNIT_DAYS[m.group(2)])).isoformat()
    absolute = date.fromisoformat(value.strip()[:10])
    if as_of is not None:
        absolute += today - as_of
    return absolute.isoformat()


def fill_dates(text: str, today: date) -> str:
    """'{date:-3d}' in page text → 'March 3, 2026' relative to today (for "as of" sentences)."""

    def repl(m: re.Match) -> str:
        d = date.fromisoformat(resolve_date(m.group(1), None, today) or "")
        return f"{d:%B} {d.day}, {d.year}"

    return _PLACEHOLDER.sub(repl, text)


def _page(raw: dict, where: str) -> PageSpec:
    if raw.get("aeb"):
        from eval.real_pages import aeb_page

        return aeb_page(raw["aeb"], where)
    missing = [k for k in ("site", "path", "title", "paragraphs") if k not in raw]
    if missing:
        raise CaseError(f"{where}: page without {missing}")
    kind = raw.get("kind", "article")
    if kind not in PAGE_KINDS:
        raise CaseError(f"{where}: page kind {kind!r} not in {PAGE_KINDS}")
    return PageSpec(
        site=raw["site"],
        path=raw["path"],
        title=raw["title"],
        paragraphs=list(raw["paragraphs"]),
        published=raw.get("published"),
        modified=raw.get("modified"),
        headers=dict(raw.get("headers") or {}),
        kind=kind,
        instruction=raw.get("instruction"),
    )


def parse_case(raw: dict, where: str = "") -> Case:
    if "id" not in raw or "expected_status" not in raw:
        raise CaseError(f"{where}: a case needs 'id' and 'expected_status'")
    if raw["expected_status"] not in STATUSES:
        raise CaseError(f"{where}: expected_status {raw['expected_status']!r} not in {STATUSES}")
    if raw.get("messages"):
        messages = [{"role": m["role"], "content": m["content"]} for m in raw["messages"]]
    elif raw.get("question"):
        messages = [{"role": "user", "content": raw["question"]}]
    else:
        raise CaseError(f"{where}: a case needs 'question' or 'messages'")
    web = raw.get("web") or {}
    pages = [_page(p, where) for p in web.get("pages", [])]
    known = {f"{p.site}{p.path}" for p in pages}
    search = _resolve_aeb_refs(web.get("search") or {}, pages)
    for ref in [*search.get("default", []), *(r for rs in (search.get("queries") or {}).values() for r in rs)]:
        key = ref if isinstance(ref, str) else ref.get("page", "")
        if key and not key.startswith("http") and key not in known:
            raise CaseError(f"{where}: search result {key!r} is not one of the case's pages")
    return Case(
        id=raw["id"],
        tags=list(raw.get("tags", [])),
        messages=messages,
        expected_status=raw["expected_status"],
        as_of=date.fromisoformat(raw["as_of"]) if raw.get("as_of") else None,
        grounding=dict(raw.get("grounding") or {}),
        gold_answers=list(raw.get("gold_answers", [])),
        gold_all=list(raw.get("gold_all", [])),
        gold_urls=list(raw.get("gold_urls", [])),
        expected_reason=raw.get("expected_reason"),
        forbidden=list(raw.get("forbidden", [])),
        pages=pages,
        search=search,
        model=dict(raw.get("model") or {}),
        note=raw.get("note", ""),
        source=where,
        slice=raw.get("slice", ""),
        split=raw.get("split", ""),
        answer_page=raw.get("answer_page"),
        gold_pages=list(raw.get("gold_pages", [])),
        corpus=raw.get("corpus"),
    )


def _resolve_aeb_refs(search: dict, pages: list[PageSpec]) -> dict:
    """'aeb:<id>' search refs → the 'site/path' key of that real page."""
    keys = {p.aeb: f"{p.site}{p.path}" for p in pages if p.aeb}

    def one(ref):
        if isinstance(ref, str) and ref.startswith("aeb:"):
            return keys.get(ref[4:], ref)
        return ref

    out = dict(search)
    if "default" in out:
        out["default"] = [one(r) for r in out["default"]]
    if out.get("queries"):
        out["queries"] = {q: [one(r) for r in rs] for q, rs in out["queries"].items()}
    return out


def load_cases(paths: Iterable[str | Path], tags: Iterable[str] = (), ids: Iterable[str] = ()) -> list[Case]:
    """Cases from JSONL files or directories of them; `tags` keeps cases carrying any of them."""
    files: list[Path] = []
    for p in map(Path, paths):
        files.extend(sorted(p.glob("*.jsonl")) if p.is_dir() else [p])
    cases: list[Case] = []
    seen: set[str] = set()
    for f in files:
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("//"):
                continue
            where = f"{f}:{n}"
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CaseError(f"{where}: invalid JSON ({exc})") from exc
            case = parse_case(raw, where)
            if case.id in seen:
                raise CaseError(f"{where}: duplicate case id {case.id!r}")
            seen.add(case.id)
            cases.append(case)
    want_tags, want_ids = set(tags), set(ids)
    return [c for c in cases if (not want_tags or want_tags & set(c.tags)) and (not want_ids or c.id in want_ids)]
