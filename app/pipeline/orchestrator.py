"""The orchestrator: route → plan → search → fetch → extract → select → gate → compose → cite →
verify → answer or abstain. `run_pipeline` reads like the product; each stage lives in its own module,
and the helpers below only wire a stage to the run's context and timings."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from app import metrics
from app.cpu_queue import CpuQueue
from app.domain.types import (
    AbstentionReason,
    Claim,
    Draft,
    Evidence,
    GroundingStatus,
    Plan,
    Route,
    SelectionDecision,
)
from app.errors import UpstreamError
from app.language.question import analyse
from app.pipeline import answerability, cite, gate, plan, route, select, settle, verify
from app.pipeline import conflicts as conflict_stage
from app.pipeline.composers import ExtractiveComposer, ModelComposer
from app.pipeline.context import TOKENS_PER_PRICE_UNIT, RunContext
from app.pipeline.result import PipelineResult
from app.pipeline.result import abstain as _abstain
from app.pipeline.retrieve import retrieve
from app.state import ServiceState

log = logging.getLogger(__name__)

INSTRUCTION_PREFIX_CHARS = 200  # a colon this early splits "Translate this: <text>" into instruction and payload
PLANNER_TIMEOUT_S = 8.0  # the planner's ceiling inside the deadline: a slow planner falls back to the heuristic
MIN_COMPOSE_TIME_S = 1.0  # with less time left no model is called: the extractive composer answers
# Cost estimates for max_cost_usd before a model call (tokens); the ledger books the real usage after.
COMPOSE_PROMPT_OVERHEAD_TOKENS = 400  # system prompt, question and span markup around the evidence
ANSWER_TOKENS_ESTIMATE = 400  # the answer's length when the request sets no max_tokens
PLANNER_PROMPT_TOKENS_ESTIMATE = 400  # the planner prompt with the conversation
PLANNER_COMPLETION_TOKENS_ESTIMATE = 150  # the plan's JSON
UNGROUNDED_TEMPERATURE = 0.7  # chat without evidence, when the request sets none (grounded composing uses 0.0)


async def run_pipeline(turns: list[tuple[str, str]], ctx: RunContext, state: ServiceState) -> PipelineResult:
    """route → plan → search → fetch/extract → select → gate → compose → cite → verify."""
    result, done = await prepare(turns, ctx, state)
    if done:
        return result
    return await compose_cite_verify(result, turns, ctx, state)


async def prepare(turns: list[tuple[str, str]], ctx: RunContext, state: ServiceState) -> tuple[PipelineResult, bool]:
    """Every stage before composing: (the result so far, True when it is already the answer — an
    ungrounded one or an abstention)."""
    decision = _route(turns, ctx, state)
    if not decision.needs_search:
        return await _ungrounded(turns, decision, ctx, state), True
    the_plan = await _plan(turns, ctx, state)
    if not the_plan.needs_search and decision.reason == "default_grounded":
        # The heuristics found no reason either way; the model's classification settles it.
        return await _ungrounded(turns, Route(False, "llm_classified_stable", by="llm"), ctx, state), True
    result = PipelineResult(
        ctx=ctx, status=GroundingStatus.grounded, content="", composer="", route=decision, plan=the_plan
    )
    await _search_and_read(result, ctx, state)
    await _select_evidence(result, ctx, state)
    abstention = _gate(result, ctx) or await _answerability(result, ctx, state)
    if abstention is not None:
        return abstention, True
    return result, False


def _route(turns: list[tuple[str, str]], ctx: RunContext, state: ServiceState) -> Route:
    question = next(t for r, t in reversed(turns) if r == "user")
    with ctx.stage("route"):
        # Text the user supplied to work on: what follows the instruction ("Translate this: …") plus earlier turns.
        _, _, payload = (
            question.partition(":") if ":" in question[:INSTRUCTION_PREFIX_CHARS] else question.partition("\n")
        )
        given = len(payload.strip()) + sum(len(t) for r, t in turns[:-1] if r in ("user", "system", "developer"))
        return route.route_request(
            question, ctx.options.mode, given_text_chars=given, llm_available=state.llm is not None
        )


async def _plan(turns: list[tuple[str, str]], ctx: RunContext, state: ServiceState) -> Plan:
    settings, opts = ctx.settings, ctx.options
    with ctx.stage("plan"):
        standalone = plan.standalone_question(turns)
        kwargs: dict[str, Any] = dict(
            max_queries=opts.max_queries,
            freshness_days=opts.freshness_days,
            today=ctx.today,
            primary_domains=opts.primary_domains,
            default_window=settings.default_freshness_days,
        )
        if state.llm is not None and not _planner_over_budget(ctx):
            return await plan.llm_plan(
                state.llm,
                settings.planner_model,
                standalone,
                timeout=min(PLANNER_TIMEOUT_S, ctx.remaining()),
                ctx=ctx,
                conversation=turns,
                **kwargs,
            )
        return plan.heuristic_plan(standalone, **kwargs)


async def _search_and_read(result: PipelineResult, ctx: RunContext, state: ServiceState) -> None:
    the_plan = result.plan
    assert the_plan is not None, "run_pipeline sets the plan before searching"
    result.search, retrieval = await retrieve(the_plan, ctx, state)
    result.pages, result.documents = retrieval.pages, retrieval.documents
    result.evidence_versions = {d.url: d.content_hash for d in retrieval.documents}


async def _select_evidence(result: PipelineResult, ctx: RunContext, state: ServiceState) -> None:
    the_plan = result.plan
    assert the_plan is not None, "run_pipeline sets the plan before selecting"
    with ctx.stage("select"):
        result.selection = await select.select_evidence_off_loop(
            result.documents, the_plan.question, the_plan.freshness_days, ctx, reranker=state.reranker
        )
        result.evidence = result.selection.evidence
        result.conflicts = conflict_stage.detect_conflicts(the_plan.question, result.evidence)


def _gate(result: PipelineResult, ctx: RunContext) -> PipelineResult | None:
    """The abstention when the evidence does not pass the gate, else None."""
    the_plan, found, selection = result.plan, result.search, result.selection
    assert the_plan is not None and found is not None and selection is not None, "set by the stages before the gate"
    with ctx.stage("gate"):
        verdict = gate.check_gate(
            result.evidence,
            result.conflicts,
            the_plan.question,
            the_plan.freshness_days,
            route.is_time_sensitive(the_plan.question),
            ctx,
            candidates=len(found.candidates),
            usable_pages=len(result.documents),
            dropped_stale=sum(d.reason.startswith("stale") for d in selection.decisions),
        )
    if verdict.passed:
        return None
    assert verdict.reason is not None, "a failed gate verdict always names its reason"
    if ctx.budget_hits and verdict.reason in (AbstentionReason.no_search_results, AbstentionReason.no_usable_pages):
        # The budget, not the web, is why there is nothing: say so.
        return _abstain(result, AbstentionReason.budget_exhausted, sorted(set(ctx.budget_hits)) + verdict.failed_checks)
    if ctx.expired() and not result.evidence:
        return _abstain(result, AbstentionReason.budget_exhausted, ["deadline"] + verdict.failed_checks)
    return _abstain(result, verdict.reason, verdict.failed_checks)


def _answerability_scorer(ctx: RunContext, state: ServiceState) -> answerability.LexicalAnswerability:
    # With a composing model, the model's own no-answer and verification decide; answerability only
    # skips a call whose evidence is near-irrelevant, by the lexical features its skip threshold was
    # calibrated on (issue 9). The sentence model serves the extractive composer's choice.
    ranker = state.sentence_ranker if state.llm is None else None
    return answerability.build_scorer(ctx.settings.answerability_scorer, ranker=ranker)


async def _answerability(result: PipelineResult, ctx: RunContext, state: ServiceState) -> PipelineResult | None:
    """Score whether the evidence holds an answer; near-irrelevant evidence costs no composition."""
    assert result.plan is not None, "run_pipeline sets the plan before scoring answerability"
    with ctx.stage("answerability"):
        result.answerability = await _answerability_scorer(ctx, state).assess_off_loop(
            analyse(result.plan.question), result.evidence, ctx.today
        )
    if result.answerability.score < ctx.policy.skip_model_below:
        return _abstain(
            result,
            AbstentionReason.evidence_does_not_answer,
            [
                f"answerability>={ctx.policy.skip_model_below} (got {result.answerability.score})",
                *result.answerability.reasons,
            ],
        )
    return None


def composer_history(turns: list[tuple[str, str]]) -> list[dict]:
    """The earlier turns the composer sees (the last one is the question)."""
    return [{"role": r, "content": t} for r, t in turns[:-1] if r in ("user", "assistant")]


def composing_evidence(result: PipelineResult) -> list[Evidence]:
    """The spans the composer sees: all of them, or with `prefer` only those behind the preferred value."""
    evidence = result.evidence
    if result.conflicts and result.ctx.options.on_conflict == "prefer":
        # The gate counted every source; the composer sees only those behind the preferred value.
        evidence, dropped = conflict_stage.keep_preferred(result.conflicts, evidence)
        assert result.selection is not None, "set by the stages before composing"
        result.selection.decisions.extend(
            SelectionDecision(e.url, "dropped", f"conflict_not_preferred:{e.span_id}") for e in dropped
        )
    return evidence


async def compose_cite_verify(
    result: PipelineResult,
    turns: list[tuple[str, str]],
    ctx: RunContext,
    state: ServiceState,
    *,
    evidence: list[Evidence] | None = None,
    first_draft: Draft | None = None,
    retry: bool = True,
    known: dict[verify.VerdictKey, Claim] | None = None,
) -> PipelineResult:
    """compose → cite → verify → answer or abstain. A verified stream (app/pipeline/stream.py) hands
    in the draft it read (`first_draft`, with the verdicts it `known`), over the `evidence` it
    composed on; `retry=False` once some of it was sent (a second draft cannot replace it)."""
    assert result.plan is not None and result.selection is not None, "set by the stages before composing"
    question = result.plan.question
    history = composer_history(turns)
    if evidence is None:
        evidence = composing_evidence(result)
    for attempt in range(2):
        if attempt == 0 and first_draft is not None:
            draft = first_draft
        else:
            with ctx.stage("compose"):
                draft = await _compose(question, history, evidence, result, ctx, state)
        result.composer = draft.composer
        result.finish_reason = "length" if draft.truncated else "stop"
        if draft.no_answer:
            checks = ["composer_found_answer"]
            if result.answerability is not None:
                checks += [f"answerability={result.answerability.score}", *result.answerability.reasons]
            return _abstain(result, AbstentionReason.evidence_does_not_answer, checks)
        with ctx.stage("cite"):
            answer = cite.parse_draft(draft.text, evidence)
        if answer.removed_urls:
            metrics.CITATIONS_DROPPED.labels(reason="model_url").inc(answer.removed_urls)
        if not answer.invalid_refs:
            break
        metrics.CITATIONS_DROPPED.labels(reason="nonexistent_span").inc(len(answer.invalid_refs))
        log.info("draft cited nonexistent spans %s (attempt %d)", answer.invalid_refs, attempt + 1)
        if attempt == 0 and retry:
            evidence = _tighter(evidence)  # retry once over fewer, renumbered spans
            known = None
        else:
            return _abstain(
                result, AbstentionReason.invalid_citations, [f"cited_nonexistent:{','.join(answer.invalid_refs)}"]
            )
    result.evidence = evidence
    return await settle.verify_and_decide(result, answer, question, ctx, state, known or {})


async def _compose(
    question: str,
    history: list[dict],
    evidence: list[Evidence],
    result: PipelineResult,
    ctx: RunContext,
    state: ServiceState,
) -> Draft:
    """The model when configured and affordable; the extractive composer otherwise or on failure."""
    over = model_over_budget(ctx, evidence, state)
    if state.llm is not None and over is None:
        try:
            return await ModelComposer(state.llm, ctx.settings.composer_model).compose(
                question, history, evidence, result.conflicts, ctx
            )
        except UpstreamError as exc:
            log.warning("composer failed (%s); extractive fallback", exc.message)
            return await extractive_draft(question, evidence, result, ctx, state, "extractive:fallback")
    draft = await extractive_draft(question, evidence, result, ctx, state, "extractive")
    if over is not None:
        # An answer from the evidence already gathered instead of a silent overrun.
        ctx.budget_hits.append(over)
        draft.composer = "extractive:budget"
    return draft


async def extractive_draft(
    question: str, evidence: list[Evidence], result: PipelineResult, ctx: RunContext, state: ServiceState, label: str
) -> Draft:
    """The extractive composer's draft, labelled ("extractive:fallback" after a model failure)."""
    if label == "extractive:fallback":
        metrics.UPSTREAM_CALLS.labels(kind="llm", provider="openai", outcome="error").inc()
    extractive = ExtractiveComposer(_answerability_scorer(ctx, state), _assessed(result, evidence))
    draft = await extractive.compose(question, [], evidence, result.conflicts, ctx)
    draft.composer = label
    return draft


def model_over_budget(ctx: RunContext, evidence: list[Evidence], state: ServiceState) -> str | None:
    return _over_budget(ctx, evidence) if state.llm is not None else None


def _assessed(result: PipelineResult, evidence: list[Evidence]):
    """The answerability assessment, when it was made over this very evidence (not after `prefer`
    or a retry narrowed it)."""
    a = result.answerability
    return a if a is not None and evidence is result.evidence else None


def _over_budget(ctx: RunContext, evidence: list[Evidence]) -> str | None:
    """Which budget a model call would overrun (the deadline or max_cost_usd), if any."""
    if ctx.remaining() < MIN_COMPOSE_TIME_S:
        return "deadline"
    if ctx.options.max_cost_usd is None:
        return None
    price = ctx.price_of(ctx.settings.composer_model)
    prompt = sum(e.tokens for e in evidence) + COMPOSE_PROMPT_OVERHEAD_TOKENS
    answer = ctx.options.max_tokens or ANSWER_TOKENS_ESTIMATE
    est = prompt * price[0] / TOKENS_PER_PRICE_UNIT + answer * price[1] / TOKENS_PER_PRICE_UNIT
    return "max_cost_usd" if ctx.cost.usd + est > ctx.options.max_cost_usd else None


def _planner_over_budget(ctx: RunContext) -> bool:
    if ctx.options.max_cost_usd is None:
        return False
    price = ctx.price_of(ctx.settings.planner_model)
    est = PLANNER_PROMPT_TOKENS_ESTIMATE * price[0] + PLANNER_COMPLETION_TOKENS_ESTIMATE * price[1]
    if ctx.cost.usd + est / TOKENS_PER_PRICE_UNIT > ctx.options.max_cost_usd:
        ctx.budget_hits.append("max_cost_usd")
        return True
    return False


def _tighter(evidence: list[Evidence]) -> list[Evidence]:
    from dataclasses import replace

    keep = evidence[: max(1, len(evidence) // 2)]
    return [replace(e, span_id=f"S{i}") for i, e in enumerate(keep, 1)]


async def _ungrounded(turns, decision: Route, ctx: RunContext, state: ServiceState) -> PipelineResult:
    result = PipelineResult(ctx=ctx, status=GroundingStatus.ungrounded, content="", composer="", route=decision)
    if state.llm is None:
        result.composer = "none"
        return _abstain(result, AbstentionReason.upstream_unavailable, ["model_configured"])
    messages = [{"role": r, "content": t} for r, t in turns]
    o = ctx.options
    with ctx.stage("compose"):
        try:
            completion = await state.llm.complete(
                messages,
                model=ctx.settings.composer_model,
                temperature=UNGROUNDED_TEMPERATURE if o.temperature is None else o.temperature,
                max_tokens=o.max_tokens,
                timeout=ctx.remaining(),
                extra={k: v for k, v in (("top_p", o.top_p), ("seed", o.seed), ("stop", o.stop)) if v is not None}
                or None,
            )
        except UpstreamError:
            result.composer = f"llm:{ctx.settings.composer_model}"
            return _abstain(result, AbstentionReason.upstream_unavailable, ["composer_available"])
    ctx.charge_llm("compose", completion, messages)
    result.content, result.composer = completion.text, f"llm:{completion.model}"
    result.finish_reason = "length" if completion.finish_reason == "length" else "stop"
    return result


def new_context(request_id: str, options, settings, tokens, cpu: CpuQueue | None = None) -> RunContext:
    return RunContext(
        request_id=request_id,
        options=options,
        settings=settings,
        today=datetime.now(UTC).date(),
        tokens=tokens,
        cpu=cpu,
    )
