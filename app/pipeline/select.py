"""Select evidence: freshness window, domain rules, near-duplicate collapse, one document per
registrable domain, passages ranked against the question (app/pipeline/passage_rank.py), measured token budget. Every decision is
recorded with its reason."""

from __future__ import annotations

import heapq
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date
from functools import partial
from typing import Any

from app.cache.lru import ByteLRU
from app.corpus.vectors import rerank_text
from app.domain.types import Document, Evidence, Selection, SelectionDecision
from app.language.question import analyse
from app.language.text import first_words, terms
from app.pipeline.context import RunContext
from app.pipeline.injection import strip_instructions
from app.pipeline.passage_rank import (
    HandSetScorer,
    PassageScorer,
    RankingContext,
    lexical_feature,
    passage_features,
)
from app.pipeline.passage_rank import (
    document_age_days as page_age_days,
)
from app.pipeline.passages import Passage, bm25, split_passages
from app.urls import domain_matches, host_of

HANDSET = HandSetScorer()
NEAR_DUP_THRESHOLD = 0.7  # Jaccard of 5-word shingles (see docs/ARCHITECTURE.md)
SEAT_LEAD = 1e6  # far above any passage score: seated passages are offered first
MAX_PASSAGES_PER_DOC = 12  # a ceiling; packing is by the token budget, with a diversity discount
# A primary (vendor) domain is one source but may lend several pages: the answer to a how-to can sit
# on another page of the same documentation. Independent-source counting still sees one domain.
PRIMARY_DOCS_PER_DOMAIN = 3
STALE_WINDOWS = 3  # a page older than this many freshness windows is dropped (docs/API.md: "older than 3×")
SHINGLE_WORDS = 5  # near-duplicate shingle length in words (docs/ARCHITECTURE.md: syndicated J 0.80-0.89)
SHINGLE_MAX_WORDS = 3000  # words of a page shingled: copies agree from the top; bounds CPU on huge pages
CHARS_PER_TOKEN = 4  # token estimate when no tokenizer is configured (English prose averages ~4 chars/token)
HEADER_OVERHEAD_TOKENS = 20  # the span tag around a block as the composer sees it (id, domain, date markup)
SCORE_DIGITS = 4  # evidence scores are rounded to this many decimals


def document_age_days(doc: Document, today: date) -> int | None:
    """Age of what the page says now: a page published years ago but modified this week is current."""
    return page_age_days(doc.dates.published, doc.dates.modified, today)


def shingles(text: str, size: int = SHINGLE_WORDS, limit: int = SHINGLE_MAX_WORDS) -> frozenset[int]:
    toks = first_words(text, limit)
    return frozenset(hash(" ".join(toks[i : i + size])) for i in range(max(1, len(toks) - size + 1)))


# A page's shingle set is a pure function of its text, and the same pages come back request after
# request: remembered by content hash, LRU, bounded by bytes.
SHINGLE_MEMO_MAX_BYTES = 16 * 1024 * 1024
HASH_INT_BYTES = 36  # a 64-bit hash() value as an int object (sys.getsizeof)
_shingle_memo: ByteLRU[str, frozenset[int]] = ByteLRU(SHINGLE_MEMO_MAX_BYTES, "shingles")


def shingle_set_bytes(sh: frozenset[int]) -> int:
    """The set's hash table (measured) plus its int objects (small hashes are shared, not counted)."""
    return sys.getsizeof(sh) + HASH_INT_BYTES * len(sh)


def _doc_shingles(doc: Document) -> frozenset[int]:
    found = _shingle_memo.get(doc.content_hash)
    if found is not None:
        return found
    sh = shingles(doc.text)
    if doc.content_hash:
        _shingle_memo.put(doc.content_hash, sh, shingle_set_bytes(sh))
    return sh


# Passages and their header lines are counted again each time they are candidates for the token
# budget, and the same pages come back request after request: counts of passage-sized texts are
# remembered per encoding, LRU, bounded by bytes (the text is measured; its count is a small int).
TOKEN_MEMO_MAX_BYTES = 8 * 1024 * 1024
TOKEN_MEMO_MAX_CHARS = 4000
TOKEN_COUNT_BYTES = 28  # the count (an int object); ByteLRU measures the key tuple, the text is added
_token_memo: ByteLRU[tuple[str, str], int] = ByteLRU(TOKEN_MEMO_MAX_BYTES, "token_counts")


def count_tokens(ctx: RunContext, text: str) -> int:
    """Tokens of `text` in the run's encoding (an estimate without a tokenizer), remembered."""
    if ctx.tokens is None:
        return len(text) // CHARS_PER_TOKEN
    if len(text) > TOKEN_MEMO_MAX_CHARS:
        return ctx.tokens.count(text)
    key = (ctx.tokens.encoding, text)
    found = _token_memo.get(key)
    if found is None:
        found = ctx.tokens.count(text)
        _token_memo.put(key, found, TOKEN_COUNT_BYTES + sys.getsizeof(text))
    return found


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    # |a ∪ b| from the intersection: no union set is built (pages hold thousands of shingles).
    inter = len(a & b)
    union = len(a) + len(b) - inter
    return inter / union if union else 0.0


def near_duplicate(a: frozenset[int], b: frozenset[int]) -> bool:
    """Jaccard ≥ NEAR_DUP_THRESHOLD. Jaccard is at most min/max of the two sizes, so pages of very
    different lengths are told apart without intersecting their sets."""
    small, large = sorted((len(a), len(b)))
    if large and small / large < NEAR_DUP_THRESHOLD:  # the same rounded division as jaccard's: exact
        return False
    return jaccard(a, b) >= NEAR_DUP_THRESHOLD


def collapse_duplicates(
    docs: list[Document], decisions: list[SelectionDecision]
) -> tuple[list[Document], dict[str, list[str]]]:
    """Keep the best-ranked copy of near-identical pages; the others become its also_reported_by.

    Exact Jaccard of 5-word shingle sets: a request compares at most a few dozen pages, where exact
    sets beat datasketch's MinHash (python bench/near_duplicates.py --timing: 4.8 against 7.0 ms per
    6 pages with batch updates; the per-shingle updates with an LSH index used before cost ~66 ms)."""
    kept: list[tuple[Document, frozenset[int]]] = []
    also: dict[str, list[str]] = {}
    for doc in sorted(docs, key=lambda d: d.rank):
        sh = _doc_shingles(doc)
        survivor = next((k for k, ks in kept if near_duplicate(sh, ks)), None)
        if survivor is not None:
            also.setdefault(survivor.url, []).append(doc.url)
            decisions.append(SelectionDecision(doc.url, "dropped", f"near_duplicate_of:{survivor.url}"))
            continue
        kept.append((doc, sh))
    return [d for d, _ in kept], also


async def select_evidence_off_loop(
    docs: list[Document], question: str, freshness_days: int, ctx: RunContext, *, reranker=None, **kw: Any
) -> Selection:
    """select_evidence, in a worker thread when a reranker is set: a model costs up to seconds of CPU,
    which must not stall the event loop (the memos it touches are thread-safe)."""
    if reranker is None:
        return select_evidence(docs, question, freshness_days, ctx, **kw)
    return await ctx.run_cpu(partial(select_evidence, reranker=reranker, **kw), docs, question, freshness_days, ctx)


@dataclass(slots=True)
class Candidates:
    """The pages that passed the filters, and their passages with ranking features (not yet scored)."""

    docs: list[Document]
    also: dict[str, list[str]]  # a kept page's url -> the near-duplicate copies collapsed into it
    decisions: list[SelectionDecision]
    passages: list[Passage]
    features: list[tuple[float, ...]]  # per passage, passage_rank.FEATURES
    ranking: RankingContext  # the question's analysis (its terms), the scale and IDF the features used
    lexical_features: list[tuple[float, ...]] | None = None  # before a reranker's blend (None: none ran)
    # The passages the reranker scored, its best first: the first `dense_evidence_seats` of them are
    # offered evidence before the blended order (hybrid retrieval's union of both retrievers' heads).
    reranked: list[Passage] | None = None


def rank_candidates(
    docs: list[Document], question: str, freshness_days: int, ctx: RunContext, *, reranker=None
) -> Candidates:
    """Domain rules, freshness, near-duplicate collapse; then every passage of what is left with its
    features against the question (BM25, blended with a reranker when one is set)."""
    opts = ctx.options
    decisions: list[SelectionDecision] = []
    fresh_docs = []
    for doc in docs:
        host = host_of(doc.url)
        if opts.exclude_domains and domain_matches(host, opts.exclude_domains):
            decisions.append(SelectionDecision(doc.url, "dropped", "exclude_domains"))
            continue
        if ctx.settings.blocked_domains and domain_matches(host, ctx.settings.blocked_domains):
            decisions.append(SelectionDecision(doc.url, "dropped", "blocked_domains"))
            continue
        if opts.include_domains and not domain_matches(host, opts.include_domains):
            decisions.append(SelectionDecision(doc.url, "dropped", "include_domains"))
            continue
        age = document_age_days(doc, ctx.today)
        if age is not None and age > STALE_WINDOWS * freshness_days:
            decisions.append(SelectionDecision(doc.url, "dropped", f"stale:{age}d>{STALE_WINDOWS}x{freshness_days}d"))
            continue
        if opts.primary_domains and domain_matches(host, opts.primary_domains):
            doc.primary = True
        fresh_docs.append(doc)

    docs, also = collapse_duplicates(fresh_docs, decisions)
    trusted = ctx.settings.trusted_domains
    analysis = analyse(question)
    q_terms = list(analysis.terms)
    passages: list[Passage] = [p for d in docs for p in split_passages(d)]
    idf = bm25(passages, q_terms)
    rc = RankingContext(
        question=analysis,
        today=ctx.today,
        freshness_days=freshness_days,
        top=max((p.score for p in passages), default=0.0) or 1.0,
        idf={t: idf.get(t, max(idf.values(), default=0.0)) for t in q_terms},
        trusted=frozenset(d.url for d in docs if trusted and domain_matches(host_of(d.url), trusted)),
    )
    features = [passage_features(p, rc) for p in passages]
    lexical_features = reranked = None
    if reranker is not None and passages:
        reranked = _rerank(reranker, question, passages, rc.top, ctx)
    if reranked:
        lexical_features, rc = features, replace(rc, top=1.0)  # the blend is on a 0..1 scale
        # Only the lexical feature reads the (now blended) score: the others are the same as before.
        features = [(lexical_feature(p, rc), *f[1:]) for p, f in zip(passages, lexical_features)]
    return Candidates(docs, also, decisions, passages, features, rc, lexical_features, reranked or None)


def select_evidence(
    docs: list[Document],
    question: str,
    freshness_days: int,
    ctx: RunContext,
    *,
    per_doc_cap: int = MAX_PASSAGES_PER_DOC,
    count_headers: bool = True,
    reranker=None,
    scorer: PassageScorer | None = None,
) -> Selection:
    """`count_headers`: budget the text as the composer sees it (with its header line); /v1/context
    budgets the block text alone, which is what it returns."""
    opts = ctx.options
    cand = rank_candidates(docs, question, freshness_days, ctx, reranker=reranker)
    docs, also, decisions, passages = cand.docs, cand.also, cand.decisions, cand.passages
    q_terms = cand.ranking.question.terms
    scorer = scorer or HANDSET
    for p, f in zip(passages, cand.features):
        p.score = scorer.score(f)
    lexical = {id(p): scorer.score(f) for p, f in zip(passages, cand.lexical_features)} if cand.lexical_features else {}

    # One document per registrable domain: the best passage, plus the search ranking's view of the
    # whole page (a page ranked first for the question is usually about it, not one that mentions it).
    q_set = set(q_terms)
    about = {d.url: len(q_set & set(terms(d.title))) / max(1, len(q_set)) for d in docs}
    doc_score: dict[str, float] = {}
    for p in passages:
        # A page titled with what the question asks about is about it (a title-field boost).
        score = p.score + scorer.doc_rank_weight / (1 + p.doc.rank) + scorer.doc_title_weight * about[p.doc.url]
        doc_score[p.doc.url] = max(doc_score.get(p.doc.url, float("-inf")), score)
    by_domain: dict[str, list[Document]] = {}
    for d in sorted(docs, key=lambda d: -doc_score.get(d.url, float("-inf"))):
        by_domain.setdefault(d.domain, []).append(d)
    chosen_docs: set[str] = set()
    for domain, ranked in by_domain.items():
        quota = PRIMARY_DOCS_PER_DOMAIN if ranked[0].primary else 1
        for i, d in enumerate(ranked):
            if i < quota and d.url in doc_score:
                chosen_docs.add(d.url)
            else:
                decisions.append(SelectionDecision(d.url, "dropped", f"domain_quota:{domain}"))

    evidence: list[Evidence] = []
    per_doc: dict[str, int] = {}
    used = 0
    pool = [
        p for p in passages if p.doc.url in chosen_docs and p.score > scorer.min_score and not q_set.isdisjoint(p.terms)
    ]
    # Seats for the reranker's own head: a passage it ranks among its first few is offered before the
    # blended order, even when it shares no word with the question (the paraphrase BM25 cannot see).
    # Seats take at most half the span ceiling and half the token budget: the lexical head keeps room.
    seat_cap = min(ctx.settings.dense_evidence_seats, opts.max_evidence // 2)
    seats = [p for p in (cand.reranked or ()) if p.doc.url in chosen_docs and p.score > scorer.min_score][:seat_cap]
    seat_budget, seat_used = opts.token_budget // 2, 0
    seated = {id(p) for p in seats}
    blended = {id(p) for p in pool}  # where a seat that no longer fits may still compete
    pool = seats + [p for p in pool if id(p) not in seated]
    holding_seat = set(range(len(seats)))  # pool positions still offered ahead of the blended order
    # Greedy by score, discounted by what the page already lent: other pages get their turn. A heap of
    # (-discounted score, position, the page's count it was pushed with): a page's count only grows, so
    # an entry pushed with an older count is an upper bound, pushed again with the new one when it
    # surfaces; ties go to the earlier passage (the order of a linear scan).
    discount = scorer.same_doc_discount

    def key(i: int, lent: int) -> float:  # a seat's key comes before every blended score's
        return -(pool[i].score - discount * lent) - (SEAT_LEAD if i in holding_seat else 0.0)

    heap = [(key(i, 0), i, 0) for i in range(len(pool))]
    heapq.heapify(heap)
    while heap and len(evidence) < opts.max_evidence:
        _, i, seen = heapq.heappop(heap)
        p = pool[i]
        lent = per_doc.get(p.doc.url, 0)
        if lent != seen:
            heapq.heappush(heap, (key(i, lent), i, lent))
            continue
        if lent >= per_doc_cap:
            continue
        # Counted as rendered for the composer: text plus its header line (id, title, section, domain, date).
        header = f"{p.doc.title} {p.heading} {p.doc.domain}"
        extra = 0
        if count_headers:
            extra = count_tokens(ctx, header) + HEADER_OVERHEAD_TOKENS
        tokens = count_tokens(ctx, p.text) + extra
        if i in holding_seat and seat_used + tokens > seat_budget:
            holding_seat.discard(i)  # past the seats' share: back to the blended order, if it was there at all
            if id(p) in blended:
                heapq.heappush(heap, (key(i, lent), i, lent))
            continue
        if used + tokens > opts.token_budget:
            # Skip, not stop: a smaller block may still fit. Checked before the instruction scan,
            # which costs more than the count: once the budget is nearly full every passage left in
            # the pool would be scanned only to be skipped (a passage that would fit only once an
            # instruction is cut out of it is skipped too).
            continue
        text, planted = strip_instructions(p.text)
        if planted:
            decisions.append(SelectionDecision(p.doc.url, "edited", f"instructions_removed:{planted}"))
            tokens = count_tokens(ctx, text) + extra
        if not text.strip():
            continue
        used += tokens
        if i in holding_seat:
            seat_used += tokens
        per_doc[p.doc.url] = per_doc.get(p.doc.url, 0) + 1
        evidence.append(
            Evidence(
                span_id="",
                url=p.doc.url,
                title=p.doc.title,
                domain=p.doc.domain,
                text=text,
                published_at=p.doc.dates.published or p.doc.dates.modified,
                date_source=p.doc.dates.source,
                fetched_at=p.doc.fetched_at,
                score=round(p.score, SCORE_DIGITS),
                primary=p.doc.primary,
                tokens=tokens,
                also_reported_by=also.get(p.doc.url, []),
                section=p.heading,
                kind=p.kind,
                via=p.doc.via,
                modified_at=p.doc.dates.modified,
                lexical_score=round(lexical[id(p)], SCORE_DIGITS) if lexical else None,
            )
        )
    evidence.sort(key=lambda e: -e.score)  # best first, whatever order the same-page discount took them in
    for i, ev in enumerate(evidence, 1):
        ev.span_id = f"S{i}"
    for url in {e.url for e in evidence}:
        decisions.append(SelectionDecision(url, "kept", "evidence"))
    return Selection(evidence=evidence, decisions=decisions, prompt_tokens=used)


def prescan_instructions(doc: Document, stop: Callable[[], bool] = lambda: False) -> int:
    """Run the instruction scan over `doc`'s passages now, while its answer still waits on the network:
    select_evidence's scan of the passages it keeps then reads the scan's sentence memos
    (app/pipeline/injection.py) instead of running the models on the answer's critical path. Stops
    between passages once `stop()` says other work waits. Returns how many passages it scanned."""
    scanned = 0
    for p in split_passages(doc):
        if stop():
            break
        strip_instructions(p.text)
        scanned += 1
    return scanned


def _rerank(reranker, question: str, passages: list[Passage], top: float, ctx: RunContext) -> list[Passage]:
    """Blend the reranker's view into the top-k lexical scores (both scaled to 0..1) and return the
    passages it scored, its best first; empty when it had nothing to score (the scores stand)."""
    stored_only = getattr(reranker, "stored_only", False)
    # Passages whose vectors were computed offline cost nothing: all of them take part, not only the
    # lexical top k (the answer BM25 ranks 50th shares few words with the question, which is the case
    # the model is for).
    if stored_only:  # the MiniLM reranker under "auto" (app/providers/rerank/base.py)
        found = reranker.score_stored(question, [rerank_text(p.heading, p.text) for p in passages])
        head = [p for p, s in zip(passages, found) if s is not None]
        scores = [s for s in found if s is not None]
    else:
        k = ctx.settings.rerank_top_k
        ranked = sorted(passages, key=lambda p: -p.score)
        stored = getattr(reranker, "is_stored", None)
        head = ranked[:k] + ([p for p in ranked[k:] if stored(rerank_text(p.heading, p.text))] if stored else [])
        scores = reranker.score(question, [rerank_text(p.heading, p.text) for p in head]) if head else []
    if not head:
        return []  # nothing to rerank (a stored-only reranker and web pages): the lexical scores stand
    lo, hi = min(scores, default=0.0), max(scores, default=0.0)
    w = ctx.settings.reranker_weight
    head_set = {id(p) for p in head}
    for p in passages:
        if id(p) in head_set:
            p.score = (1 - w) * p.score / top
        else:  # outside the lexical top k: cut; a stored-only reranker leaves unstored passages' order
            p.score = (1 - w) * p.score / top if stored_only else 0.0
    for p, s in zip(head, scores):
        p.score += w * ((s - lo) / (hi - lo) if hi > lo else 1.0)
    order = sorted(range(len(head)), key=lambda i: -scores[i])  # stable: ties keep the passages' order
    return [head[i] for i in order]
