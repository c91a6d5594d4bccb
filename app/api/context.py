"""/v1/context serving: evidence blocks within a token budget, no composition."""

from __future__ import annotations

from typing import Any

from app.api.protocol import ContextRequest, GroundingOptions
from app.pipeline.context import Options
from app.pipeline.gather import gather_context
from app.pipeline.orchestrator import new_context
from app.state import ServiceState


async def serve_context(req: ContextRequest, state: ServiceState, request_id: str) -> dict[str, Any]:
    g = GroundingOptions(
        include_domains=req.include_domains,
        exclude_domains=req.exclude_domains,
        freshness_days=req.freshness_days,
        max_fetches=req.depth,
        token_budget=req.token_budget,
        cache=req.cache,
    )
    ctx = new_context(request_id, Options.resolve(g, state.settings), state.settings, state.tokens, state.cpu)
    the_plan, selection = await gather_context(req.query, ctx, state)
    blocks = [
        {
            "text": e.text,
            "url": e.url,
            "title": e.title,
            "published_at": e.published_at.isoformat() if e.published_at else None,
            "score": e.score,
            "tokens": e.tokens,
            "also_reported_by": e.also_reported_by,
        }
        for e in selection.evidence
    ]
    return {
        "blocks": blocks,
        "total_tokens": sum(b["tokens"] for b in blocks),
        "request_id": request_id,
        "queries": the_plan.queries,
        "cost": ctx.cost.as_dict(),
    }
