"""Query sanitising: user text never reaches FTS5 as syntax."""
from __future__ import annotations

import random

import pytest

from app.corpus.index import CorpusIndex
from app.corpus.query import MAX_TERMS, parse_query

HOSTILE = [
    '"what\'s new?" AND (',
    "NEAR(python asyncio, 2)",
    "title:tomllib OR body:*",
    "^python* -asyncio +json",
    '""""',
    "((((",
    "AND OR NOT",
    "a'b'c'\"",
    "col:\"unterminated",
    "'; DROP TABLE docs; --",
    "\x00\x01\u202e日本語 テスト",
    "{heading body}: tomllib",
    "*",
    "3.11.2-6+deb12u9",
    "x" * 5000,
    "",
    "   ",
]


def test_terms_are_quoted_words_only():
    q = parse_query("What's new in Python 3.11?")
    assert q.terms == ['"new"', '"python"', '"3 11"']
    assert q.all_of() == '"new" AND "python" AND "3 11"'
    assert q.any_of() == '"new" OR "python" OR "3 11"'


def test_dotted_names_become_phrases_and_stop_words_go():
    assert parse_query("What is asyncio.TaskGroup?").terms == ['"asyncio taskgroup"']
    assert parse_query("How does the tomllib module work").terms == ['"tomllib"', '"module"', '"work"']


def test_only_stop_words_falls_back_to_them():
    assert parse_query("what is it").terms == ['"what"', '"is"', '"it"']


def test_term_count_is_bounded():
    assert len(parse_query(" ".join(f"word{i}" for i in range(100))).terms) == MAX_TERMS


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_queries_never_raise(sample_index, text):
    hits = sample_index.search(text, count=5)
    assert len(hits) <= 5
    for term in parse_query(text).terms:
        inner = term[1:-1]
        assert term[0] == term[-1] == '"' and '"' not in inner


def test_random_punctuation_soup_never_raises(tmp_path):
    # a small index: the point is the FTS5 parser, not the snippets of big pages
    (tmp_path / "a.html").write_text("<title>Python 3.11</title><p>AND OR NOT NEAR python</p>")
    (tmp_path / "b.txt").write_text("python json asyncio 3.11\n")
    index = CorpusIndex.build(tmp_path)
    rng = random.Random(1234)
    alphabet = list("\"'()*^:+-{}[]<>,.;!?/\\|&% ") + ["AND", "OR", "NOT", "NEAR", "python", "3.11"]
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
        index.search(text, count=3)
    assert index.search('"python" AND (', count=3)  # and it still finds things
