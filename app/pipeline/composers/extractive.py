"""The extractive composer: verbatim evidence sentences that answer the question that was asked,
each with its span id; it declines (Draft.no_answer) when no sentence scores at least
policy.answerable_at. Used when no model is configured, on model failure and over budget."""

from __future__ import annotations

import re
from functools import partial

from app.domain.types import Conflict, Draft, Evidence
from app.language.question import analyse
from app.language.text import terms
from app.pipeline.answerability import Answerability, LexicalAnswerability, SentenceMatch, build_scorer
from app.pipeline.composers.base import NO_ANSWER
from app.pipeline.conflicts import preferred_value, values_in
from app.pipeline.context import RunContext

MAX_EXTRACTIVE_SENTENCES = 3
TOKENS_PER_SENTENCE = 40  # a quoted sentence's rough cost: a request's max_tokens buys one per 40 (at least one)
SECONDARY_SHARE = 0.5  # a sentence after the first must score at least this share of answerable_at
COMPOUND_SHARE = 0.5  # ... halved again for a compound question: the other part's sentence may score lower
NEAR_BEST_RANK = 0.8  # a typed sentence that adds no question term must rank at least this share of the lead
GAIN_WEIGHT = 0.5  # weight of the share of uncovered question terms a candidate adds, against its rank

_ATTRIBUTION = "According to {domain} ({date}), "


def compose_extractive(
    question: str,
    evidence: list[Evidence],
    conflicts: list[Conflict],
    ctx: RunContext,
    assessment: Answerability | None = None,
    scorer: LexicalAnswerability | None = None,
) -> Draft:
    """Verbatim evidence sentences that answer the question that was asked, each with its span id.

    The sentences come ranked from the answerability component (relevance × question type: a
    how-to is answered by the sentence naming the call or option, a definition by the defining
    sentence); the composer declines when even the best one scores under policy.answerable_at."""
    analysis = analyse(question)
    if assessment is None:
        assessment = (scorer or build_scorer(ctx.settings.answerability_scorer)).assess(analysis, evidence, ctx.today)
    floor = ctx.policy.answerable_at
    chosen: list[tuple[str, Evidence]] = []
    if conflicts and ctx.options.on_conflict in ("surface", "prefer"):
        chosen = _conflict_sentences(conflicts, assessment.best, ctx.options.on_conflict)
    if not chosen and (not assessment.best or assessment.score < floor):
        return Draft(text=NO_ANSWER, composer="extractive", no_answer=True)
    limit = (
        MAX_EXTRACTIVE_SENTENCES
        if not ctx.options.max_tokens
        else max(1, min(MAX_EXTRACTIVE_SENTENCES, ctx.options.max_tokens // TOKENS_PER_SENTENCE))
    )
    # The best sentence leads. For a value question a further one must be of the asked type and either add
    # question terms still missing (multi-hop: "made by Nimbus" + "Nimbus is based in Tampere") or score
    # near the best: three different numbers would not answer "how many". A compound question needs a
    # sentence per part: one that adds the other part's terms may score lower. For a question asking no
    # value (every kind but price, count, measure, percent, date and version: how-to, definition, why,
    # who, where, yes/no, attribute, open), the next-best sentences over the same floor follow as
    # context, in rank order: the scorer's first sentence holds the gold for ~0.6 of answerable
    # questions, its first three for ~0.8.
    context = not analysis.asks_value
    share = SECONDARY_SHARE * (COMPOUND_SHARE if analysis.compound else 1.0)
    pick = _Picker(
        [m for m in assessment.best if m.score >= floor * share],
        set(analysis.terms),
        floor,
        [s for s, _ in chosen],
        context=context,
    )
    while len(chosen) < MAX_EXTRACTIVE_SENTENCES and (best := pick.next()) is not None:
        chosen.append((best.quoted, best.evidence))
    if not chosen:
        return Draft(text=NO_ANSWER, composer="extractive", no_answer=True)
    order = {e.span_id: i for i, e in enumerate(evidence)}
    if not conflicts:
        # The best sentence leads; the rest follow in evidence order so the answer reads in sequence.
        chosen = chosen[:1] + sorted(chosen[1:], key=lambda c: order[c[1].span_id])
    # max_tokens keeps the answer's first sentences, so a shortened answer is a prefix of the whole one;
    # the client learns it was cut ("length").
    truncated = len(chosen) > limit
    chosen = chosen[:limit]
    text = " ".join(_cite(s, ev.span_id) for s, ev in chosen)
    return Draft(text=text, composer="extractive", truncated=truncated)


class _Picker:
    """The candidates in the order the composer takes them, each checked against those already taken."""

    def __init__(
        self, pool: list[SentenceMatch], q: set[str], floor: float, taken: list[str], *, context: bool = False
    ) -> None:
        self.pool, self.q, self.floor, self.taken = pool, q, floor, list(taken)
        self.context = context  # further sentences are context: taken in rank order, of any type
        self.lead_rank = pool[0].rank if pool else 0.0
        self.covered: set[str] = set()

    def next(self) -> SentenceMatch | None:
        """The next sentence the answer takes (and records as taken), or None when none qualifies."""
        while self.pool:
            if not self.taken or self.context:
                best = self.pool[0]
            else:
                best = max(self.pool, key=partial(_gain, q=self.q, covered_terms=frozenset(self.covered)))
            self.pool.remove(best)
            if any(best.sentence in s or s in best.sentence for s in self.taken):
                continue
            asked = set(terms(best.sentence)) & self.q
            adds = asked - self.covered
            if self.taken and not self.context:
                if not (best.typed and (adds or best.rank >= NEAR_BEST_RANK * self.lead_rank)):
                    continue
                if best.score < self.floor * SECONDARY_SHARE and not adds:
                    continue
            self.taken.append(best.quoted)
            self.covered |= asked
            return best
        return None


def _gain(m: SentenceMatch, q: set[str], covered_terms: frozenset[str]) -> float:
    """A candidate's rank plus what it adds of the question that the chosen sentences do not cover."""
    return m.rank + GAIN_WEIGHT * len((set(terms(m.sentence)) & q) - covered_terms) / max(1, len(q))


def _conflict_sentences(
    conflicts: list[Conflict], candidates: list[SentenceMatch], policy: str
) -> list[tuple[str, Evidence]]:
    out = []
    for c in conflicts:
        values = [preferred_value(c)] if policy == "prefer" else c.values
        for v in values:
            for m in candidates:
                sentence, ev = m.sentence, m.evidence
                if ev.span_id in v["span_ids"] and v["value"] in values_in(c.attribute, sentence):
                    date = ev.published_at.isoformat() if ev.published_at else "undated"
                    out.append((_ATTRIBUTION.format(domain=ev.domain, date=date) + sentence, ev))
                    break
    return out


def _cite(sentence: str, span_id: str) -> str:
    # The marker goes before the final period so it stays inside its sentence: "... released [S1]."
    sentence = sentence.strip()
    m = re.search(r"[.!?]+[\"')\]]*$", sentence)
    body, end = (sentence[: m.start()], m.group(0)) if m else (sentence, ".")
    return f"{body} [{span_id}]{end}"


class ExtractiveComposer:
    name = "extractive"

    def __init__(self, scorer: LexicalAnswerability | None = None, assessment: Answerability | None = None):
        self.scorer, self.assessment = scorer, assessment

    async def compose(
        self, question: str, history: list[dict], evidence: list[Evidence], conflicts: list[Conflict], ctx: RunContext
    ) -> Draft:
        assessment = self.assessment
        if assessment is None and self.scorer is not None:
            assessment = await self.scorer.assess_off_loop(analyse(question), evidence, ctx.today)
        return compose_extractive(question, evidence, conflicts, ctx, assessment, self.scorer)
