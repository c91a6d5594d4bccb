"""Page text and passages used by the index."""
from __future__ import annotations

from app.corpus.text import MIN_PASSAGE_CHARS, PASSAGE_CHARS, html_text, plain_text

FILLER = "lorem ipsum dolor sit amet " * 20  # 540 characters


def test_sections_become_passages_and_short_ones_join_the_next():
    html = f"""<html><head><title>T</title></head><body><div role="main">
    <h1>Page<a class="headerlink">¶</a></h1><p>{FILLER}</p>
    <h2>Release 1.0</h2><p>Release date: 2020-01-01</p>
    <h3>Core</h3><p>{FILLER} fixed a crash</p></div></body></html>"""
    page = html_text(html)
    assert page.heading == "Page" and "¶" not in page.body
    assert [p.section for p in page.passages] == ["Page", "Release 1.0"]
    # the tiny "Release 1.0" section kept its heading and absorbed the next one
    assert page.passages[1].text.startswith("Release date: 2020-01-01 Core lorem")
    assert page.passages[1].text.endswith("fixed a crash")


def test_long_text_is_cut_at_spaces_without_losing_words():
    words = [f"w{i}" for i in range(3000)]
    page = plain_text(" ".join(words), fallback_title="f")
    assert len(page.passages) > 5
    assert all(len(p.text) <= PASSAGE_CHARS * 5 // 4 for p in page.passages)
    assert " ".join(p.text for p in page.passages).split() == words


def test_inline_markup_does_not_split_words_and_blocks_do_not_fuse():
    page = html_text("<main><p>call <code><span>tomllib</span><span>.load</span></code>(f).</p>"
                     "<p>next</p><ul><li>one</li><li>two</li></ul></main>")
    assert page.body == "call tomllib.load(f). next one two"


def test_markdown_title_and_sections():
    long = "x " * MIN_PASSAGE_CHARS
    page = plain_text(f"# Guide\n\n{long}\n\n## Install\n\n{long}\n", fallback_title="f", markdown=True)
    assert page.title == "Guide"
    assert [p.section for p in page.passages] == ["Guide", "Install"]
