"""Settle a cited draft: verify each claim (lexical support; for undecided ones the entailment model,
then the judge), drop or flag, number the citations, then answer or abstain (the asked kind stated,
minimum groundedness). Shared by the orchestrator and the verified stream (app/pipeline/stream.py)."""

from __future__ import annotations

from app.domain.types import AbstentionReason, CitedAnswer, Claim
from app.language.question import analyse
from app.pipeline import answerability, cite, entail, judge, verify
from app.pipeline.context import RunContext
from app.pipeline.result import PipelineResult
from app.pipeline.result import abstain as _abstain
from app.state import ServiceState


async def verify_and_decide(
    result: PipelineResult,
    answer: CitedAnswer,
    question: str,
    ctx: RunContext,
    state: ServiceState,
    known: dict[verify.VerdictKey, Claim],
) -> PipelineResult:
    """verify → render → answer or abstain: the support of every claim (verdicts in `known` reused),
    drop or flag, numbering, then the answer-level checks (the asked kind stated, groundedness)."""
    settings, opts, evidence = ctx.settings, ctx.options, result.evidence
    asked = analyse(question)
    with ctx.stage("verify"):
        if opts.verification != "off":
            fresh = verify.adopt_verdicts(answer, known)
            verify.score_claims(answer, evidence, asked, only=fresh)
            fresh_ids = {id(c) for c in fresh}
            doubtful = [c for c in verify.unsettled(answer) if id(c) in fresh_ids]
            if doubtful and state.entailment is not None:
                await entail.entail_claims(doubtful, evidence, state.entailment, ctx)
                doubtful = [c for c in doubtful if not c.decisive]
            if doubtful and state.llm is not None:
                await judge.judge_claims(doubtful, evidence, state.llm, settings.judging_model, ctx)
        result.groundedness = verify.apply_verdicts(
            answer, mode=opts.verification, threshold=settings.support_threshold
        )
        answer = cite.render(answer, evidence)
    result.claims, result.dropped_claims, result.cited = answer.claims, answer.dropped_claims, answer.cited
    factual_kept = [c for c in answer.claims if c.factual]
    by_model = result.composer.startswith("llm:")
    if factual_kept and not answerability.answer_states_kind(asked, [c.text for c in factual_kept], by_model=by_model):
        # "What is the battery capacity?" answered with the display size: cited, supported, not an answer.
        return _abstain(
            result, AbstentionReason.evidence_does_not_answer, [f"answer_states_asked_kind ({asked.kind.value})"]
        )
    if opts.verification != "off" and (not factual_kept or (result.groundedness or 0) < settings.min_groundedness):
        return _abstain(
            result,
            AbstentionReason.unsupported_answer,
            [f"groundedness>={settings.min_groundedness} (got {result.groundedness})"],
        )
    result.content = answer.content
    return result
