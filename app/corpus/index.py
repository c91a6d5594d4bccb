"""SQLite FTS5 index over a corpus: build (in memory or on disk, reused while the files are
unchanged), search with bm25 and serve the stored documents.

Pages are indexed as passages (sections, long ones in windows; see app/corpus/text.py). A page ranks
by its best passage, and its snippet comes from that passage: in a 4 MB changelog the few words that
answer are found and shown, instead of the page being drowned by its own length.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from app.corpus.coverage import fts_tokens, held, query_phrases
from app.corpus.domains import host_of
from app.corpus.query import parse_query
from app.corpus.sources import fingerprint, iter_documents
from app.domain.types import content_digest
from app.errors import GroundingError

log = logging.getLogger(__name__)

SCHEMA_VERSION = "4"  # 3: passage_terms (stemmed tokens for the coverage bonuses); 4: docs.digest
# bm25 column weights: page <h1>, section heading, passage text.
TITLE_WEIGHT = 4.0
SECTION_WEIGHT = 4.0
BODY_WEIGHT = 1.0
PASSAGES_PER_DOC = 8  # passages fetched per wanted page before keeping each page's best
# bm25 gives words found on most pages ("python", "new" in Python's docs) almost no weight, so on a
# small corpus "what's new in Python 3.11" ties across pages. A bonus for the share of query terms
# found in the page or section heading breaks such ties toward the part that is about the question.
HEADING_COVERAGE_BONUS = 4.0
# Likewise for the share of query terms in the passage text itself: a passage holding all the words
# of the question beats a shorter one holding a single word.
BODY_COVERAGE_BONUS = 4.0
CANDIDATE_PASSAGES = 4  # best passages per page that compete for being the page's best
RERANK_POOL = 30  # candidates fetched per query for that rerank
SNIPPET_TOKENS = 48  # ~300 characters of English
SNIPPET_MAX_CHARS = 320

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE docs(
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    host TEXT NOT NULL,
    primary_flag INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    origin TEXT NOT NULL,
    raw TEXT NOT NULL,
    digest TEXT NOT NULL
);
CREATE VIRTUAL TABLE passages USING fts5(
    doc_id UNINDEXED, title, section, body, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE passage_terms(
    id INTEGER PRIMARY KEY,  -- the passage's FTS rowid
    title TEXT NOT NULL,
    section TEXT NOT NULL,
    body TEXT NOT NULL
);
"""


@dataclass(slots=True)
class CorpusHit:
    url: str
    title: str
    snippet: str
    score: float  # bm25, lower is better
    primary: bool
    content_type: str
    raw_content: str | None  # None when searched with_content=False
    host: str
    digest: str = ""  # SHA-256 of raw's UTF-8, made at indexing: names the content without reading it


@dataclass(slots=True)
class IndexStats:
    documents: int
    build_ms: float
    reused: bool
    path: str  # ":memory:" or the file


class CorpusIndex:
    """Thread-safe: one connection guarded by a lock (queries take milliseconds)."""

    def __init__(self, conn: sqlite3.Connection, stats: IndexStats):
        self._conn = conn
        self._lock = threading.Lock()
        self.stats = stats

    # --- building / opening -------------------------------------------------------------------

    @classmethod
    def build(cls, source: Path, index_path: Path | None = None) -> "CorpusIndex":
        """Index a folder (or one WARC / page file). With index_path, reuse that file when it was
        built from the same files (paths, sizes, mtimes); otherwise rebuild it atomically."""
        source = Path(source)
        if not source.exists():
            raise GroundingError(f"corpus source {source} does not exist")
        started = time.perf_counter()
        stamp = _fingerprint_digest(source)
        if index_path is not None:
            index_path = Path(index_path)
            reused = _open_if_current(index_path, stamp)
            if reused is not None:
                count = reused.execute("SELECT count(*) FROM docs").fetchone()[0]
                ms = (time.perf_counter() - started) * 1000
                return cls(reused, IndexStats(count, ms, True, str(index_path)))
            index_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = index_path.with_name(f"{index_path.name}.{os.getpid()}.tmp")
            tmp.unlink(missing_ok=True)
            conn = sqlite3.connect(tmp)
            count = _fill(conn, source, stamp)
            conn.close()
            os.replace(tmp, index_path)
            conn = _connect_readonly(index_path)
            where = str(index_path)
        else:
            conn = sqlite3.connect(":memory:", check_same_thread=False)
            count = _fill(conn, source, stamp)
            where = ":memory:"
        ms = (time.perf_counter() - started) * 1000
        log.info("corpus: indexed %d documents from %s in %.0f ms", count, source, ms)
        return cls(conn, IndexStats(count, ms, False, where))

    @classmethod
    def open(cls, index_path: Path) -> "CorpusIndex":
        """Open a prebuilt index file as is (no check against its source files)."""
        index_path = Path(index_path)
        if not index_path.is_file():
            raise GroundingError(f"corpus index {index_path} does not exist")
        conn = _connect_readonly(index_path)
        try:
            version = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            count = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise GroundingError(f"{index_path} is not a corpus index: {exc}") from exc
        if not version or version[0] != SCHEMA_VERSION:
            conn.close()
            raise GroundingError(f"{index_path} has index schema {version}, expected {SCHEMA_VERSION}")
        return cls(conn, IndexStats(count, 0.0, True, str(index_path)))

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # --- reading --------------------------------------------------------------------------------

    def search(
        self,
        text: str,
        *,
        count: int = 10,
        include_domains: list[str] | tuple[str, ...] = (),
        exclude_domains: list[str] | tuple[str, ...] = (),
        with_content: bool = True,
    ) -> list[CorpusHit]:
        """All query words first (AND); when that finds fewer than `count`, fill up with pages
        holding any of them (OR), ranked after the AND hits. `with_content=False`: hits without the
        stored page (raw_content None; get_document reads it when it is needed)."""
        parsed = parse_query(text)
        if parsed.empty or count <= 0:
            return []
        where, params = _domain_filter(include_domains, exclude_domains)
        pool = max(count, RERANK_POOL)
        ranked = self._ranked(parsed.terms, self._match(parsed.all_of(), where, params, pool))[:count]
        if len(ranked) < count and len(parsed.terms) > 1:
            seen = {doc_id for doc_id, _, _ in ranked}  # (doc_id, passage rowid, score)
            extra = [r for r in self._match(parsed.any_of(), where, params, pool) if r[0] not in seen]
            ranked += self._ranked(parsed.terms, extra)[: count - len(ranked)]
        if not ranked:
            return []
        details = self._details(parsed.any_of(), [rowid for _, rowid, _ in ranked], with_content)
        hits = []
        for _doc_id, rowid, score in ranked:
            url, title, host, primary, content_type, raw, digest, snippet = details[rowid]
            hits.append(CorpusHit(url=url, title=title, snippet=_trim(snippet), score=score,
                                  primary=bool(primary), content_type=content_type,
                                  raw_content=raw, host=host, digest=digest))
        return hits

    def get_document(self, url: str) -> tuple[str, str] | None:
        """(content, content_type) of a stored URL; tolerant of fragments, http/https and the
        "dir/" vs "dir/index.html" spellings."""
        with self._lock:
            for candidate in _url_variants(url):
                row = self._conn.execute(
                    "SELECT raw, content_type FROM docs WHERE url = ?", (candidate,)
                ).fetchone()
                if row:
                    return row[0], row[1]
        return None

    def passage_texts(self) -> list[tuple[int, int, str, str, str]]:
        """(rowid, doc_id, title, section, body) of every passage, in rowid order (app/corpus/dense.py)."""
        with self._lock:
            return self._conn.execute(
                "SELECT rowid, doc_id, title, section, body FROM passages ORDER BY rowid"
            ).fetchall()

    def doc_hosts(self) -> dict[int, str]:
        with self._lock:
            return dict(self._conn.execute("SELECT id, host FROM docs").fetchall())

    def hits_for(self, rows: list[tuple[int, int, float]], *, with_content: bool = True) -> list[CorpusHit]:
        """Hits for (doc_id, passage rowid, score) rows found without an FTS match (the dense leg):
        the snippet is the opening of the passage, after its section heading."""
        if not rows:
            return []
        marks = ",".join("?" * len(rows))
        raw = "d.raw" if with_content else "NULL"
        with self._lock:
            found = self._conn.execute(
                f"SELECT p.rowid, d.url, d.title, d.host, d.primary_flag, d.content_type, {raw}, d.digest, "
                f"p.section, p.body FROM passages p JOIN docs d ON d.id = p.doc_id WHERE p.rowid IN ({marks})",
                [rowid for _, rowid, _ in rows],
            ).fetchall()
        by_rowid = {r[0]: r[1:] for r in found}
        hits = []
        for _doc_id, rowid, score in rows:
            if rowid not in by_rowid:
                continue
            url, title, host, primary, ctype, content, digest, section, body = by_rowid[rowid]
            hits.append(CorpusHit(url=url, title=title, snippet=_section_led(section, title, _trim(body)),
                                  score=score, primary=bool(primary), content_type=ctype,
                                  raw_content=content, host=host, digest=digest))
        return hits

    def urls(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._conn.execute("SELECT url FROM docs ORDER BY id")]

    def _match(self, expression: str, where: str, params: list, limit: int) -> list[tuple[int, int, float]]:
        """(doc_id, passage rowid, bm25): up to CANDIDATE_PASSAGES passages of up to `limit` pages."""
        sql = (
            "SELECT p.doc_id, p.rowid, "
            f"bm25(passages, 0, {TITLE_WEIGHT}, {SECTION_WEIGHT}, {BODY_WEIGHT}) AS score "
            "FROM passages p JOIN docs d ON d.id = p.doc_id "
            f"WHERE passages MATCH ? {where} ORDER BY score LIMIT ?"
        )
        per_doc: dict[int, int] = {}
        out: list[tuple[int, int, float]] = []
        with self._lock:
            found = self._conn.execute(sql, [expression, *params, limit * PASSAGES_PER_DOC])
            for doc_id, rowid, score in found:
                seen = per_doc.get(doc_id, 0)
                if seen == 0 and len(per_doc) == limit:
                    continue
                if seen < CANDIDATE_PASSAGES:
                    per_doc[doc_id] = seen + 1
                    out.append((doc_id, rowid, score))
        return out

    def _ranked(self, terms: list[str], rows: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
        """One row per page, its best passage by bm25 minus the bonuses for the share of query
        terms in the headings and in the passage text; best page first."""
        if not rows:
            return rows
        rowids = [rowid for _, rowid, _ in rows]
        marks = ",".join("?" * len(rowids))
        with self._lock:
            stored = self._conn.execute(
                f"SELECT id, title, section, body FROM passage_terms WHERE id IN ({marks})", rowids
            ).fetchall()
        # Which query terms each passage holds, from the stems stored at build time
        # (app/corpus/coverage.py): one query, instead of one FTS5 MATCH per term and column.
        phrases = query_phrases(terms)
        in_heading: dict[int, int] = dict.fromkeys(rowids, 0)
        in_body: dict[int, int] = dict.fromkeys(rowids, 0)
        for rowid, title, section, body in stored:
            in_heading[rowid] = held(phrases, title, section)
            in_body[rowid] = held(phrases, body)
        n = len(terms)
        best: dict[int, tuple[int, int, float]] = {}
        for doc_id, rowid, score in rows:
            score -= (HEADING_COVERAGE_BONUS * in_heading[rowid] + BODY_COVERAGE_BONUS * in_body[rowid]) / n
            if doc_id not in best or score < best[doc_id][2]:
                best[doc_id] = (doc_id, rowid, score)
        return sorted(best.values(), key=lambda row: row[2])

    def _details(self, expression: str, rowids: list[int], with_content: bool = True) -> dict[int, tuple]:
        """Stored fields of the final hits and a snippet of each one's best passage."""
        marks = ",".join("?" * len(rowids))
        raw = "d.raw" if with_content else "NULL"
        sql = (
            f"SELECT p.rowid, d.url, d.title, d.host, d.primary_flag, d.content_type, {raw}, d.digest, "
            f"snippet(passages, 3, '', '', ' … ', {SNIPPET_TOKENS}), p.section "
            "FROM passages p JOIN docs d ON d.id = p.doc_id "
            f"WHERE passages MATCH ? AND p.rowid IN ({marks})"
        )
        with self._lock:
            rows = self._conn.execute(sql, [expression, *rowids]).fetchall()
        # The section heading leads the snippet: "Release date: 2022-10-24" alone does not say
        # which release it is about.
        return {
            rowid: (url, title, host, primary, ctype, raw, digest, _section_led(section, title, snippet))
            for rowid, url, title, host, primary, ctype, raw, digest, snippet, section in rows
        }


# --- helpers ------------------------------------------------------------------------------------


def _fill(conn: sqlite3.Connection, source: Path, stamp: str) -> int:
    conn.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" + _SCHEMA)
    count = 0
    next_rowid = 1
    with conn:
        for doc in iter_documents(source):
            cur = conn.execute(
                "INSERT OR IGNORE INTO docs(url, title, host, primary_flag, content_type, origin, raw, digest)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (doc.url, doc.title, host_of(doc.url), int(doc.primary), doc.content_type,
                 doc.origin, doc.raw, content_digest(doc.raw)),
            )
            if cur.rowcount == 0:  # the same URL twice (e.g. re-crawled in a WARC): first wins
                log.info("corpus: duplicate URL %s from %s ignored", doc.url, doc.origin)
                continue
            rows = [(doc.heading, p.section, p.text) for p in doc.passages] or [(doc.heading, "", "")]
            first = next_rowid
            next_rowid += len(rows)
            conn.executemany(
                "INSERT INTO passages(rowid, doc_id, title, section, body) VALUES (?, ?, ?, ?, ?)",
                [(first + i, cur.lastrowid, *row) for i, row in enumerate(rows)],
            )
            title_terms = fts_tokens(doc.heading)
            conn.executemany(
                "INSERT INTO passage_terms(id, title, section, body) VALUES (?, ?, ?, ?)",
                [(first + i, title_terms, fts_tokens(sec), fts_tokens(text))
                 for i, (_, sec, text) in enumerate(rows)],
            )
            count += 1
        conn.execute("INSERT INTO passages(passages) VALUES ('optimize')")
        conn.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?)",
            [("schema", SCHEMA_VERSION), ("fingerprint", stamp), ("source", str(source.resolve()))],
        )
    return count


def _fingerprint_digest(source: Path) -> str:
    payload = json.dumps([SCHEMA_VERSION, str(source.resolve()), fingerprint(source)])
    return hashlib.sha256(payload.encode()).hexdigest()


def _connect_readonly(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)


def _open_if_current(path: Path, stamp: str) -> sqlite3.Connection | None:
    if not path.is_file():
        return None
    try:
        conn = _connect_readonly(path)
        row = conn.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
    except sqlite3.DatabaseError:
        return None
    if row and row[0] == stamp:
        return conn
    conn.close()
    return None


def _domain_filter(include: list[str] | tuple[str, ...], exclude: list[str] | tuple[str, ...]):
    """SQL for include / exclude lists: the host equals the domain or ends with ".domain"."""
    params: list[object] = []

    def clause(domain: str) -> str:
        domain = domain.lower().strip().strip(".")
        params.extend([domain, len(domain) + 1, "." + domain])
        return "(d.host = ? OR substr(d.host, -?) = ?)"

    inc = [d for d in include if d.strip(" .")]
    exc = [d for d in exclude if d.strip(" .")]
    parts: list[str] = []
    if inc:
        parts.append("(" + " OR ".join(clause(d) for d in inc) + ")")
    parts.extend("NOT " + clause(d) for d in exc)
    return ("AND " + " AND ".join(parts)) if parts else "", params


def _section_led(section: str, title: str, snippet: str) -> str:
    """The section heading leads the snippet unless the page title already says it."""
    return f"{section}: {snippet}" if section and section not in title else snippet


def _trim(snippet: str) -> str:
    snippet = " ".join(snippet.split())
    if len(snippet) <= SNIPPET_MAX_CHARS:
        return snippet
    cut = snippet.rfind(" ", 0, SNIPPET_MAX_CHARS)
    return snippet[: cut if cut > 0 else SNIPPET_MAX_CHARS] + " …"


def _url_variants(url: str) -> list[str]:
    parts = urlsplit(url.strip())
    base = urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))
    variants = [url.strip(), base]
    if base.startswith("http://"):
        variants.append("https://" + base[7:])
    elif base.startswith("https://"):
        variants.append("http://" + base[8:])
    more = []
    for v in variants:
        if v.endswith("/"):
            more.append(v + "index.html")
        elif v.endswith("/index.html"):
            more.append(v[: -len("index.html")])
    return list(dict.fromkeys(variants + more))
