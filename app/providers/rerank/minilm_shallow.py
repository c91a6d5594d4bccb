"""MiniLM's first layers as a cheap question vector, for the time model's vector features
(app/language/time.py, GA_TIME_CLASSIFIER=model).

The unit mean of a text's token states after the model's first `layers` layers: two layers cost about a
third of a full embedding and, for the time class, came within a few errors of it out of fold
(docs/EVALUATION.md). A module of its own, over MiniLMEncoder's public methods: the injection
verdicts stored with the corpus are keyed by minilm.py's code, which this leaves as it is.
"""

from __future__ import annotations

from app.errors import GroundingError
from app.providers.rerank.minilm import MiniLMEncoder, shared_encoder


class ShallowEncoder:
    """app.language.time.QuestionEncoder over the shared MiniLM encoder."""

    def __init__(self, encoder: MiniLMEncoder) -> None:
        self._encoder = encoder
        self._layers = encoder.layers()

    @property
    def weights_digest(self) -> str:
        return self._encoder.weights_digest

    def shallow_vector(self, text: str, layers: int) -> list[float]:
        import numpy as np

        piece = self._encoder.token_ids([text])[0]  # cut at 256 word pieces, as the full embedding is
        ids = np.asarray([piece], dtype=np.int64)
        mask = np.ones((1, len(piece)), dtype=np.float32)
        pooled = self._encoder.hidden(ids, mask, self._layers[:layers])[0].mean(axis=0)
        return [float(v) for v in pooled / max(float(np.linalg.norm(pooled)), 1e-12)]


def optional_encoder(folder: str) -> ShallowEncoder | None:
    """Over the shared encoder when the `semantic` extra is installed, else None; the weights are hashed
    now (app/language/time.use_vectors compares digests at start-up, off the event loop)."""
    try:
        encoder = ShallowEncoder(shared_encoder(folder))
    except (ImportError, GroundingError):
        return None
    encoder.weights_digest  # noqa: B018
    return encoder
