"""What happened to every search result, in one closed vocabulary, for the stored trace.

The pipeline records each decision where it is made (search filter counts, fetch outcomes, selection
decisions); this joins them per result, walking the results in the order the search stage merged
them, so that the inspector can show one row per result: its fate, the reason and its score."""

from __future__ import annotations

from typing import Any

from app.domain.types import FetchedPage, FetchReason
from app.pipeline.context import Options
from app.pipeline.result import PipelineResult
from app.urls import domain_matches, host_of, normalize_url

# A page that was read (or stood in for by its search snippet) goes on to selection.
READ = {
    FetchReason.ok.value,
    FetchReason.cached.value,
    FetchReason.not_modified.value,
    FetchReason.from_provider.value,
    FetchReason.skipped.value,
}

# Selection reasons (app/pipeline/select.py) → fate.
_SELECTION_FATES = (
    ("stale:", "stale"),
    ("near_duplicate_of:", "duplicate"),
    ("domain_quota:", "same_domain"),
    ("exclude_domains", "excluded_domain"),
    ("include_domains", "excluded_domain"),
    ("blocked_domains", "excluded_domain"),
)

# The closed set of fates, in the order a result meets them (documented in docs/INSPECTOR.md).
FATES = (
    "invalid_url",
    "excluded_domain",
    "duplicate",
    "over_budget",
    *(r.value for r in FetchReason if r.value not in READ),
    "stale",
    "same_domain",
    "not_used",
    "evidence",
    "cited",
)


def selection_fate(reason: str) -> str:
    for prefix, fate in _SELECTION_FATES:
        if reason.startswith(prefix):
            return fate
    return "not_used"


def result_fates(result: PipelineResult) -> list[dict[str, Any]]:
    """One row per search hit, per query: `fate` (see FATES), `reason` (the pipeline's own words),
    `stage` that decided, `candidate` (0-based place in the project's ranking, or None) and `score`
    (the best evidence score of the page, or None)."""
    search = result.search
    if search is None:
        return []
    opts = result.ctx.options
    candidates = {normalize_url(h.url): i for i, h in enumerate(search.candidates)}
    fetches = {p.requested_url: p for p in result.pages}
    decisions: dict[str, tuple[str, str]] = {}
    for d in result.selection.decisions if result.selection else []:
        if d.decision in ("kept", "dropped"):
            decisions.setdefault(d.url, (d.decision, d.reason))
    scores: dict[str, float] = {}
    for ev in result.evidence:
        scores[ev.url] = max(scores.get(ev.url, ev.score), ev.score)
    cited = {ev.url for ev in result.cited}
    first_seen: dict[str, str] = {}
    rows: list[dict[str, Any]] = []
    for res in search.results:
        for hit in res.hits:
            row: dict[str, Any] = {
                "query": res.query,
                "provider": res.provider,
                "rank": hit.rank,
                "url": hit.url,
                "title": hit.title,
                "candidate": None,
                "score": None,
            }
            row.update(_fate(hit.url, opts, candidates, fetches, decisions, scores, cited, first_seen, result))
            rows.append(row)
    return rows


def _fate(
    url: str,
    opts: Options,
    candidates: dict[str, int],
    fetches: dict[str, FetchedPage],
    decisions: dict[str, tuple[str, str]],
    scores: dict[str, float],
    cited: set[str],
    first_seen: dict[str, str],
    result: PipelineResult,
) -> dict[str, Any]:
    # The search stage's filters, in its order (app/pipeline/search.py _merge).
    host = host_of(url)
    if not host:
        return {"fate": "invalid_url", "reason": "invalid_url", "stage": "search"}
    if opts.include_domains and not domain_matches(host, opts.include_domains):
        return {"fate": "excluded_domain", "reason": "include_domains", "stage": "search"}
    if opts.exclude_domains and domain_matches(host, opts.exclude_domains):
        return {"fate": "excluded_domain", "reason": "exclude_domains", "stage": "search"}
    key = normalize_url(url)
    if key in first_seen:
        return {"fate": "duplicate", "reason": f"duplicate_url_of:{first_seen[key]}", "stage": "search"}
    first_seen[key] = url
    place = candidates.get(key)
    if place is None:
        limit = result.ctx.settings.search_candidates
        return {"fate": "over_budget", "reason": f"search_candidates:{limit}", "stage": "search"}
    out: dict[str, Any] = {"candidate": place}
    fetch_url = next((u for u in (url, *fetches) if normalize_url(u) == key and u in fetches), None)
    if fetch_url is None:
        if place >= opts.max_fetches:
            return {**out, "fate": "over_budget", "reason": f"max_fetches:{opts.max_fetches}", "stage": "fetch"}
        stopped = ",".join(result.ctx.budget_hits) or "not_fetched"
        return {**out, "fate": "over_budget", "reason": stopped, "stage": "fetch"}
    page = fetches[fetch_url]
    outcome = page.reason.value
    if outcome not in READ:
        detail = f"{outcome}: {page.detail}" if page.detail else outcome
        if page.status:
            detail += f" (HTTP {page.status})"
        return {**out, "fate": outcome, "reason": detail, "stage": "fetch"}
    final = page.url
    decision = decisions.get(final) or decisions.get(fetch_url)
    score = scores.get(final, scores.get(fetch_url))
    out["score"] = score
    if decision is None:
        return {**out, "fate": "not_used", "reason": "no_passage_selected", "stage": "select"}
    verdict, reason = decision
    if verdict == "kept":
        fate = "cited" if final in cited or fetch_url in cited else "evidence"
        return {**out, "fate": fate, "reason": f"{reason} via {outcome}", "stage": "select"}
    return {**out, "fate": selection_fate(reason), "reason": reason, "stage": "select"}
