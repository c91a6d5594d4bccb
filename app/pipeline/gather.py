"""/v1/context: the evidence stages without composition (plan → search → fetch → extract → dedupe →
rerank → pack), for agents that compose themselves."""

from __future__ import annotations

from app.pipeline import plan, select
from app.pipeline.context import RunContext
from app.pipeline.retrieve import retrieve
from app.state import ServiceState


async def gather_context(query: str, ctx: RunContext, state: ServiceState):
    """/v1/context: plan → search → fetch → extract → dedupe → rerank → pack, no composition."""
    settings, opts = ctx.settings, ctx.options
    with ctx.stage("plan"):
        the_plan = plan.heuristic_plan(
            query,
            max_queries=opts.max_queries,
            freshness_days=opts.freshness_days,
            today=ctx.today,
            primary_domains=opts.primary_domains,
            default_window=settings.default_freshness_days,
        )
    _, retrieval = await retrieve(the_plan, ctx, state, snippets_may_answer=False)
    with ctx.stage("select"):
        selection = await select.select_evidence_off_loop(
            retrieval.documents,
            query,
            the_plan.freshness_days,
            ctx,
            per_doc_cap=opts.max_evidence,
            count_headers=False,
            reranker=state.reranker,
        )
    return the_plan, selection
