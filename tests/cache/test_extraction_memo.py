"""The memo of extracted provider-held pages, and the per-document memos of selection (passage
skeletons, shingle sets): bounded by bytes, keyed by what the result depends on, never shared
mutable state between requests."""

from __future__ import annotations

from datetime import UTC, datetime

from app.cache.extraction_memo import ExtractionMemo
from app.domain.types import SearchHit, content_digest
from app.pipeline.passages import bm25, split_passages
from tests.pipeline.helpers import make_doc


def _hit(title: str = "T", published: datetime | None = None) -> SearchHit:
    return SearchHit(url="https://docs.example/p", title=title, snippet="", published_at=published)


def test_key_depends_on_content_url_hit_and_fallback():
    k = ExtractionMemo.key
    x, y = content_digest("<p>x</p>"), content_digest("<p>y</p>")
    base = k("https://docs.example/p", "text/html", x, _hit(), True)
    assert base == k("https://docs.example/p", "text/html", x, _hit(), True)
    assert base != k("https://docs.example/p", "text/html", y, _hit(), True)
    assert base != k("https://docs.example/q", "text/html", x, _hit(), True)
    assert base != k("https://docs.example/p", "text/plain", x, _hit(), True)
    assert base != k("https://docs.example/p", "text/html", x, _hit("Other"), True)
    assert base != k("https://docs.example/p", "text/html", x, _hit(published=datetime.now(UTC)), True)
    assert base != k("https://docs.example/p", "text/html", x, _hit(), False)


def test_the_corpus_names_each_document_by_the_digest_of_its_content(tmp_path):
    """The digest stored at indexing is the one the fetch stage would compute from the content
    (a provider without one, e.g. Tavily raw content): both reach the same memo entry."""
    from app.corpus.index import CorpusIndex

    (tmp_path / "page.html").write_text("<title>Ünïcode page</title><p>tomllib parses TOML ✓</p>", encoding="utf-8")
    index = CorpusIndex.build(tmp_path)
    hits = index.search("tomllib")
    assert hits and hits[0].digest == content_digest(hits[0].raw_content or "")


def test_a_page_that_extracted_to_nothing_is_remembered_as_such():
    memo = ExtractionMemo()
    assert memo.get("k") == (False, None)
    memo.put("k", None)
    assert memo.get("k") == (True, None)


def test_evicts_least_recently_used_past_the_byte_budget():
    doc = make_doc("https://a.example/1", ["x" * 1000])
    probe = ExtractionMemo()
    probe.put("a", doc)
    cost = probe.size_bytes
    memo = ExtractionMemo(max_bytes=2 * cost)
    memo.put("a", doc)
    memo.put("b", doc)
    assert memo.get("a")[0]  # a is now the most recently used
    memo.put("c", doc)
    assert memo.get("a")[0] and memo.get("c")[0] and not memo.get("b")[0]
    assert memo.size_bytes <= 2 * cost and len(memo) == 2
    tiny = ExtractionMemo(max_bytes=10)
    tiny.put("big", doc)  # larger than the whole budget: not kept
    assert not tiny.get("big")[0] and tiny.size_bytes == 0


def test_remembered_passages_are_fresh_objects_for_each_request():
    text = "Passage about tomllib parsing TOML files into dictionaries. " * 10
    doc = make_doc("https://a.example/1", [text, "Another paragraph about configuration. " * 8])
    first = split_passages(doc)
    bm25(first, ["tomllib"])
    again = split_passages(make_doc("https://b.example/2", [text, "Another paragraph about configuration. " * 8]))
    assert [p.text for p in again] == [p.text for p in first]
    assert [p.terms for p in again] == [p.terms for p in first]
    assert all(p.score == 0.0 for p in again) and any(p.score > 0 for p in first)
    assert all(p.doc.url == "https://b.example/2" for p in again)
    other = split_passages(make_doc("https://a.example/1", ["A different text entirely about sockets. " * 10]))
    assert other[0].text != first[0].text


def test_a_cached_search_result_keeps_the_content_digest():
    """Hits read back from the search cache still name their content: the fetch stage does not
    hash the whole page again on the repeated-question path."""
    from app.domain.types import SearchResult
    from app.pipeline.search import _decode, _encode

    hit = SearchHit(url="https://docs.example/p", title="T", raw_content_digest=content_digest("<p>x</p>"))
    restored = _decode(_encode(SearchResult(provider="local", query="q", hits=[hit]), object()))  # type: ignore[arg-type]
    assert restored.hits[0].raw_content_digest == content_digest("<p>x</p>")
