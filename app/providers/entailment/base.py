"""Entailment (NLI) model protocol and registry: does a premise (the cited evidence) state a hypothesis
(the answer's sentence)? An operator may configure a local model (`GA_SUPPORT_MODEL=bert-nli`,
`GA_SUPPORT_MODEL_PATH=/models/…`); nothing is downloaded at run time, and the default is off.

Verification asks it only about the sentences the lexical support check cannot settle (a paraphrase,
a near-miss), before the LLM judge: a confident verdict settles the sentence, an unsure one goes on to
the judge (app/pipeline/entail.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from app.settings import Settings


@dataclass(frozen=True, slots=True)
class Entailment:
    """The model's probabilities for one (premise, hypothesis) pair; they sum to 1."""

    entailment: float
    contradiction: float
    neutral: float


@runtime_checkable
class EntailmentModel(Protocol):
    name: str

    def entail(self, pairs: list[tuple[str, str]]) -> list[Entailment]:
        """One verdict per (premise, hypothesis) pair, in order. CPU-bound: call it off the event loop."""
        ...


EntailmentFactory = Callable[["Settings"], EntailmentModel]
_REGISTRY: dict[str, EntailmentFactory] = {}


def register_entailment(name: str, factory: EntailmentFactory) -> None:
    _REGISTRY[name] = factory


def build_entailment(settings: Settings) -> EntailmentModel | None:
    """The configured model, or None when `GA_SUPPORT_MODEL` is off. A configured model that cannot be
    loaded fails start-up with a clear message rather than verifying silently without it."""
    if not settings.support_model_enabled:
        return None
    name = settings.support_model
    from app.errors import GroundingError

    if name not in _REGISTRY:
        raise GroundingError(f"unknown support model {name!r}; registered: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name](settings)
