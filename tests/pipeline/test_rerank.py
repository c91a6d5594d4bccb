"""The reranker interface: a registered reranker (as a plugin would be) changes passage order."""

from __future__ import annotations

import threading

import pytest

from app.errors import GroundingError
from app.pipeline.select import select_evidence, select_evidence_off_loop
from app.providers.rerank.base import build_reranker, register_reranker
from app.settings import Settings
from app.state import load_builtin_providers
from app.tokens import TokenCounter
from tests.pipeline.helpers import TODAY, make_ctx, make_doc

PARAS = [
    "The Acme Cloud Pro plan includes unlimited projects and priority support for teams of any size.",
    "The Acme Cloud Pro plan costs $30 per month, the company announced in its pricing update.",
]


class PreferPrices:
    name = "prefer-prices"

    def score(self, question, passages):
        return [1.0 if "$" in p else 0.0 for p in passages]


def test_registered_reranker_reorders_passages():
    register_reranker("prefer-prices", lambda settings: PreferPrices())
    settings = Settings(reranker="prefer-prices")
    reranker = build_reranker(settings)
    docs = [
        make_doc("https://a.example/x", [PARAS[0]], published=TODAY, rank=0),
        make_doc("https://b.example/y", [PARAS[1]], published=TODAY, rank=1),
    ]
    ctx = make_ctx(min_sources=1)
    ctx.settings = settings
    ctx.tokens = TokenCounter(settings.tiktoken_cache_dir)
    plain = select_evidence(docs, "Acme Cloud Pro plan projects support", 30, ctx)
    reranked = select_evidence(docs, "Acme Cloud Pro plan projects support", 30, ctx, reranker=reranker)
    assert plain.evidence[0].url == "https://a.example/x"
    assert reranked.evidence[0].url == "https://b.example/y"


def test_auto_needs_stored_vectors_off_turns_it_off_and_unknown_names_fail_at_start(tmp_path):
    # "auto" (the default): the MiniLM model over stored passage vectors only, when both are installed.
    pytest.importorskip("numpy", reason="the `semantic` / `test` extra")
    load_builtin_providers()  # registers "minilm", as the service's start-up does
    auto = build_reranker(Settings())
    assert auto is not None and auto.name == "minilm" and auto.stored_only
    assert build_reranker(Settings(evidence_vectors_path=tmp_path / "none.npz", corpus_dir=tmp_path)) is None
    assert build_reranker(Settings(reranker="off")) is None
    assert build_reranker(Settings(reranker=None)) is None
    with pytest.raises(GroundingError):
        build_reranker(Settings(reranker="nope"))


def test_cross_encoder_needs_a_local_path():
    import app.providers.rerank.cross_encoder  # noqa: F401

    with pytest.raises(GroundingError, match="GA_RERANKER_PATH"):
        build_reranker(Settings(reranker="cross-encoder"))
    with pytest.raises(GroundingError, match="not a model directory"):
        build_reranker(Settings(reranker="cross-encoder", reranker_path="/nonexistent/model"))


class RecordsItsThread:
    name = "records-thread"

    def __init__(self):
        self.threads: list[str] = []

    def score(self, question, passages):
        self.threads.append(threading.current_thread().name)
        return [0.0 for _ in passages]


async def test_a_reranker_runs_off_the_event_loop():
    """A model reranker costs up to seconds of CPU: select runs in a worker thread when one is set,
    inline (no thread hop) when none is."""
    docs = [make_doc("https://a.example/x", [PARAS[0]], published=TODAY, rank=0)]
    ctx = make_ctx(min_sources=1)
    reranker = RecordsItsThread()
    with_model = await select_evidence_off_loop(docs, "Acme Cloud Pro plan", 30, ctx, reranker=reranker)
    assert reranker.threads and reranker.threads[0] != threading.main_thread().name
    plain = await select_evidence_off_loop(docs, "Acme Cloud Pro plan", 30, ctx)
    assert [e.url for e in plain.evidence] == [e.url for e in with_model.evidence]


class StoredOnly:
    """A reranker whose vectors for some texts were computed offline: those are free to score."""

    name = "stored-only"

    def __init__(self, stored_marker: str):
        self.marker = stored_marker
        self.asked: list[str] = []

    def is_stored(self, text):
        return self.marker in text

    def score(self, question, passages):
        self.asked.extend(passages)
        return [1.0 if self.marker in p else 0.0 for p in passages]


def test_stored_passages_beyond_the_lexical_top_k_are_reranked_too():
    # Ten passages that match the question's words and one that matches none of them: outside the
    # lexical top k, a reranker with that passage's stored vector still scores it.
    filler = [f"The Acme Cloud Pro plan note {i} covers projects and support for plan {i}." for i in range(10)]
    answer = "Invoices arrive monthly by card; STORED receipts go to the account owner."
    settings = Settings(reranker_weight=0.9, rerank_top_k=3)
    ctx = make_ctx(min_sources=1)
    ctx.settings = settings
    ctx.tokens = TokenCounter(settings.tiktoken_cache_dir)
    docs = [make_doc(f"https://s{i}.example/p", [p], published=TODAY, rank=i) for i, p in enumerate([*filler, answer])]
    reranker = StoredOnly("STORED")
    select_evidence(docs, "Acme Cloud Pro plan projects support billing", 30, ctx, reranker=reranker)
    assert any("STORED" in text for text in reranker.asked)
    unstored = StoredOnly("NOWHERE")
    select_evidence(docs, "Acme Cloud Pro plan projects support billing", 30, ctx, reranker=unstored)
    assert len(unstored.asked) == 3  # only the lexical top k, as before


class StoredVectors:
    """The shipped reranker's shape under "auto": every passage has a stored vector (stored_only)."""

    name = "stored-vectors"
    stored_only = True

    def __init__(self, best_marker: str):
        self.marker = best_marker

    def score_stored(self, question, texts):
        return [1.0 if self.marker in t else 0.1 for t in texts]


def _seat_case(seats: int, budget: int = 5000, long: int = 0):
    # Twelve passages that share the question's words, and the answer, which shares none of them
    # (a paraphrase): BM25 cannot see it, the reranker ranks it first.
    filler = [
        f"The Acme Cloud Pro plan note {i} covers projects and support for plan {i}. " * (1 + long) for i in range(12)
    ]
    answer = "Invoices arrive monthly by card; receipts go to the account owner."
    settings = Settings(dense_evidence_seats=seats)
    ctx = make_ctx(min_sources=1, token_budget=budget)
    ctx.settings = settings
    ctx.tokens = TokenCounter(settings.tiktoken_cache_dir)
    docs = [make_doc(f"https://s{i}.example/p", [p], published=TODAY, rank=i) for i, p in enumerate([*filler, answer])]
    return select_evidence(docs, "Acme Cloud Pro plan projects support", 30, ctx, reranker=StoredVectors("Invoices"))


def test_the_rerankers_first_passages_get_a_seat_even_sharing_no_word_with_the_question():
    without = _seat_case(seats=0)
    assert not any("Invoices" in e.text for e in without.evidence)  # a shared word was required
    seated = _seat_case(seats=1)
    assert any("Invoices" in e.text for e in seated.evidence)


def test_a_seat_is_offered_before_the_blended_order_when_the_budget_is_tight():
    # fillers of ~240 tokens (with their header line) and a budget of 256: room for one filler or the answer, not both; the
    # seated answer is offered first, so it is the one taken
    tight = _seat_case(seats=1, budget=256, long=11)
    assert ["Invoices" in e.text for e in tight.evidence] == [True]
    assert ["Invoices" in e.text for e in _seat_case(seats=0, budget=256, long=11).evidence] == [False]


def test_seats_take_at_most_half_the_span_ceiling_and_never_a_passage_under_the_floor():
    # Twelve passages the question's words match; the reranker likes two that share none: the answer,
    # and a cookie notice it scores at its floor (scaled to 0, so a blended score of 0).
    filler = [f"The Acme Cloud Pro plan note {i} covers projects and support for plan {i}." for i in range(12)]
    answer = "Invoices arrive monthly by card; receipts go to the account owner."
    cookie = "We use cookies to improve your experience on this site."
    settings = Settings(dense_evidence_seats=12)
    ctx = make_ctx(min_sources=1, max_evidence=2)
    ctx.settings = settings
    ctx.tokens = TokenCounter(settings.tiktoken_cache_dir)
    texts = [*filler, answer, cookie]
    docs = [make_doc(f"https://s{i}.example/p", [p], published=TODAY, rank=i) for i, p in enumerate(texts)]
    got = select_evidence(docs, "Acme Cloud Pro plan projects support", 30, ctx, reranker=StoredVectors("Invoices"))
    assert len(got.evidence) == 2
    assert sum("Invoices" in e.text for e in got.evidence) == 1  # one seat of a ceiling of two
    assert any("Acme Cloud Pro plan note" in e.text for e in got.evidence)  # the lexical head keeps room
    ctx = make_ctx(min_sources=1)
    ctx.settings, ctx.tokens = settings, TokenCounter(settings.tiktoken_cache_dir)
    wide = select_evidence(docs, "Acme Cloud Pro plan projects support", 30, ctx, reranker=StoredVectors("Invoices"))
    assert not any("cookies" in e.text for e in wide.evidence)
