"""Response bodies: bounded Content-Encoding decoding and the content-type allowlist.

httpx's own decoders inflate a whole network chunk at once, so one 64 KB chunk of a gzip bomb can
become ~64 MB in memory before any byte cap is checked. This decoder inflates in pieces of at most
`piece` bytes, so memory stays bounded by the piece size whatever the compression ratio.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator

ALLOWED_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/plain", "application/pdf"})
SNIFF_BYTES = 512

_HTML_STARTS = (
    b"<!doctype html",
    b"<html",
    b"<head",
    b"<body",
    b"<title",
    b"<!--",
    b"<script",
    b"<meta",
    b"<div",
    b"<p",
    b"<h1",
    b"<table",
    b"<a ",
    b"<br",
    b"<iframe",
    b"<style",
)
_BINARY_BYTES = (
    frozenset(range(0x09)) | {0x0B, 0x0E, 0x0F} | frozenset(range(0x10, 0x1B)) | frozenset(range(0x1C, 0x20))
)


class UnsupportedEncoding(ValueError):
    pass


class BadEncoding(ValueError):
    pass


class _Inflater:
    def __init__(self, encoding: str, piece: int):
        self._gzip = encoding in ("gzip", "x-gzip")
        self._piece = piece
        self._first = True
        self._d = self._new()

    def _new(self):
        return zlib.decompressobj(16 + zlib.MAX_WBITS if self._gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._first and data and not self._gzip:
            self._first = False
            try:  # "deflate" is meant to be zlib-wrapped, but some servers send raw deflate
                zlib.decompressobj(zlib.MAX_WBITS).decompress(data[:2])
            except zlib.error:
                self._d = zlib.decompressobj(-zlib.MAX_WBITS)
        try:
            while data:
                if self._d.eof:
                    if not self._gzip:
                        return  # trailing garbage after a deflate stream is ignored
                    self._d = self._new()  # gzip allows several members back to back
                out = self._d.decompress(data, self._piece)
                data = self._d.unconsumed_tail or (self._d.unused_data if self._d.eof else b"")
                if out:
                    yield out
                while len(out) == self._piece and not data and not self._d.eof:
                    out = self._d.decompress(b"", self._piece)  # drain what zlib still holds
                    if out:
                        yield out
        except zlib.error as exc:
            raise BadEncoding(str(exc)) from exc

    def flush(self) -> Iterator[bytes]:
        try:
            tail = self._d.flush()
        except zlib.error as exc:
            raise BadEncoding(str(exc)) from exc
        for i in range(0, len(tail), self._piece):
            yield tail[i : i + self._piece]


class BoundedDecoder:
    """Undo a Content-Encoding header ("gzip", "deflate", "gzip, gzip", "identity")."""

    def __init__(self, content_encoding: str, *, piece: int = 64 * 1024):
        codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        unknown = [c for c in codings if c not in ("gzip", "x-gzip", "deflate")]
        if unknown:
            raise UnsupportedEncoding(f"content-encoding {', '.join(unknown)}")
        # Codings are listed in the order applied; undo them last-first.
        self._stages = [_Inflater(c, piece) for c in reversed(codings)]

    def feed(self, data: bytes) -> Iterator[bytes]:
        yield from self._through(self._stages, [data])

    def flush(self) -> Iterator[bytes]:
        for i, stage in enumerate(self._stages):
            yield from self._through(self._stages[i + 1 :], stage.flush())

    @staticmethod
    def _through(stages: list[_Inflater], pieces: Iterable[bytes]) -> Iterator[bytes]:
        for stage in stages:
            pieces = _chain(stage, pieces)
        yield from pieces


def _chain(stage: _Inflater, pieces: Iterable[bytes]) -> Iterator[bytes]:
    for p in pieces:
        yield from stage.feed(p)


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def sniff_media_type(head: bytes) -> str:
    """Guess a missing Content-Type from the first bytes (a small subset of WHATWG sniffing)."""
    data = head[:SNIFF_BYTES]
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data.startswith(b"%PDF-"):
        return "application/pdf"
    lowered = data.lstrip(b" \t\r\n\x0c").lower()
    if any(lowered.startswith(tag) for tag in _HTML_STARTS):
        return "text/html"
    if data and not any(b in _BINARY_BYTES for b in data):
        return "text/plain"
    return "application/octet-stream"
