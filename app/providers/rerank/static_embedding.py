"""Sentence similarity from static word embeddings that ship inside the wordllama wheel (256-d,
about 16 MB, numpy only): offline, ~0.1 ms per sentence, no model download.

Used to order candidate answer sentences (app/pipeline/answerability.py), where a paraphrase
("pause my async code" / "block for delay seconds") shares no words with its answer. Measured on
the labelled development split before it was made the default (docs/EVALUATION.md).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

from app.errors import GroundingError
from app.providers.rerank.base import register_reranker
from app.settings import Settings

log = logging.getLogger(__name__)
_TOKENIZER = "l2_supercat_tokenizer_config.json"


class StaticEmbeddingReranker:
    name = "wordllama"

    def __init__(self) -> None:
        try:
            import wordllama
        except ImportError as exc:
            raise GroundingError("GA_SENTENCE_RANKER=wordllama needs the wordllama package") from exc
        # wordllama 0.4 ships its tokenizer in tokenizers/ but looks for it in a cache dir first and
        # downloads when absent: point it at a private cache that holds the shipped file.
        shipped = Path(wordllama.__file__).parent / "tokenizers" / _TOKENIZER
        cache = Path(tempfile.mkdtemp(prefix="ga-wordllama-"))
        (cache / "tokenizers").mkdir()
        shutil.copy(shipped, cache / "tokenizers" / _TOKENIZER)
        self._model = wordllama.WordLlama.load(cache_dir=cache, disable_download=True)
        shutil.rmtree(cache, ignore_errors=True)

    def score(self, question: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        vectors = self._model.embed([question, *passages], norm=True)
        return [float(v) for v in vectors[1:] @ vectors[0]]


def _factory(settings: Settings) -> StaticEmbeddingReranker:
    return StaticEmbeddingReranker()


register_reranker("wordllama", _factory)
