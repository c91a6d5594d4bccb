"""The coverage bonuses of the corpus ranking read stems stored at build time
(app/corpus/coverage.py) instead of one FTS5 MATCH per term and column: the tallies must be the ones
FTS5 itself gives, and the stems the ones its porter tokenizer makes."""

from __future__ import annotations

import pytest

from app.corpus.coverage import fts_stem, fts_tokens, held, query_phrases
from app.corpus.index import RERANK_POOL
from app.corpus.query import parse_query

QUERIES = [
    "How do I parse a JSON string into a dict?",
    "asyncio.TaskGroup example",
    "What's new in Python 3.11?",
    "run a subprocess and capture its output",
    "pretty-print JSON with indentation",
    "Release date of Python 3.11.2",
    "functools.cache vs lru_cache",
    "read a CSV file with DictReader",
    "possibly deprecated technologies",
    "Crème brûlée naïve café",
]


def _fts_tally(index, column_filter: str, term: str, rowids: list[int]) -> set[int]:
    marks = ",".join("?" * len(rowids))
    sql = f"SELECT rowid FROM passages WHERE passages MATCH ? AND rowid IN ({marks})"
    return {r for (r,) in index._conn.execute(sql, [column_filter + term, *rowids])}


@pytest.mark.parametrize("question", QUERIES)
def test_stored_stems_hold_the_terms_fts5_finds(sample_index, question):
    terms = parse_query(question).terms
    rows = sample_index._match(parse_query(question).any_of(), "", [], RERANK_POOL)
    rowids = [rowid for _, rowid, _ in rows]
    if not rowids:
        pytest.skip("no candidate passage")
    marks = ",".join("?" * len(rowids))
    stored = {
        r[0]: r[1:]
        for r in sample_index._conn.execute(
            f"SELECT id, title, section, body FROM passage_terms WHERE id IN ({marks})", rowids
        )
    }
    for term, phrase in zip(terms, query_phrases(terms)):
        in_heading = _fts_tally(sample_index, "{title section} : ", term, rowids)
        in_body = _fts_tally(sample_index, "body : ", term, rowids)
        assert {r for r in rowids if held([phrase], stored[r][0], stored[r][1])} == in_heading, term
        assert {r for r in rowids if held([phrase], stored[r][2])} == in_body, term


def test_stems_agree_with_the_porter_tokenizer_on_the_sample_corpus(sample_index):
    conn = sample_index._conn
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.terms_seen USING fts5vocab(main, passages, 'instance')")
    theirs: dict[tuple[int, str], set[str]] = {}
    for term, doc, col in conn.execute("SELECT term, doc, col FROM temp.terms_seen"):
        theirs.setdefault((doc, col), set()).add(term)
    fields = same = 0
    for rowid, *texts in conn.execute("SELECT rowid, title, section, body FROM passages"):
        for col, text in zip(("title", "section", "body"), texts):
            fields += 1
            same += set(fts_tokens(text or "").split()) == theirs.get((rowid, col), set())
    assert fields > 5000 and same / fields >= 0.998, (same, fields)


def test_stems_follow_porters_c_implementation():
    # BLI -> BLE and LOGI -> LOG (step 2 of the C version, which SQLite follows); short and
    # non-ASCII tokens are not stemmed.
    assert [fts_stem(w) for w in ("possibly", "technology", "parsing", "is", "naïve")] == [
        "possibl",
        "technolog",
        "pars",
        "is",
        "naïve",
    ]
    assert fts_tokens("Crème brûlée, csv.DictWriter 3.11") == " creme brule csv dictwrit 3 11 "
