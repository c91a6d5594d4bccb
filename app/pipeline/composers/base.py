"""The composer contract: prose over numbered evidence spans where every factual sentence carries
span ids, no URLs, and NO_ANSWER when the evidence does not answer (Draft.no_answer)."""

from __future__ import annotations

from typing import Protocol

from app.domain.types import Conflict, Draft, Evidence
from app.pipeline.context import RunContext

NO_ANSWER = "The evidence does not answer this question."


class Composer(Protocol):
    name: str

    async def compose(
        self, question: str, history: list[dict], evidence: list[Evidence], conflicts: list[Conflict], ctx: RunContext
    ) -> Draft: ...
