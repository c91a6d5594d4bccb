"""The reranker interface: a registered reranker (as a plugin would be) changes passage order."""

from __future__ import annotations

import threading

import pytest

from app.errors import GroundingError
from app.pipeline.select import select_evidence, select_evidence_off_loop
from app.providers.rerank.base import build_reranker, register_reranker
from app.settings import Settings
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


def test_off_by_default_and_unknown_names_fail_at_start():
    assert build_reranker(Settings()) is None
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
