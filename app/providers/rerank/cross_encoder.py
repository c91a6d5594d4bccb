"""A local cross-encoder (sentence-transformers), loaded from a path at start-up, offline only.

sentence-transformers is not a dependency of the service: install it (and a model directory) in
the image that wants a reranker. A missing package or path fails start-up with a clear message
instead of degrading silently.
"""

from __future__ import annotations

from pathlib import Path

from app.errors import GroundingError
from app.providers.rerank.base import register_reranker
from app.settings import Settings


class CrossEncoderReranker:
    name = "cross-encoder"

    def __init__(self, path: Path, max_length: int = 512):
        if not path.is_dir():
            raise GroundingError(f"GA_RERANKER_PATH {str(path)!r} is not a model directory")
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise GroundingError("GA_RERANKER=cross-encoder needs the sentence-transformers package") from exc
        # local_files_only: a path, never a hub download.
        self._model = CrossEncoder(str(path), max_length=max_length, local_files_only=True)

    def score(self, question: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        return [float(s) for s in self._model.predict([(question, p) for p in passages])]


def _factory(settings: Settings) -> CrossEncoderReranker:
    if settings.reranker_path is None:
        raise GroundingError("GA_RERANKER=cross-encoder needs GA_RERANKER_PATH")
    return CrossEncoderReranker(settings.reranker_path)


register_reranker("cross-encoder", _factory)
