"""Ranking on the real sample corpus: the page about the question comes first."""
from __future__ import annotations

import pytest

BASE = "https://docs.python.org/3.11/"


@pytest.mark.parametrize(
    ("question", "expected_first"),
    [
        ("what's new in Python 3.11", "whatsnew/3.11.html"),
        ("What is new in Python 3.11?", "whatsnew/3.11.html"),
        ("What does tomllib do?", "library/tomllib.html"),
        ("What is asyncio.TaskGroup?", "library/asyncio-task.html"),
        ("How do I create a virtual environment?", "library/venv.html"),
        ("pathlib glob", "library/pathlib.html"),
    ],
)
def test_expected_page_ranks_first(sample_index, question, expected_first):
    hits = sample_index.search(question, count=5)
    assert hits[0].url == BASE + expected_first, [h.url for h in hits]


def test_scores_are_sorted_and_snippets_short_and_relevant(sample_index):
    hits = sample_index.search("What does tomllib do?", count=5)
    assert [h.score for h in hits] == sorted(h.score for h in hits)
    assert all(0 < len(h.snippet) <= 330 for h in hits)
    assert "tomllib" in hits[0].snippet.lower()


def test_or_fallback_fills_when_and_finds_too_few(sample_index):
    # no page holds the nonsense word, so AND finds nothing and OR still answers
    hits = sample_index.search("tomllib qwxzvbnm", count=3)
    assert hits and hits[0].url == BASE + "library/tomllib.html"


def test_and_hits_rank_before_or_hits(sample_index):
    both = {h.url for h in sample_index.search("sqlite3 autocommit", count=50)
            if "autocommit" in h.raw_content.lower() and "sqlite3" in h.raw_content.lower()}
    hits = sample_index.search("sqlite3 autocommit", count=20)
    flags = [h.url in both for h in hits]
    assert flags == sorted(flags, reverse=True), flags  # all AND matches, then the rest


def test_count_is_honoured(sample_index):
    assert len(sample_index.search("python", count=3)) == 3
    assert sample_index.search("python", count=0) == []


@pytest.mark.parametrize(
    ("question", "page", "sentence"),
    [
        ("When was Python 3.10 released?", "whatsnew/3.10.html", "Python 3.10 was released on October 4, 2021"),
        ("Is Python 3.11 faster than 3.10?", "whatsnew/3.11.html", "25% faster than CPython 3.10"),
        ("What is asyncio.TaskGroup?", "library/asyncio-task.html", "asyncio.TaskGroup class provides"),
    ],
)
def test_snippet_comes_from_the_answering_passage_of_a_long_page(sample_index, question, page, sentence):
    first = sample_index.search(question, count=3)[0]
    assert first.url == BASE + page
    assert sentence in first.snippet, first.snippet


def test_snippet_names_the_section_it_comes_from(sample_index):
    [hit] = sample_index.search("faster CPython pyperformance", count=1)
    assert hit.snippet.startswith("Faster CPython: "), hit.snippet
