"""Render: a pipeline result → the wire (the chat.completion body, the X-Grounding-* headers, the
stored trace). What these dicts hold is what app/api/protocol/'s response models describe."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.domain.types import Claim, Evidence
from app.inspect.fates import result_fates
from app.pipeline.result import PipelineResult
from app.providers import fallbacks

# Where a sentence ends in prose the service did not split itself (an abstention's message, an
# ungrounded answer): terminal punctuation, closing quotes/brackets, then space or the end.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s|$)")
# OpenAI's accounting for chat prompts: a few tokens of framing per message, and for the reply.
TOKENS_PER_MESSAGE = 3
TOKENS_FOR_REPLY = 3


def conversation_tokens(turns: Sequence[tuple[str, str]], count: Callable[[str], int]) -> int:
    """The prompt as the client sent it, counted the way OpenAI counts chat messages."""
    return sum(count(text) + TOKENS_PER_MESSAGE for _, text in turns) + TOKENS_FOR_REPLY


@dataclass(frozen=True, slots=True)
class Kept:
    """What of the answer goes on the wire after `max_tokens`: whole sentences within the limit."""

    content: str
    claims: list[Claim]
    cited: list[Evidence]
    finish_reason: str


def within_limit(result: PipelineResult, limit: int | None, count: Callable[[str], int]) -> Kept:
    """Cut the answer at the last sentence boundary within `limit` tokens (finish_reason "length");
    only the kept sentences keep their claims, and only the sources they cite stay numbered (markers
    are numbered by first use, so a prefix of sentences cites exactly [1..m])."""
    content, finish = result.content, result.finish_reason
    claims = result.claims if result.abstention is None else []
    kept = Kept(content, claims, result.cited, finish)
    if not limit or not content or (finish != "length" and count(content) <= limit):
        return kept
    ends = [c.end for c in claims] if claims else [m.end() for m in _SENTENCE_END.finditer(content)]
    cut = 0
    for end in ends:
        if count(content[:end]) > limit:
            break
        cut = end
    if cut == len(content) and finish != "length":
        return kept
    claims = [c for c in claims if c.end <= cut]
    numbers = max((n for c in claims for n in c.markers), default=0)
    return Kept(content[:cut].rstrip(), claims, result.cited[:numbers], "length")


def _source_list(result: PipelineResult, cited: list[Evidence]) -> list[dict[str, Any]]:
    cited_no = {e.url: i for i, e in enumerate(cited, 1)}
    seen: dict[str, dict[str, Any]] = {}
    for ev in result.evidence:
        if ev.url in seen:
            continue
        seen[ev.url] = {
            "id": cited_no.get(ev.url),
            "span_id": ev.span_id,
            "url": ev.url,
            "title": ev.title,
            "domain": ev.domain,
            "published_at": ev.published_at.isoformat() if ev.published_at else None,
            "date_source": ev.date_source,
            "fetched_at": ev.fetched_at.isoformat() if ev.fetched_at else None,
            "score": ev.score,
            "primary": ev.primary,
            "also_reported_by": ev.also_reported_by,
            "via": ev.via,
        }
    return list(seen.values())


def _claim(c: Claim) -> dict[str, Any]:
    return {
        "text": c.text,
        "source_ids": c.markers,
        "span_ids": c.span_ids,
        "quote": c.quote,
        "supported": c.supported,
        "support_score": c.support,
        "factual": c.factual,
        "judged": c.judged,
        "judged_by": c.judged_by,
    }


def build_body(
    result: PipelineResult, model: str, request_id: str, turns: Sequence[tuple[str, str]] = ()
) -> dict[str, Any]:
    """`turns`: the conversation as the client sent it, for `usage.prompt_tokens`."""
    ctx = result.ctx
    count: Callable[[str], int] = ctx.tokens.count if ctx.tokens else (lambda text: len(text.split()))
    kept = within_limit(result, ctx.options.max_tokens, count)
    content = kept.content
    annotations = []
    # An abstention's content is the non-answer: its draft's claims stay in grounding, unannotated.
    for claim in kept.claims:
        for n in claim.markers:
            ev: Evidence = kept.cited[n - 1]
            annotations.append(
                {
                    "type": "url_citation",
                    "url_citation": {
                        "url": ev.url,
                        "title": ev.title,
                        "start_index": claim.start,
                        "end_index": claim.end,
                    },
                }
            )
    ab = result.abstention
    # usage is the exchange as the client sees it: its conversation in, the answer out (so
    # completion_tokens <= max_tokens); what the models read and wrote is grounding.cost.
    prompt = conversation_tokens(turns, count) if turns else 0
    completion = count(content)
    return {
        "id": "chatcmpl-" + request_id.removeprefix("req_"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "annotations": annotations, "refusal": None},
                "finish_reason": kept.finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        "citations": [e.url for e in kept.cited],
        "grounding": {
            "status": result.status.value,
            "composer": result.composer,
            "route": {"needs_search": result.route.needs_search, "reason": result.route.reason, "by": result.route.by},
            "queries": result.plan.queries if result.plan else [],
            "freshness_days": result.plan.freshness_days if result.plan else None,
            "sources": _source_list(result, kept.cited),
            "claims": [_claim(c) for c in (kept.claims if result.abstention is None else result.claims)],
            "dropped_claims": [_claim(c) for c in result.dropped_claims],
            "conflicts": [
                {"attribute": c.attribute, "values": c.values, "policy": ctx.options.on_conflict}
                for c in result.conflicts
            ],
            "abstention": None
            if ab is None
            else {
                "reason": ab.reason.value,
                "message": ab.message,
                "failed_checks": ab.failed_checks,
                "queries_run": ab.queries_run,
                "links_found": ab.links_found,
            },
            "groundedness": result.groundedness,
            "filtered": result.search.filtered if result.search else {},
            "selection": [
                {"url": d.url, "decision": d.decision, "reason": d.reason}
                for d in (result.selection.decisions if result.selection else [])
                if d.decision != "kept"
            ],
            "search_errors": result.search.errors if result.search else [],
            "fallbacks": fallbacks.take(ctx.request_id),
            "fetches": [
                {"url": p.requested_url, "final_url": p.url, "outcome": p.reason.value, "status": p.status}
                for p in result.pages
            ],
            "cost": ctx.cost.as_dict(),
            "cache": dict(ctx.cache),
            "timings_ms": {**ctx.timings_ms, "total": round((time.monotonic() - ctx.started) * 1000, 3)},
            "ignored_params": ctx.ignored_params,
            "request_id": request_id,
        },
    }


def headers_for(body: dict[str, Any], request_id: str) -> dict[str, str]:
    g = body["grounding"]
    cost = g["cost"]
    return {
        "X-Request-Id": request_id,
        "X-Grounding-Status": g["status"],
        "X-Grounding-Cost-USD": f"{cost['usd']:.6f}",
        "X-Grounding-Prompt-Tokens": str(cost["prompt_tokens"]),
        "X-Grounding-Completion-Tokens": str(cost["completion_tokens"]),
        "X-Grounding-Searches": str(cost["search_calls"]),
        "X-Grounding-Fetches": str(cost["fetches"]),
        "X-Grounding-Cache": ",".join(f"{k}={v}" for k, v in sorted(g["cache"].items())) or "none",
    }


def build_trace(result: PipelineResult, body: dict[str, Any]) -> dict[str, Any]:
    """Everything needed to explain the answer: plan, raw results, fetches, decisions, verdicts."""
    search = result.search
    return {
        "request_id": body["grounding"]["request_id"],
        "route": body["grounding"]["route"],
        "plan": {
            "queries": result.plan.queries,
            "freshness_days": result.plan.freshness_days,
            "by": result.plan.by,
            "question": result.plan.question,
        }
        if result.plan
        else None,
        "search": [
            {
                "provider": r.provider,
                "query": r.query,
                "unresponsive_engines": r.unresponsive_engines,
                "elapsed_ms": round(r.elapsed_ms, 2),
                "hits": [{"url": h.url, "title": h.title, "rank": h.rank} for h in r.hits],
            }
            for r in (search.results if search else [])
        ],
        "search_errors": search.errors if search else [],
        "candidates": [h.url for h in (search.candidates if search else [])],
        "fetches": body["grounding"]["fetches"],
        "selection": [
            {"url": d.url, "decision": d.decision, "reason": d.reason}
            for d in (result.selection.decisions if result.selection else [])
        ],
        "evidence": [
            {
                "span_id": e.span_id,
                "url": e.url,
                "title": e.title,
                "section": e.section,
                "kind": e.kind,
                "score": e.score,
                "lexical_score": e.lexical_score,
                "tokens": e.tokens,
                "text": e.text,
            }
            for e in result.evidence
        ],
        "evidence_tokens": result.selection.prompt_tokens if result.selection else 0,
        "conflicts": body["grounding"]["conflicts"],
        "claims": body["grounding"]["claims"],
        "dropped_claims": body["grounding"]["dropped_claims"],
        "status": body["grounding"]["status"],
        "abstention": body["grounding"]["abstention"],
        "answerability": (
            {"score": result.answerability.score, "reasons": result.answerability.reasons}
            if result.answerability
            else None
        ),
        "timings_ms": body["grounding"]["timings_ms"],
        "cost": body["grounding"]["cost"],
        # For the answer inspector (GET /inspect): each search result's fate, and what the answer showed.
        "results": result_fates(result),
        "composer": result.composer,
        "groundedness": result.groundedness,
        "content": body["choices"][0]["message"]["content"],
        "citations": body["citations"],
        "sources": body["grounding"]["sources"],
        "cache": body["grounding"]["cache"],
        "options": {
            "verification": result.ctx.options.verification,
            "include_domains": result.ctx.options.include_domains,
            "exclude_domains": result.ctx.options.exclude_domains,
            "max_fetches": result.ctx.options.max_fetches,
            "min_sources": result.ctx.options.min_sources,
        },
    }
