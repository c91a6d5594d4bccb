"""The shipped sample corpus: size budget, provenance, URL mapping, start-up indexing time."""
from __future__ import annotations

import json

from app.corpus.index import CorpusIndex

SIZE_BUDGET = 10 * 1024 * 1024


def test_sample_corpus_stays_under_10_mb(sample_dir):
    total = sum(p.stat().st_size for p in sample_dir.rglob("*") if p.is_file())
    assert 1_000_000 < total < SIZE_BUDGET, total


def test_sample_corpus_has_provenance_and_licence(sample_dir):
    provenance = (sample_dir / "PROVENANCE.md").read_text(encoding="utf-8")
    assert "python3.11-doc" in provenance and "3.11.2-6+deb12u9" in provenance
    assert "apt-get download python3.11-doc" in provenance
    assert "PSF" in (sample_dir / "COPYRIGHT.debian").read_text(encoding="utf-8")
    manifest = json.loads((sample_dir / "corpus.json").read_text(encoding="utf-8"))
    assert manifest["base_url"] == "https://docs.python.org/3.11/"
    assert manifest["primary_domains"] == ["python.org"]


def test_sample_urls_are_canonical(sample_index):
    urls = sample_index.urls()
    assert "https://docs.python.org/3.11/whatsnew/3.11.html" in urls
    # Debian ships the changelog gzipped; its URL drops the .gz
    assert "https://docs.python.org/3.11/whatsnew/changelog.html" in urls
    assert all(u.startswith(("https://docs.python.org/3.11/", "https://sources.debian.org/")) for u in urls)
    # metadata files are not documents
    assert not any(u.endswith((".md", "corpus.json", ".debian")) for u in urls)
    assert 50 <= len(urls) <= 80


def test_sample_indexes_and_reports_how_long_it_took(sample_dir):
    # How long is a figure, not a test (it depends on the machine): the build reports it, the
    # service logs it at start-up ("corpus: indexed N documents ... in N ms").
    index = CorpusIndex.build(sample_dir)
    stats = index.stats
    index.close()
    assert stats.documents >= 50 and stats.build_ms > 0 and not stats.reused and stats.path == ":memory:"
