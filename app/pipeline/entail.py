"""Entailment: a local NLI model's verdict on the sentences the lexical support check cannot settle.

Verification's order of authority (app/pipeline/settle.py): the lexical check first, whose hard
failures (a negated, reversed or number-changed claim) are final; then, for the sentences it leaves
undecided (a paraphrase, a near-miss), this model when one is configured (`GA_SUPPORT_MODEL`); then
the LLM judge for what the model is unsure of. The model proposes a verdict; a confident one
(policy.entail_at / policy.contradict_at) settles the sentence, anything else leaves it to the judge,
else to the lexical score.

Premises: the lexical check's best window (the quote) and each cited span, so a claim that a span
states across sentences is still read whole; a claim is entailed when any premise entails it."""

from __future__ import annotations

import logging

from app import metrics
from app.domain.types import Claim, Evidence
from app.language.support import strip_attribution
from app.pipeline.context import RunContext
from app.providers.entailment.base import Entailment, EntailmentModel

log = logging.getLogger(__name__)
MAX_ENTAILED = 8  # claims per answer: each costs a forward pass per premise (tens of ms of CPU)
JUDGE_NAME = "entailment"  # Claim.judged_by for a verdict settled here


def premises(quote: str, spans: list[str]) -> list[str]:
    """What a claim is read against: its best quote, then each cited span's text (duplicates once)."""
    return list(dict.fromkeys(p for p in [quote, *spans] if p and p.strip()))


def settle(verdicts: list[Entailment], *, entail_at: float, contradict_at: float) -> bool | None:
    """True (entailed by some premise), False (contradicted, entailed by none) or None (unsure)."""
    if any(v.entailment >= entail_at for v in verdicts):
        return True
    if any(v.contradiction >= contradict_at for v in verdicts):
        return False
    return None


def read_claims(model: EntailmentModel, items: list[tuple[str, list[str]]], entail_at: float) -> list[list[Entailment]]:
    """The model's verdicts on each (hypothesis, premises) item, premises in order. In two rounds: the
    first premise of every item (the best quote: a sentence or two), then the rest only for the items it
    did not entail, since a claim is entailed when any premise entails it (a whole span costs several
    times the quote's tokens). CPU-bound: call it off the event loop."""
    found: list[list[Entailment]] = [[] for _ in items]
    for round_ in (0, 1):
        pairs: list[tuple[str, str]] = []
        owners: list[int] = []
        for i, (hypothesis, premises_) in enumerate(items):
            if round_ and any(v.entailment >= entail_at for v in found[i]):
                continue
            for premise in premises_[:1] if round_ == 0 else premises_[1:]:
                pairs.append((premise, hypothesis))
                owners.append(i)
        for owner, read in zip(owners, model.entail(pairs) if pairs else []):
            found[owner].append(read)
    return found


async def entail_claims(claims: list[Claim], evidence: list[Evidence], model: EntailmentModel, ctx: RunContext) -> int:
    """Ask the model about each claim (off the event loop); returns how many verdicts settled a claim.
    A model fault leaves every claim as it was (to the judge, else the lexical score), never the request."""
    by_id = {e.span_id: e for e in evidence}
    chosen = claims[:MAX_ENTAILED]
    items = [
        (strip_attribution(c.text), premises(c.quote, [by_id[s].text for s in c.span_ids if s in by_id]))
        for c in chosen
    ]
    if not any(p for _, p in items):
        return 0
    policy = ctx.policy
    try:
        per_claim = await ctx.run_cpu(read_claims, model, items, policy.entail_at)
    except Exception:
        log.exception("entailment model failed")
        metrics.ENTAILMENT_VERDICTS.labels(verdict="error").inc(len(chosen))
        return 0
    settled = 0
    for claim, found in zip(chosen, per_claim):
        verdict = settle(found, entail_at=policy.entail_at, contradict_at=policy.contradict_at)
        label = "unsure" if verdict is None else "entailed" if verdict else "contradicted"
        metrics.ENTAILMENT_VERDICTS.labels(verdict=label).inc()
        if verdict is None:
            continue
        claim.judged, claim.judged_by, claim.decisive = verdict, JUDGE_NAME, True
        settled += 1
    return settled
