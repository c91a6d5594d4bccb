"""/v1/context: the evidence stages without composition (plan → search → fetch → extract → dedupe →
rerank → pack), for agents that compose themselves."""

from __future__ import annotations

from app.pipeline import fetch, plan, search, select
from app.pipeline.context import RunContext
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
    with ctx.stage("search"):
        found = await search.search_all(
            the_plan.queries,
            state.search,
            ctx,
            question=query,
            freshness_days=the_plan.freshness_days,
            cache=state.cache,
            flights=state.flights,
        )
    with ctx.stage("fetch"):
        retrieval = await fetch.fetch_documents(
            found.candidates,
            ctx,
            fetcher=state.fetcher,
            cache=state.cache,
            flights=state.flights,
            memo=state.extractions,
        )
    with ctx.stage("select"):
        selection = select.select_evidence(
            retrieval.documents,
            query,
            the_plan.freshness_days,
            ctx,
            per_doc_cap=opts.max_evidence,
            count_headers=False,
            reranker=state.reranker,
        )
    return the_plan, selection
