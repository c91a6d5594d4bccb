"""Fixtures of the pipeline tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.pipeline.injection_encoder import EncoderVerdicts


class SpyReader:
    """An injection reader (English encoder or multilingual) that records what it is asked to read
    and calls every sentence it reads an instruction: its verdicts remove whatever it reads."""

    verdicts = EncoderVerdicts(lexical_threshold=1.01, gate=0.0, lexical_weight=0.0, threshold=-30.0)

    def __init__(self, reads: Callable[[str], bool] | None = None) -> None:
        self.calls: list[list[str]] = []
        self._reads = reads

    def reads(self, sentence: str) -> bool:
        assert self._reads is not None, "an English encoder spy has no reads()"
        return self._reads(sentence)

    def logits(self, sentences: list[str]) -> list[float]:
        self.calls.append(sentences)
        return [30.0] * len(sentences)

    def fingerprint(self) -> str:
        return "spy"


@pytest.fixture
def spy_reader() -> type[SpyReader]:
    return SpyReader
