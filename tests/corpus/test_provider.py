"""The "local" search provider: protocol, filters, primary flag, documents, registry, errors."""
from __future__ import annotations

import json

import httpx
import pytest

from app.errors import ProviderLogicalError, ProviderTechnicalError
from app.providers.search.base import SearchProvider, SearchQuery, build_search_provider
from app.providers.search.local_corpus import LocalCorpusSearch
from app.settings import Settings

PY = "https://docs.python.org/3.11/"
DEBIAN = "https://sources.debian.org/src/python3.11/3.11.2-6%2Bdeb12u9/debian/changelog/"


@pytest.fixture(scope="module")
def provider(sample_index) -> LocalCorpusSearch:
    return LocalCorpusSearch(sample_index)  # shares the session index; never closed here


async def test_implements_the_protocol_and_returns_hits(provider, sample_dir):
    assert isinstance(provider, SearchProvider) and provider.name == "local"
    result = await provider.search(SearchQuery("what's new in Python 3.11", count=4), timeout=5)
    assert result.provider == "local" and result.query == "what's new in Python 3.11"
    assert len(result.hits) == 4 and result.elapsed_ms > 0
    first = result.hits[0]
    assert first.url == PY + "whatsnew/3.11.html"
    assert [h.rank for h in result.hits] == [0, 1, 2, 3]
    assert first.provider == "local" and first.primary
    # Hits come without their page (the search stage reads the chosen hits' pages): served byte for byte.
    assert first.raw_content is None and first.raw_content_type == "text/html"
    assert await provider.get_document(first.url) == (
        (sample_dir / "whatsnew" / "3.11.html").read_text(encoding="utf-8"), "text/html")
    assert "What’s New In Python 3.11" in first.title and first.snippet


async def test_include_and_exclude_domains(provider):
    q = "Python 3.11.0 release Matthias Klose"
    everywhere = await provider.search(SearchQuery(q, count=10), timeout=5)
    assert {h.url for h in everywhere.hits} >= {DEBIAN, PY + "whatsnew/changelog.html"}
    only_debian = await provider.search(SearchQuery(q, count=10, include_domains=["debian.org"]), timeout=5)
    assert [h.url for h in only_debian.hits] == [DEBIAN]
    assert only_debian.hits[0].raw_content_type == "text/plain" and not only_debian.hits[0].primary
    no_python = await provider.search(SearchQuery(q, count=10, exclude_domains=["python.org"]), timeout=5)
    assert [h.url for h in no_python.hits] == [DEBIAN]
    exact_host = await provider.search(
        SearchQuery(q, count=10, include_domains=["docs.python.org"], exclude_domains=["debian.org"]), timeout=5)
    assert exact_host.hits and all(h.url.startswith(PY) for h in exact_host.hits)
    # a look-alike domain is not a sub-domain
    none = await provider.search(SearchQuery(q, count=10, include_domains=["on.org"]), timeout=5)
    assert none.hits == []


async def test_service_wide_primary_domains_add_to_the_corpus_ones(sample_index):
    widened = LocalCorpusSearch(sample_index, primary_domains=["debian.org"])
    result = await widened.search(SearchQuery("Matthias Klose", count=10, include_domains=["debian.org"]), timeout=5)
    assert [h.primary for h in result.hits] == [True]


async def test_nothing_matches_gives_empty_hits(provider):
    result = await provider.search(SearchQuery("qwxzvbnm plokijuh", count=5), timeout=5)
    assert result.hits == []


async def test_get_document_serves_stored_pages(provider):
    content, content_type = await provider.get_document(PY + "library/tomllib.html#module-tomllib")
    assert content_type == "text/html" and "TOMLDecodeError" in content
    assert await provider.get_document(PY + "whatsnew/") == await provider.get_document(PY + "whatsnew/index.html")
    assert (await provider.get_document("http://docs.python.org/3.11/library/json.html"))[1] == "text/html"
    assert await provider.get_document("https://example.com/nothing.html") is None


async def test_timeout_is_a_technical_error(provider):
    with pytest.raises(ProviderTechnicalError):
        await provider.search(SearchQuery("python", count=5), timeout=0)


async def test_registry_factory_builds_from_settings(tmp_path):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "page.html").write_text("<title>Gannet</title><p>Gannets dive for fish.</p>")
    (tmp_path / "corpus" / "corpus.json").write_text(json.dumps(
        {"base_url": "https://seabirds.example.org/", "primary_domains": ["example.org"]}))
    settings = Settings(corpus_dir=tmp_path / "corpus", corpus_index_path=tmp_path / "idx" / "c.sqlite")
    async with httpx.AsyncClient() as client:
        provider = build_search_provider("local", settings, client)
    result = await provider.search(SearchQuery("gannets dive"), timeout=5)
    assert [(h.url, h.primary) for h in result.hits] == [("https://seabirds.example.org/page.html", True)]
    assert (tmp_path / "idx" / "c.sqlite").is_file()
    await provider.aclose()
    with pytest.raises(ProviderLogicalError):
        await provider.search(SearchQuery("gannets"), timeout=5)
    # a deployment may ship only the index file
    only_index = LocalCorpusSearch.open(tmp_path / "missing", tmp_path / "idx" / "c.sqlite")
    assert (await only_index.search(SearchQuery("gannets"), timeout=5)).hits
    await only_index.aclose()


async def test_the_search_stage_reads_only_the_pages_it_will_fetch(provider):
    # The provider answers without pages; search_all gives its hits among the first max_fetches
    # candidates a reader of their page (the fetch stage calls it only on an extraction-memo miss),
    # and no other hit either a page or a reader.
    from app.pipeline.search import search_all
    from tests.pipeline.helpers import make_ctx

    ctx = make_ctx(max_fetches=2)
    found = await search_all(
        ["json parse string", "pretty print JSON indent"], [provider], ctx, question="How do I parse JSON?", freshness_days=3650
    )
    assert len(found.candidates) > 2
    chosen, rest = found.candidates[:2], found.candidates[2:]
    for hit in chosen:
        assert hit.held and hit.raw_content is None and hit.raw_content_digest
        assert await hit.read_page() == await provider.get_document(hit.url)
    assert all(h.raw_content is None and h.read_page is None and not h.held for h in rest)
