"""The extraction bound on huge pages: markup counted, scripts and stylesheets not."""

from __future__ import annotations

from app.pipeline.extract import bounded_markup

ARTICLE = b"<article><p>" + b"The vote passed after a long debate in the chamber. " * 20 + b"</p></article>"


def test_a_page_under_the_bound_is_untouched():
    page = b"<html><script>x</script>" + ARTICLE + b"</html>"
    assert bounded_markup(page, limit=len(page)) is page


def test_an_article_after_a_megabyte_of_script_and_style_is_kept():
    """News pages put 1 MB of inline JavaScript and CSS before the article (before: cut off, empty)."""
    head = b"<head><script>" + b"var a=1;" * 80_000 + b"</script><style>" + b".c{color:red}" * 1_000 + b"</style>"
    page = head + b'<script type="application/ld+json">{"datePublished": "2020-04-24"}</script>' + ARTICLE
    cut = bounded_markup(page, limit=20_000)
    assert ARTICLE in cut  # scripts dropped, a stylesheet within its own budget kept but not counted
    assert b"var a=1" not in cut and b"<script>" not in cut
    assert b".c{color:red}" in cut and b"datePublished" in cut


def test_stylesheets_have_a_budget_of_their_own():
    """CSS costs the hidden-text check: past `limit` bytes of it, a stylesheet counts as markup."""
    page = b"<style>" + b".c{color:red}" * 10_000 + b"</style>" + ARTICLE
    assert ARTICLE not in bounded_markup(page, limit=20_000)
    assert len(bounded_markup(page, limit=20_000)) == 20_000


def test_a_script_inside_a_comment_or_a_quoted_attribute_starts_nothing():
    filler = b"<p>" + b"filler words here " * 100 + b"</p>"
    commented = b"<!-- see <script> below -->" + ARTICLE + filler
    assert ARTICLE in bounded_markup(commented, limit=len(commented) - 1)
    quoted = b'<script data-x="a>b">var q=1;</script>' + ARTICLE + filler
    cut = bounded_markup(quoted, limit=len(quoted) - 1)
    assert ARTICLE in cut and b"var q" not in cut


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
