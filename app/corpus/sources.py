"""Walk a corpus (a folder, or one WARC file) and yield indexable documents."""
from __future__ import annotations

import gzip
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from warcio.archiveiterator import ArchiveIterator

from app.corpus.domains import is_primary
from app.corpus.manifest import CorpusManifest
from app.corpus.text import PageText, Passage, decode_html, html_text, plain_text

log = logging.getLogger(__name__)

HTML_SUFFIXES = (".html", ".htm")
TEXT_SUFFIXES = (".txt", ".md", ".markdown")
WARC_SUFFIXES = (".warc", ".warc.gz")
MAX_DOCUMENT_BYTES = 20_000_000  # larger records are skipped: not pages anyone reads whole


@dataclass(slots=True)
class CorpusDocument:
    url: str
    title: str
    heading: str
    passages: list[Passage]
    raw: str  # the stored document, served as is
    content_type: str  # "text/html" | "text/plain"
    primary: bool
    origin: str  # file path relative to the corpus root, or "<warc>#<offset>"


def kind_of(path: Path) -> str | None:
    """"html" | "text" | "warc" | None for a file name (a trailing .gz is looked through)."""
    name = path.name.lower()
    if name.endswith(WARC_SUFFIXES):
        return "warc"
    inner = name.removesuffix(".gz")
    if inner.endswith(HTML_SUFFIXES):
        return "html"
    if inner.endswith(TEXT_SUFFIXES):
        return "text"
    return None


def walk_files(root: Path) -> Iterator[tuple[Path, CorpusManifest]]:
    """Every indexable file under root, with the manifest that governs it, in a stable order."""
    if root.is_file():
        manifest = CorpusManifest.load(root.parent) or CorpusManifest(root=root.parent)
        if kind_of(root):
            yield root, manifest
        return
    stack: list[tuple[Path, CorpusManifest]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        folder = Path(dirpath)
        while stack and not folder.is_relative_to(stack[-1][0]):
            stack.pop()
        own = CorpusManifest.load(folder)
        if own is not None:
            stack.append((folder, own))
        manifest = stack[-1][1] if stack else CorpusManifest(root=root)
        for name in sorted(filenames):
            path = folder / name
            if kind_of(path) and not manifest.excluded(path):
                yield path, manifest


def fingerprint(root: Path) -> list[tuple[str, int, int]]:
    """(relative path, size, mtime_ns) of every file under root: an on-disk index is reused only
    when this is unchanged."""
    if root.is_file():
        st = root.stat()
        return [(root.name, st.st_size, st.st_mtime_ns)]
    out = []
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            st = path.stat()
            out.append((path.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns))
    return sorted(out)


def iter_documents(root: Path) -> Iterator[CorpusDocument]:
    for path, manifest in walk_files(root):
        kind = kind_of(path)
        try:
            if kind == "warc":
                yield from _warc_documents(path, manifest)
            else:
                doc = _file_document(path, manifest, kind or "text")
                if doc is not None:
                    yield doc
        except (OSError, ValueError, EOFError) as exc:  # one bad file must not sink the corpus
            log.warning("corpus: skipped %s: %s", path, exc)


def _file_document(path: Path, manifest: CorpusManifest, kind: str) -> CorpusDocument | None:
    data = path.read_bytes()
    if path.name.lower().endswith(".gz"):
        data = gzip.decompress(data)
    if len(data) > MAX_DOCUMENT_BYTES:
        log.warning("corpus: skipped %s: %d bytes", path, len(data))
        return None
    url = manifest.url_for(path)
    if kind == "html":
        raw = decode_html(data)
        page = html_text(raw)
        content_type = "text/html"
    else:
        raw = data.decode("utf-8", errors="replace")
        is_md = path.name.lower().removesuffix(".gz").endswith((".md", ".markdown"))
        page = plain_text(raw, fallback_title=path.name, markdown=is_md)
        content_type = "text/plain"
    title = manifest.title_for(path)
    if title:
        page = PageText(title=title, heading=title, passages=page.passages)
    return CorpusDocument(
        url=url,
        title=page.title,
        heading=page.heading,
        passages=page.passages,
        raw=raw,
        content_type=content_type,
        primary=is_primary(url, manifest.primary_domains),
        origin=manifest.relative(path) if path.is_relative_to(manifest.root) else str(path),
    )


def _warc_documents(path: Path, manifest: CorpusManifest) -> Iterator[CorpusDocument]:
    """Response records answered 200 with text/html or text/plain; URL = WARC-Target-URI."""
    with path.open("rb") as stream:
        records = ArchiveIterator(stream)
        for record in records:
            if record.rec_type != "response" or record.http_headers is None:
                continue
            if record.http_headers.get_statuscode() != "200":
                continue
            media, _, params = (record.http_headers.get_header("Content-Type") or "").partition(";")
            media = media.strip().lower()
            if media not in ("text/html", "text/plain"):
                continue
            url = record.rec_headers.get_header("WARC-Target-URI") or ""
            if not url.startswith(("http://", "https://")):
                continue
            data = record.content_stream().read(MAX_DOCUMENT_BYTES + 1)
            if len(data) > MAX_DOCUMENT_BYTES:
                continue
            charset = None
            for param in params.split(";"):
                key, _, value = param.partition("=")
                if key.strip().lower() == "charset" and value.strip():
                    charset = value.strip().strip("\"'")
            if media == "text/html":
                raw = decode_html(data, charset)
                page = html_text(raw)
            else:
                raw = decode_html(data, charset or "utf-8")
                page = plain_text(raw, fallback_title=url)
            yield CorpusDocument(
                url=url,
                title=page.title,
                heading=page.heading,
                passages=page.passages,
                raw=raw,
                content_type=media,
                primary=is_primary(url, manifest.primary_domains),
                origin=f"{path.name}#{records.get_record_offset()}",
            )
