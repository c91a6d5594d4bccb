"""Passages: documents split at headings and paragraphs into 200-1500 character pieces, and a
small BM25 scorer over them (question terms, not the derived queries)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from app.cache.lru import ByteLRU, str_bytes
from app.domain.types import Document
from app.language.text import split_sentences, terms

MIN_CHARS, MAX_CHARS = 200, 1500


MAX_DOC_CHARS = 150_000  # bound CPU on huge pages: what answers a question sits near the top
# Okapi BM25 with the textbook parameters (Robertson & Zaragoza): k1 saturates a term's frequency,
# b sets how much a long passage is normalised down.
BM25_K1 = 1.2
BM25_B = 0.75
IDF_SMOOTHING = 0.5  # the +0.5 of the Robertson–Spärck Jones IDF in BM25's standard form, not a tuning knob


@dataclass(slots=True)
class Passage:
    doc: Document
    heading: str
    text: str
    index: int
    terms: list[str] = field(default_factory=list)
    score: float = 0.0
    kind: str = "prose"  # "prose" | "code": code is evidence for a model, never quoted as a sentence


# Splitting and term extraction are a pure function of a document's text and title, and the same
# pages come back request after request (the local docs corpus, popular pages): their passage
# skeletons are remembered by content hash, LRU, bounded by bytes.
SKELETON_MEMO_MAX_BYTES = 32 * 1024 * 1024
# A skeleton tuple, its term list header and each term's list slot; term strings are measured.
SKELETON_OVERHEAD_BYTES = 160
TERM_SLOT_BYTES = 8

_Skeleton = tuple[str, str, int, str, list[str]]  # heading, text, index, kind, terms
_skeletons: ByteLRU[tuple[str, str], list[_Skeleton]] = ByteLRU(SKELETON_MEMO_MAX_BYTES, "passages")


def skeleton_bytes(skeletons: list[_Skeleton]) -> int:
    """What remembered skeletons hold. A page's repeated words share one str object (the stemmer's
    cache), and its passages share headings: each distinct object is counted once."""
    total = 56 + 8 * len(skeletons)
    distinct: dict[int, str] = {}
    for heading, text, _, _, words in skeletons:
        total += SKELETON_OVERHEAD_BYTES + str_bytes((text,)) + TERM_SLOT_BYTES * len(words)
        distinct[id(heading)] = heading
        distinct.update((id(w), w) for w in words)
    return total + str_bytes(distinct.values())


def split_passages(doc: Document) -> list[Passage]:
    """The document's passages (fresh objects: BM25 scores them in place), from the memo when the
    same text was split before."""
    key = (doc.content_hash, doc.title)
    found = _skeletons.get(key)
    if found is not None:
        return [Passage(doc, h, t, i, terms, kind=k) for h, t, i, k, terms in found]
    passages = _split(doc)
    if doc.content_hash:
        skeletons = [(p.heading, p.text, p.index, p.kind, p.terms) for p in passages]
        _skeletons.put(key, skeletons, skeleton_bytes(skeletons))
    return passages


def _split(doc: Document) -> list[Passage]:
    out: list[Passage] = []
    heading = ""
    buf: list[str] = []
    seen = 0

    def flush() -> None:
        if buf:
            text = "\n".join(buf).strip()
            if text:
                out.append(Passage(doc, heading, text, len(out)))
            buf.clear()

    for block in doc.blocks:
        seen += len(block.text)
        if seen > MAX_DOC_CHARS:
            break
        if block.kind == "heading":
            flush()
            heading = block.text.rstrip("¶# ").strip()
            continue
        if block.kind == "pre":
            flush()
            out.append(Passage(doc, heading, block.text[:MAX_CHARS], len(out), kind="code"))
            continue
        pieces = [block.text] if len(block.text) <= MAX_CHARS else _split_long(block.text)
        for piece in pieces:
            if buf and sum(len(b) for b in buf) + len(piece) > MAX_CHARS:
                flush()
            buf.append(piece)
            if sum(len(b) for b in buf) >= MIN_CHARS * 2:
                flush()
    flush()
    # Fold a too-short tail into its predecessor under the same heading.
    merged: list[Passage] = []
    for p in out:
        if (
            merged
            and len(p.text) < MIN_CHARS
            and merged[-1].heading == p.heading
            and p.kind == merged[-1].kind
            and len(merged[-1].text) + len(p.text) <= MAX_CHARS
        ):
            merged[-1].text += "\n" + p.text
        else:
            merged.append(p)
    title = doc.title
    for i, p in enumerate(merged):
        p.index = i
        p.terms = terms(f"{title} {p.heading} {p.text}")
    return merged


def _split_long(text: str) -> list[str]:
    pieces, cur = [], ""
    for sentence in split_sentences(text):
        if cur and len(cur) + len(sentence) + 1 > MAX_CHARS:
            pieces.append(cur)
            cur = ""
        cur = f"{cur} {sentence}".strip() if cur else sentence[:MAX_CHARS]
    if cur:
        pieces.append(cur)
    return pieces


def bm25(
    passages: list[Passage], query_terms: list[str] | tuple[str, ...], k1: float = BM25_K1, b: float = BM25_B
) -> dict[str, float]:
    """Score passages in place with Okapi BM25; returns each query term's IDF over the passages (a term
    no passage holds gets the IDF of document frequency 0)."""
    q = set(query_terms)
    n = len(passages)
    if not passages:
        return {}
    avg = sum(len(p.terms) for p in passages) / n or 1.0
    # One C-level filter pass per passage (a generator expression over every term of every passage
    # showed at ~9 % of an uncached answer's CPU); each term's IDF once, not once per passage.
    tfs: list[dict[str, int]] = []
    for p in passages:
        tf: dict[str, int] = {}
        for t in filter(q.__contains__, p.terms):  # most passages match few or no question terms
            tf[t] = tf.get(t, 0) + 1
        tfs.append(tf)
    df: dict[str, int] = {}
    for tf in tfs:
        for t in tf:
            df[t] = df.get(t, 0) + 1
    idf = {t: math.log(1 + (n - df.get(t, 0) + IDF_SMOOTHING) / (df.get(t, 0) + IDF_SMOOTHING)) for t in q}
    for p, counts in zip(passages, tfs):
        s = 0.0
        for t, f in counts.items():
            s += idf[t] * f * (k1 + 1) / (f + k1 * (1 - b + b * len(p.terms) / avg))
        p.score = s
    return idf
