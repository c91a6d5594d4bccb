"""app/pipeline/entail.py: how an entailment model's verdicts settle a claim, and what it is asked."""

from __future__ import annotations

from app.pipeline.entail import premises, read_claims, settle
from app.providers.entailment.base import Entailment

ENTAILS, CONTRADICTS, UNSURE = Entailment(0.95, 0.02, 0.03), Entailment(0.02, 0.95, 0.03), Entailment(0.4, 0.3, 0.3)


class _ByPremise:
    """A stand-in model: the verdict is looked up by premise; every pair asked is recorded."""

    name = "stand-in"

    def __init__(self, verdicts: dict[str, Entailment]) -> None:
        self.verdicts, self.asked = verdicts, []

    def entail(self, pairs):
        self.asked.extend(pairs)
        return [self.verdicts[p] for p, _ in pairs]


def test_any_premise_entailing_settles_it_supported_else_a_contradiction_unsupported():
    assert settle([UNSURE, ENTAILS], entail_at=0.9, contradict_at=0.9) is True
    assert settle([CONTRADICTS, ENTAILS], entail_at=0.9, contradict_at=0.9) is True
    assert settle([CONTRADICTS, UNSURE], entail_at=0.9, contradict_at=0.9) is False
    assert settle([UNSURE, UNSURE], entail_at=0.9, contradict_at=0.9) is None
    assert settle([Entailment(0.85, 0.1, 0.05)], entail_at=0.9, contradict_at=0.9) is None  # not confident


def test_premises_are_the_quote_then_each_cited_span_once():
    assert premises("The best window.", ["Span one.", "Span one."]) == ["The best window.", "Span one."]
    assert premises("", ["Span one."]) == ["Span one."]


def test_a_whole_span_is_read_only_when_the_quote_does_not_entail():
    model = _ByPremise({"quote a": ENTAILS, "span a": CONTRADICTS, "quote b": UNSURE, "span b": ENTAILS})
    found = read_claims(model, [("claim a", ["quote a", "span a"]), ("claim b", ["quote b", "span b"])], 0.9)
    assert model.asked == [("quote a", "claim a"), ("quote b", "claim b"), ("span b", "claim b")]
    assert found == [[ENTAILS], [UNSURE, ENTAILS]]
