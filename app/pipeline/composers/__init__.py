"""Composers: a model over the evidence (llm.py) or verbatim sentences (extractive.py), one contract
(base.py)."""

from app.pipeline.composers.base import NO_ANSWER, Composer
from app.pipeline.composers.extractive import ExtractiveComposer, compose_extractive
from app.pipeline.composers.llm import ModelComposer, build_messages, says_no_answer

__all__ = [
    "NO_ANSWER",
    "Composer",
    "ExtractiveComposer",
    "ModelComposer",
    "build_messages",
    "compose_extractive",
    "says_no_answer",
]
