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


def premises(claim: Claim, spans: list[Evidence]) -> list[str]:
    """What the claim is read against: its best quote, then each cited span (duplicates once)."""
    return list(dict.fromkeys(p for p in [claim.quote, *(e.text for e in spans)] if p and p.strip()))


def settle(verdicts: list[Entailment], *, entail_at: float, contradict_at: float) -> bool | None:
    """True (entailed by some premise), False (contradicted, entailed by none) or None (unsure)."""
    if any(v.entailment >= entail_at for v in verdicts):
        return True
    if any(v.contradiction >= contradict_at for v in verdicts):
        return False
    return None


async def entail_claims(claims: list[Claim], evidence: list[Evidence], model: EntailmentModel, ctx: RunContext) -> int:
    """Ask the model about each claim (off the event loop); returns how many verdicts settled a claim.
    A model fault leaves every claim as it was (to the judge, else the lexical score), never the request."""
    by_id = {e.span_id: e for e in evidence}
    chosen = claims[:MAX_ENTAILED]
    pairs: list[tuple[str, str]] = []
    owners: list[int] = []
    for i, claim in enumerate(chosen):
        hypothesis = strip_attribution(claim.text)
        for premise in premises(claim, [by_id[s] for s in claim.span_ids if s in by_id]):
            pairs.append((premise, hypothesis))
            owners.append(i)
    if not pairs:
        return 0
    try:
        verdicts = await ctx.run_cpu(model.entail, pairs)
    except Exception:
        log.exception("entailment model failed")
        metrics.ENTAILMENT_VERDICTS.labels(verdict="error").inc(len(chosen))
        return 0
    per_claim: list[list[Entailment]] = [[] for _ in chosen]
    for owner, read in zip(owners, verdicts):
        per_claim[owner].append(read)
    policy, settled = ctx.policy, 0
    for claim, found in zip(chosen, per_claim):
        verdict = settle(found, entail_at=policy.entail_at, contradict_at=policy.contradict_at)
        label = "unsure" if verdict is None else "entailed" if verdict else "contradicted"
        metrics.ENTAILMENT_VERDICTS.labels(verdict=label).inc()
        if verdict is None:
            continue
        claim.judged, claim.judged_by, claim.decisive = verdict, JUDGE_NAME, True
        settled += 1
    return settled
