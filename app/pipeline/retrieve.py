"""Search the plan's queries, then fetch and extract the best candidates: the retrieval half that
the answer pipeline and /v1/context share, with the service's caches, single-flights and memo."""

from __future__ import annotations

from app.domain.types import Plan, SearchOutcome
from app.pipeline import fetch, search
from app.pipeline.context import RunContext
from app.state import ServiceState


async def retrieve(
    the_plan: Plan, ctx: RunContext, state: ServiceState, *, snippets_may_answer: bool = True
) -> tuple[SearchOutcome, fetch.Retrieval]:
    """`snippets_may_answer`: a search snippet that answers a single-hop question stands in for its
    page (the answer path); /v1/context reads pages, its callers compose from them."""
    with ctx.stage("search"):
        found = await search.search_all(
            the_plan.queries,
            state.search,
            ctx,
            question=the_plan.question,
            freshness_days=the_plan.freshness_days,
            cache=state.cache,
            flights=state.flights,
        )
    with ctx.stage("fetch"):  # extraction is pipelined per page; its own time is timings_ms.extract
        retrieval = await fetch.fetch_documents(
            found.candidates,
            ctx,
            fetcher=state.fetcher,
            cache=state.cache,
            flights=state.flights,
            question=the_plan.question if snippets_may_answer else "",
            memo=state.extractions,
        )
    return found, retrieval
