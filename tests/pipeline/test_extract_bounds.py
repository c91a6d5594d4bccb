"""The extraction bound on huge pages: markup counted, scripts and stylesheets not."""

from __future__ import annotations

from app.pipeline.extract import bounded_markup

ARTICLE = b"<article><p>" + b"The vote passed after a long debate in the chamber. " * 20 + b"</p></article>"


def test_a_page_under_the_bound_is_untouched():
    page = b"<html><script>x</script>" + ARTICLE + b"</html>"
    assert bounded_markup(page, limit=len(page)) is page


def test_an_article_after_a_megabyte_of_script_and_style_is_kept():
    """News pages put 1 MB of inline JavaScript and CSS before the article (before: cut off, empty)."""
    head = b"<head><script>" + b"var a=1;" * 80_000 + b"</script><style>" + b".c{color:red}" * 40_000 + b"</style>"
    page = head + b'<script type="application/ld+json">{"datePublished": "2020-04-24"}</script>' + ARTICLE
    cut = bounded_markup(page, limit=20_000)
    assert ARTICLE in cut  # scripts' contents dropped, stylesheets kept but not counted
    assert b"var a=1" not in cut and b".c{color:red}" in cut and b"datePublished" in cut


def test_markup_is_still_bounded():
    page = b"<p>" + b"word " * 100_000 + b"</p>"
    assert len(bounded_markup(page, limit=1_000)) == 1_000
    unclosed = b"<p>text</p><script>" + b"x" * 10_000
    assert len(bounded_markup(unclosed, limit=1_000)) <= 1_000 + len(b"<script>")


def test_a_tag_that_only_starts_like_style_is_markup():
    page = b"<stylesheet>" + b"y" * 5_000 + b"</style>" + b"z" * 5_000
    assert len(bounded_markup(page, limit=1_000)) == 1_000


def test_many_scripts_before_one_late_stylesheet_take_one_pass(monkeypatch):
    """Each kind's next element is looked up once and remembered: the bytes searched add up to about
    the page's length per kind (linear), not the page's length per element (quadratic)."""
    from app.pipeline import extract

    searched = 0
    real = extract._element_start

    def counting(low: bytes, opener: bytes, pos: int) -> int:
        nonlocal searched
        found = real(low, opener, pos)
        searched += found - pos
        return found

    monkeypatch.setattr(extract, "_element_start", counting)
    page = b"<script>a</script><p>x</p>" * 2_000 + b"<style>.q{}</style>" + ARTICLE
    bounded_markup(page, limit=len(page) - 1)
    assert searched <= 2 * len(page)
