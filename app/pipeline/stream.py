"""Verified-sentence streaming: the composing model's output is read as a stream, cut into sentences,
and each sentence is released, with its citation markers, once it is verified.

The stages up to composing are the orchestrator's (`prepare`). The model's deltas are buffered; a
sentence is complete when a later one has begun (app/language/text.py split_sentences; markers
written after its period, "… released. [S1] It …", still belong to it) or the stream has ended.
Each complete sentence is parsed (cite.parse_draft), scored (verify.score_claims; the judge for an
undecided one, at most judge.MAX_JUDGED per answer) and, by the request's verification mode, held
for release ("drop": an unsupported sentence never leaves; "flag", "off": it does, and grounding
marks it). Held sentences leave in order, numbered [1..k] by first use (cite.Numbering, so the
released text is a prefix of the final content), once the answer-level checks that only grow more
certain hold: a kept factual sentence, one stating the asked kind, the groundedness so far at least
`min_groundedness`, and the tokens within `max_tokens`.

When the stream ends, the draft goes through the same cite → verify → answer-or-abstain code as a
non-streamed one (orchestrator.compose_cite_verify, reusing the verdicts already reached), so the
PipelineResult equals the non-streamed one for the same model output. What cannot be equal: a
sentence already sent cannot be taken back. If the finished answer fails a check (groundedness
fell under the minimum, a later sentence cited a span that does not exist, the model said
NO_ANSWER after all), the result is that abstention and the API ends the stream with
finish_reason "content_filter" (app/api/sse.py); a draft citing nonexistent spans is retried over
fewer spans only while nothing was sent.

No model stream (extractive composer, over budget, abstentions before composing): the result is
yielded whole and the API sends it at once. A model that fails before its first delta takes the
same fallbacks as a non-streamed call (GA_LLM_FALLBACK_MODEL, then the extractive composer); one
that fails after it falls back too while nothing was sent, and otherwise raises (an error event).
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field

from app.domain.types import CitedAnswer, Claim, Draft, Evidence
from app.errors import UpstreamError
from app.language.question import QuestionAnalysis, analyse
from app.language.text import split_sentences, strip_links
from app.pipeline import cite, entail, judge, orchestrator, verify
from app.pipeline.answerability import answer_states_kind
from app.pipeline.composers.llm import MIN_FALLBACK_MODEL_S, build_messages, says_no_answer
from app.pipeline.context import RunContext
from app.pipeline.result import PipelineResult
from app.providers import fallbacks
from app.providers.entailment.base import EntailmentModel
from app.providers.llm.base import ChatModel, CompletionStream
from app.state import ServiceState

log = logging.getLogger(__name__)
_BEGUN = re.compile(r"\s*[^\s\[]")  # a sentence has begun once text (not a marker, or half of one) follows its markers


@dataclass(frozen=True, slots=True)
class Release:
    """A verified sentence as it goes on the wire: markers in place, with the space that joins it
    to the sentence before (the released texts concatenate to a prefix of the final content)."""

    text: str


async def stream_pipeline(
    turns: list[tuple[str, str]], ctx: RunContext, state: ServiceState
) -> AsyncGenerator[Release | PipelineResult, None]:
    """Release events while the model writes, then the PipelineResult (always the last item)."""
    result, done = await orchestrator.prepare(turns, ctx, state)
    if done:
        yield result
        return
    evidence = orchestrator.composing_evidence(result)
    llm = state.llm
    if llm is None or orchestrator.model_over_budget(ctx, evidence, state) is not None:
        yield await orchestrator.compose_cite_verify(result, turns, ctx, state, evidence=evidence)
        return
    assert result.plan is not None, "prepare sets the plan before composing"
    question = result.plan.question
    messages = build_messages(question, orchestrator.composer_history(turns), evidence, result.conflicts, ctx)
    with ctx.stage("compose"):
        upstream = await _open(llm, messages, ctx)
    if upstream is None:  # every model failed before its first delta: the extractive composer answers
        draft = await orchestrator.extractive_draft(question, evidence, result, ctx, state, "extractive:fallback")
        yield await orchestrator.compose_cite_verify(result, turns, ctx, state, evidence=evidence, first_draft=draft)
        return
    releaser = Releaser(analyse(question), evidence, ctx, llm, state.entailment)
    try:
        with ctx.stage("compose"):
            async for piece in releaser.read(upstream):
                yield Release(piece)
    except UpstreamError as exc:
        if releaser.text:
            raise  # after the first sentence: an error event for the client
        log.warning("composer stream failed (%s); extractive fallback", exc.message)
        fallbacks.record(ctx.request_id, "compose", upstream.completion.model, "extractive", exc.message)
        draft = await orchestrator.extractive_draft(question, evidence, result, ctx, state, "extractive:fallback")
        yield await orchestrator.compose_cite_verify(result, turns, ctx, state, evidence=evidence, first_draft=draft)
        return
    finally:
        await upstream.aclose()  # also when the reader stopped early: nothing more is generated
    completion = upstream.completion
    ctx.charge_llm("compose", completion, messages)
    draft = Draft(
        text=completion.text,
        composer=f"llm:{completion.model}",
        model=completion.model,
        prompt_tokens=completion.prompt_tokens or 0,
        completion_tokens=completion.completion_tokens or 0,
        no_answer=says_no_answer(completion.text),
        truncated=completion.finish_reason == "length",
    )
    yield await orchestrator.compose_cite_verify(
        result,
        turns,
        ctx,
        state,
        evidence=evidence,
        first_draft=draft,
        retry=not releaser.text,
        known=releaser.known,
    )


async def _open(llm: ChatModel, messages: list[dict], ctx: RunContext) -> CompletionStream | None:
    """The composer model's stream, else the fallback model's (as ModelComposer chains them)."""
    o, settings = ctx.options, ctx.settings
    extra = {k: v for k, v in (("top_p", o.top_p), ("seed", o.seed), ("stop", o.stop)) if v is not None}
    chain = [settings.composer_model]
    if settings.llm_fallback_model and settings.llm_fallback_model != settings.composer_model:
        chain.append(settings.llm_fallback_model)
    for i, model in enumerate(chain):
        try:
            return await llm.stream(
                messages,
                model=model,
                temperature=0.0 if o.temperature is None else o.temperature,
                max_tokens=o.max_tokens,
                timeout=ctx.remaining(),
                extra=extra or None,
            )
        except UpstreamError as exc:
            more = i + 1 < len(chain) and ctx.remaining() >= MIN_FALLBACK_MODEL_S
            fallbacks.record(ctx.request_id, "compose", model, chain[i + 1] if more else "extractive", exc.message)
            if not more:
                log.warning("composer failed (%s); extractive fallback", exc.message)
                return None
    return None


def complete_prefix(buffer: str) -> str | None:
    """The buffered draft's complete sentences (each followed by one that has begun), with the
    markers that follow the last of them; None while no sentence is complete."""
    text, _ = strip_links(buffer)
    raw = split_sentences(text)
    for k in range(len(raw) - 1, 0, -1):
        lead = cite.LEADING_REFS.match(raw[k])
        if _BEGUN.match(raw[k][lead.end() :] if lead else raw[k]):
            return "\n".join(raw[:k]) + ("\n" + lead.group(0) if lead else "")
    return None


@dataclass
class Releaser:
    """Checks each complete sentence and releases the held ones when the answer-level checks hold."""

    asked: QuestionAnalysis
    evidence: list[Evidence]
    ctx: RunContext
    llm: ChatModel
    entailment: EntailmentModel | None = None
    known: dict[verify.VerdictKey, Claim] = field(default_factory=dict)
    text: str = ""  # released so far
    held: list[Claim] = field(default_factory=list)  # verified, kept, not yet released
    kept_factual: list[str] = field(default_factory=list)
    factual: int = 0
    supported: int = 0
    judged: int = 0
    entailed: int = 0
    capped: bool = False  # max_tokens reached: nothing more is released
    checked: int = 0

    def __post_init__(self) -> None:
        self.numbering = cite.Numbering(self.evidence)
        tokens = self.ctx.tokens
        self.count: Callable[[str], int] = tokens.count if tokens else (lambda t: len(t.split()))

    async def read(self, upstream: CompletionStream) -> AsyncIterator[str]:
        """Released pieces while the model writes. Stops reading early when the draft can no longer
        be released (NO_ANSWER, a nonexistent span): the caller closes the stream."""
        buffer = ""
        async for delta in upstream:
            buffer += delta
            if says_no_answer(buffer):
                return
            prefix = complete_prefix(buffer)
            if prefix is None:
                continue
            parsed = cite.parse_draft(prefix, self.evidence)
            if parsed.invalid_refs:
                return
            for claim in parsed.claims[self.checked :]:
                await self.check(claim, parsed)
                for piece in self.releasable():
                    yield piece
            self.checked = len(parsed.claims)

    async def check(self, claim: Claim, parsed: CitedAnswer) -> None:
        settings, mode = self.ctx.settings, self.ctx.options.verification
        if mode != "off" and claim.factual and claim.span_ids:
            verify.score_claims(parsed, self.evidence, self.asked, only=[claim])
            if not claim.decisive and self.entailment is not None and self.entailed < entail.MAX_ENTAILED:
                self.entailed += 1
                await entail.entail_claims([claim], self.evidence, self.entailment, self.ctx)
            if not claim.decisive and self.judged < judge.MAX_JUDGED:
                self.judged += 1
                model = settings.judging_model
                await judge.judge_claims([claim], self.evidence, self.llm, model, self.ctx)
        self.known[verify.verdict_key(claim)] = claim
        ok = not claim.factual or verify.is_supported(claim, settings.support_threshold)
        if claim.factual:
            self.factual += 1
            self.supported += ok
        if mode == "drop" and not ok:
            return  # never sent
        if claim.factual:
            self.kept_factual.append(claim.text)
        self.held.append(claim)

    def releasable(self) -> list[str]:
        """The held sentences that may leave now (in order), as wire pieces."""
        # A model's stream: the asked kind is checked as settle checks a model's answer.
        if self.capped or not self.kept_factual or not answer_states_kind(self.asked, self.kept_factual, by_model=True):
            return []
        mode, floor = self.ctx.options.verification, self.ctx.settings.min_groundedness
        if mode != "off" and self.supported < floor * self.factual:
            return []
        limit, out = self.ctx.options.max_tokens, []
        while self.held:
            piece = (" " if self.text else "") + self.numbering.sentence(self.held[0])
            if limit and self.count(self.text + piece) > limit:
                self.capped = True  # the answer is cut here (finish_reason "length")
                break
            self.text += piece
            self.held.pop(0)
            out.append(piece)
        return out
