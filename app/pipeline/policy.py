"""Every threshold that decides answer or abstain, in one place. Operators tune them through
Settings (GA_ANSWERABLE_AT, …); docs/EVALUATION.md gives the command that calibrates each one on
the labelled development split."""

from __future__ import annotations

from dataclasses import dataclass

from app.settings import Settings


@dataclass(frozen=True, slots=True)
class Policy:
    # Answerability (app/pipeline/answerability.py), 0..1.
    answerable_at: float  # the extractive composer quotes only sentences scoring at least this
    skip_model_below: float  # below this no composing model is called (evidence near-irrelevant)
    # Verification (app/pipeline/verify.py).
    support_threshold: float  # a cited sentence's support score at or above this is supported
    min_groundedness: float  # supported share of factual sentences under which the answer abstains
    # The entailment model's (app/pipeline/entail.py): a verdict at or above either settles the sentence.
    entail_at: float
    contradict_at: float

    @classmethod
    def from_settings(cls, settings: Settings) -> Policy:
        return cls(
            answerable_at=settings.answerable_at,
            skip_model_below=settings.skip_model_below,
            support_threshold=settings.support_threshold,
            min_groundedness=settings.min_groundedness,
            entail_at=settings.support_model_entail_at,
            contradict_at=settings.support_model_contradict_at,
        )
