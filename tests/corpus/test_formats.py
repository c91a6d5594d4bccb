"""Indexing HTML, Markdown, text, gzipped pages and WARC files, with corpus.json mapping."""
from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from app.corpus.index import CorpusIndex

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Kestrel release notes | Example</title>
<script>var trackingword = "zebracorn";</script><style>.x{color:red}</style></head>
<body><nav>navigation menu quokkabar</nav><header>site header</header>
<main><h1>Kestrel 4.2 release notes</h1><p>Kestrel 4.2 adds the <code>flyaway</code> scheduler.</p>
<p>It was released on 3 March 2025.</p></main><footer>footer wombatish</footer></body></html>"""


def write_tree(root: Path) -> None:
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "kestrel.html").write_text(PAGE, encoding="utf-8")
    (root / "docs" / "guide.md").write_text("# Heron guide\n\nHerons wade in shallow water.\n", encoding="utf-8")
    (root / "notes.txt").write_text("Plover notes\nPlovers nest on gravel beaches.\n", encoding="utf-8")
    (root / "old.html.gz").write_bytes(gzip.compress(b"<html><head><title>Old egret page</title></head>"
                                                     b"<body><p>Egrets are white herons.</p></body></html>"))
    (root / "PROVENANCE.md").write_text("# Provenance\nmentions herons too\n", encoding="utf-8")
    (root / "image.png").write_bytes(b"\x89PNG not indexed")
    (root / "corpus.json").write_text(json.dumps({
        "base_url": "https://birds.example.org/manual",  # no trailing slash on purpose
        "primary_domains": ["example.org"],
        "exclude": ["PROVENANCE.md"],
        "documents": {"notes.txt": {"title": "Plover field notes"}},
    }), encoding="utf-8")
    (root / "mirror").mkdir()
    (root / "mirror" / "corpus.json").write_text(json.dumps({"base_url": "https://mirror.example.net/"}))
    (root / "mirror" / "copy.html").write_text("<title>Mirror</title><p>Herons mirrored</p>", encoding="utf-8")


def http_record(writer: WARCWriter, url: str, body: bytes, *, status: str = "200 OK",
                content_type: str = "text/html; charset=utf-8", rec_type: str = "response"):
    headers = StatusAndHeaders(status, [("Content-Type", content_type)], protocol="HTTP/1.1")
    return writer.create_warc_record(url, rec_type, payload=io.BytesIO(body), http_headers=headers)


def write_warc(path: Path) -> None:
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=path.name.endswith(".gz"))
        writer.write_record(http_record(writer, "https://news.example.com/ibis",
                                        b"<html><title>Ibis story</title><p>The ibis returned to the marsh.</p></html>"))
        writer.write_record(http_record(writer, "https://news.example.com/ibis-again",
                                        b"<p>ibis duplicate</p>"))
        writer.write_record(http_record(writer, "https://news.example.com/ibis",  # same URL again
                                        b"<html><title>Later copy</title><p>ibis later</p></html>"))
        writer.write_record(http_record(writer, "https://news.example.com/gone",
                                        b"<p>ibis gone</p>", status="404 Not Found"))
        writer.write_record(http_record(writer, "https://news.example.com/pic.png", b"ibis png",
                                        content_type="image/png"))
        writer.write_record(http_record(writer, "https://data.example.com/ibis.txt",
                                        "Ibis counts by year: 1,2,3 — ibis".encode(),
                                        content_type="text/plain"))


@pytest.fixture()
def tree_index(tmp_path):
    write_tree(tmp_path)
    index = CorpusIndex.build(tmp_path)
    yield index
    index.close()


def test_folder_urls_titles_and_types(tree_index):
    assert sorted(tree_index.urls()) == [
        "https://birds.example.org/manual/docs/guide.md",
        "https://birds.example.org/manual/docs/kestrel.html",
        "https://birds.example.org/manual/notes.txt",
        "https://birds.example.org/manual/old.html",
        "https://mirror.example.net/copy.html",
    ]
    md = tree_index.search("herons wade")[0]  # AND match first; OR fills up with other herons
    assert md.title == "Heron guide" and md.content_type == "text/plain" and md.primary
    [txt] = tree_index.search("plovers gravel")
    assert txt.title == "Plover field notes"
    [gz] = tree_index.search("egrets")
    assert gz.title == "Old egret page" and gz.content_type == "text/html"
    [mirror] = tree_index.search("mirrored")
    assert not mirror.primary  # the sub-folder's corpus.json has no primary domains


def test_html_boilerplate_is_not_indexed_but_raw_is_kept(tree_index):
    for word in ("zebracorn", "quokkabar", "wombatish"):
        assert tree_index.search(word) == []
    [hit] = tree_index.search("flyaway scheduler")
    assert hit.title == "Kestrel release notes | Example"
    assert hit.raw_content == PAGE  # served exactly as stored
    assert "flyaway scheduler" in hit.snippet and "zebracorn" not in hit.snippet
    assert tree_index.get_document("https://birds.example.org/manual/docs/kestrel.html#x") == (PAGE, "text/html")


@pytest.mark.parametrize("name", ["crawl.warc", "crawl.warc.gz"])
def test_warc_response_records(tmp_path, name):
    warc = tmp_path / name
    write_warc(warc)
    index = CorpusIndex.build(warc)
    try:
        assert sorted(index.urls()) == [
            "https://data.example.com/ibis.txt",
            "https://news.example.com/ibis",
            "https://news.example.com/ibis-again",
        ]
        hits = index.search("ibis", count=10)
        first = next(h for h in hits if h.url == "https://news.example.com/ibis")
        assert first.title == "Ibis story"  # the first record of a URL wins
        text = next(h for h in hits if h.url.endswith(".txt"))
        assert text.content_type == "text/plain" and "counts by year" in text.raw_content
    finally:
        index.close()


def test_warc_inside_a_folder_takes_primary_domains_from_corpus_json(tmp_path):
    write_warc(tmp_path / "crawl.warc.gz")
    (tmp_path / "corpus.json").write_text(json.dumps({"primary_domains": ["data.example.com"]}))
    index = CorpusIndex.build(tmp_path)
    try:
        flags = {h.url: h.primary for h in index.search("ibis", count=10)}
        assert flags == {"https://data.example.com/ibis.txt": True,
                         "https://news.example.com/ibis": False,
                         "https://news.example.com/ibis-again": False}
    finally:
        index.close()


def test_folder_without_manifest_uses_file_uris(tmp_path):
    (tmp_path / "a.txt").write_text("Lonely sandpiper\n", encoding="utf-8")
    index = CorpusIndex.build(tmp_path)
    try:
        [hit] = index.search("sandpiper")
        assert hit.url == (tmp_path / "a.txt").resolve().as_uri() and not hit.primary
    finally:
        index.close()
