"""Dense retrieval over the corpus (app/corpus/dense.py) and its fusion with BM25 in the "local"
provider. A small deterministic encoder stands in for the model here (a text's vector is the sum of
its words' topic vectors, so "snake" and "python" share one); tests/providers/test_minilm.py runs the
real model and the shipped vectors."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy", reason="the `semantic` / `test` extra")

from app.corpus.dense import DenseIndex, build_vectors, fuse, host_allowed  # noqa: E402
from app.corpus.index import CorpusIndex  # noqa: E402
from app.providers.search.base import SearchQuery  # noqa: E402
from app.providers.search.local_corpus import LocalCorpusSearch  # noqa: E402

TOPICS = {"snake": 0, "python": 0, "reptile": 0, "serpent": 0, "comedy": 1, "monty": 1, "troupe": 1, "kettle": 2}


class TopicEncoder:
    """Unit vectors over three topics; counts the texts it embeds."""

    def __init__(self) -> None:
        self.embedded = 0

    def embed(self, texts: list[str]):
        self.embedded += len(texts)
        out = np.zeros((len(texts), 4), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().replace(".", " ").replace("?", " ").split():
                out[i, TOPICS.get(word, 3)] += 1.0 if word in TOPICS else 0.05
        return out / np.linalg.norm(out, axis=1, keepdims=True)


PAGES = {
    "name.html": (
        "Why the name",
        "The language takes its name from a British comedy troupe, Monty's group, not from a reptile.",
    ),
    "kettle.html": ("Kettles", "A kettle boils water. Kettle kettle kettle: descaling every month keeps it working."),
    "intro.html": ("Introduction", "An introduction to the interpreter, its prompt and its command line options."),
}


@pytest.fixture()
def corpus(tmp_path):
    (tmp_path / "corpus.json").write_text('{"title": "t", "base_url": "https://docs.example.org/"}')
    for name, (title, text) in PAGES.items():
        (tmp_path / name).write_text(
            f"<html><head><title>{title}</title></head><body><h1>{title}</h1><p>{text}</p></body></html>"
        )
    index = CorpusIndex.build(tmp_path)
    yield tmp_path, index
    index.close()


def test_fusion_keeps_lexical_agreement_first_and_adds_what_only_the_embedding_found():
    assert fuse(["a", "b", "c"], ["b", "x", "a"]) == ["b", "a", "x", "c"]  # both legs' 1st and 2nd lead
    fused = fuse(["a", "b", "c"], ["x"])
    assert fused[0] == "a" and "x" in fused and fused.index("x") < fused.index("c")


def test_host_rule_is_the_lexical_legs():
    assert host_allowed("docs.python.org", ["python.org"], [])
    assert not host_allowed("docs.python.org", ["example.org"], [])
    assert not host_allowed("docs.python.org", [], ["python.org"])
    assert host_allowed("docs.python.org", [], [])
    assert not host_allowed("notpython.org", ["python.org"], [])


def test_vectors_are_built_once_and_reused(corpus, tmp_path_factory):
    _, index = corpus
    path = tmp_path_factory.mktemp("vectors") / "v.npz"
    encoder = TopicEncoder()
    assert build_vectors(index, encoder, path) == (len(PAGES), 0)
    assert build_vectors(index, encoder, path) == (0, len(PAGES))  # nothing embedded the second time
    assert encoder.embedded == len(PAGES)


async def test_a_page_sharing_no_word_with_the_query_is_found(corpus, tmp_path_factory):
    _, index = corpus
    path = tmp_path_factory.mktemp("vectors") / "v.npz"
    build_vectors(index, TopicEncoder(), path)
    dense = DenseIndex.load(index, path)
    assert dense is not None and len(dense.rowids) == len(PAGES)
    query = SearchQuery("is the snake the reason", count=1)
    lexical_only = await LocalCorpusSearch(index).search(query, timeout=5)
    assert not any(h.url.endswith("name.html") for h in lexical_only.hits)  # BM25: no shared word
    hybrid = LocalCorpusSearch(index, dense=dense, encoder=TopicEncoder())
    found = await hybrid.search(query, timeout=5)
    assert [h.url.rsplit("/", 1)[-1] for h in found.hits] == ["name.html"]
    assert found.hits[0].snippet.startswith("The language takes its name")
    excluded = await hybrid.search(
        SearchQuery("is the snake the reason", count=1, exclude_domains=[found.hits[0].url.split("/")[2]]), timeout=5
    )
    assert excluded.hits == []


def test_vectors_of_another_corpus_leave_dense_retrieval_off(corpus, tmp_path_factory, tmp_path):
    _, index = corpus
    other = tmp_path_factory.mktemp("other")
    (other / "a.html").write_text(
        "<html><body><h1>Other</h1><p>Entirely different text about kettles.</p></body></html>"
    )
    other_index = CorpusIndex.build(other)
    path = tmp_path_factory.mktemp("vectors") / "v.npz"
    build_vectors(other_index, TopicEncoder(), path)
    other_index.close()
    assert DenseIndex.load(index, path) is None
    assert DenseIndex.load(index, path.with_name("missing.npz")) is None


def _evidence_of(question: str, **settings) -> list[dict]:
    import httpx

    from simulators import ServiceServer

    with ServiceServer(redis_url=None, **settings) as svc, httpx.Client(base_url=svc.url, timeout=60) as client:
        body = {"model": "m", "messages": [{"role": "user", "content": question}], "grounding": {"cache": "bypass"}}
        reply = client.post("/v1/chat/completions", json=body)
        assert reply.status_code == 200
        trace = client.get(f"/v1/traces/{reply.json()['grounding']['request_id']}")
        return trace.json()["evidence"]


def test_the_embedded_default_finds_evidence_that_shares_no_word_with_the_question():
    # "named after the snake" shares no content word with the FAQ's "named after ... Monty Python".
    # With the shipped passage vectors (dense retrieval + the auto reranker) the FAQ page reaches the
    # composer; with BM25 alone it does not.
    question = "Is the language actually named after the snake?"
    with_vectors = _evidence_of(question)
    assert any("Monty Python" in e["text"] for e in with_vectors)
    assert all(e["lexical_score"] is not None for e in with_vectors)  # the reranker ran
    lexical = _evidence_of(question, corpus_dense="off", reranker="off")
    assert not any("Monty Python" in e["text"] for e in lexical)
    assert all(e["lexical_score"] is None for e in lexical)
