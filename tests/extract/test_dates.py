"""Page dates: the order of sources, copyright lines, unknown stays unknown, Last-Modified."""

from __future__ import annotations

from datetime import date

from app.extract import find_page_dates
from app.extract.date_parse import date_in_url, parse_date

LD = """<script type="application/ld+json">{"@context":"https://schema.org","@graph":[
 {"@type":"WebSite","name":"x"},
 {"@type":"NewsArticle","datePublished":"2021-03-04T10:00:00+01:00","dateModified":"2021-03-06T09:00:00Z"}]}
</script>"""
META = '<meta property="article:published_time" content="2020-05-06T12:00:00Z">'
TIME = '<time datetime="2019-07-08T12:00:00Z">8 July 2019</time>'
FILLER = "<p>" + "Some article text about the local council and its transit budget. " * 5 + "</p>"


def page(head: str = "", body: str = "") -> str:
    return f"<html><head>{head}</head><body>{body}{FILLER}</body></html>"


def test_json_ld_beats_meta_beats_time() -> None:
    both = find_page_dates(page(LD + META, TIME))
    assert (both.published, both.source) == (date(2021, 3, 4), "json-ld")
    assert both.modified == date(2021, 3, 6)
    meta = find_page_dates(page(META, TIME))
    assert (meta.published, meta.source) == (date(2020, 5, 6), "meta")
    time_only = find_page_dates(page("", TIME))
    assert (time_only.published, time_only.source) == (date(2019, 7, 8), "time")


def test_json_ld_array_and_broken_json() -> None:
    array = '<script type="application/ld+json">[{"@type":"BlogPosting","datePublished":"2018-02-03"}]</script>'
    assert find_page_dates(page(array)).published == date(2018, 2, 3)
    broken = (
        '<script type="application/ld+json">{"@type":"Article", "datePublished": "2017-09-10T08:00:00Z",}}</script>'
    )
    result = find_page_dates(page(broken))
    assert (result.published, result.source) == (date(2017, 9, 10), "json-ld")


def test_meta_preference_and_itemprop() -> None:
    head = (
        '<meta name="date" content="2016-01-20"><meta itemprop="datePublished" content="2016-01-19">'
        '<meta property="og:updated_time" content="2016-02-01">'
    )
    result = find_page_dates(page(head))
    assert (result.published, result.source) == (date(2016, 1, 19), "meta")
    assert result.modified == date(2016, 2, 1)


def test_visible_byline_date() -> None:
    body = '<div class="article-date">Published November 19, 2019</div>'
    result = find_page_dates(page("", body))
    assert (result.published, result.source) == (date(2019, 11, 19), "byline")


def test_copyright_footer_year_never_counts() -> None:
    html = page(
        "",
        '<footer><p class="copyright">© 2019 Example Media, 2010-2019. All rights reserved.</p>'
        '<div class="date">Copyright 2019</div></footer>',
    )
    result = find_page_dates(html)
    assert result.published is None
    assert result.source == "unknown"


def test_unknown_stays_unknown() -> None:
    result = find_page_dates(page("<title>No dates here</title>"))
    assert result.published is None and result.modified is None
    assert result.source == "unknown"


def test_last_modified_header_is_the_late_fallback() -> None:
    headers = {"last-modified": "Wed, 21 Oct 2015 07:28:00 GMT"}
    result = find_page_dates(page(), headers=headers)
    assert (result.published, result.source) == (date(2015, 10, 21), "http-last-modified")
    assert result.modified == date(2015, 10, 21)
    # a page date beats the header for published; the header still gives modified
    with_meta = find_page_dates(page(META), headers=headers)
    assert (with_meta.published, with_meta.source) == (date(2020, 5, 6), "meta")
    assert with_meta.modified == date(2015, 10, 21)


def test_url_date_used_when_page_has_none() -> None:
    result = find_page_dates(page(), url="https://example.org/news/2020/03/15/story-title/")
    assert (result.published, result.source) == (date(2020, 3, 15), "url")
    assert date_in_url("https://example.org/2020-news/story") is None


def test_future_and_ancient_dates_rejected() -> None:
    assert parse_date("2999-01-01T00:00:00Z") is None
    assert parse_date("1970-01-01") is None
    html = page('<meta property="article:published_time" content="2999-05-06">')
    assert find_page_dates(html).published is None


def test_text_date_near_the_top() -> None:
    body = "<p>Posted on 3 March 2022 by the editors</p>"
    result = find_page_dates(page("", body))
    assert result.published == date(2022, 3, 3)
    assert result.source in ("text", "byline")


def ld_script(*objects: str) -> str:
    return '<script type="application/ld+json">[' + ",".join(objects) + "]</script>"


def test_utc_stamp_on_a_country_domain_gives_the_local_day() -> None:
    stamp = ld_script('{"@type":"NewsArticle","datePublished":"2020-08-25T00:23:33.312Z"}')
    assert find_page_dates(page(stamp), url="https://news.example.ca/a/1").published == date(2020, 8, 24)
    assert find_page_dates(page(stamp), url="https://news.example.de/a/1").published == date(2020, 8, 25)
    # a .com says nothing about where it publishes: the day as written
    assert find_page_dates(page(stamp), url="https://news.example.com/a/1").published == date(2020, 8, 25)
    late = ld_script('{"@type":"NewsArticle","datePublished":"2020-12-05T23:15:00Z"}')
    assert find_page_dates(page(late), url="https://example.it/n/1").published == date(2020, 12, 6)
    # an explicit local offset is the publisher's own day: kept as written
    local = ld_script('{"@type":"NewsArticle","datePublished":"2020-08-25T00:23:33-04:00"}')
    assert find_page_dates(page(local), url="https://news.example.ca/a/1").published == date(2020, 8, 25)


def test_article_date_published_beats_webpage_and_date_created() -> None:
    created_first = ld_script(
        '{"@type":"WebPage","dateCreated":"2015-01-02"}',
        '{"@type":"NewsArticle","datePublished":"2021-06-07"}',
    )
    assert find_page_dates(page(created_first)).published == date(2021, 6, 7)
    webpage_first = ld_script(
        '{"@type":"WebPage","datePublished":"2015-01-02"}',
        '{"@type":"Article","datePublished":"2021-06-07"}',
    )
    assert find_page_dates(page(webpage_first)).published == date(2021, 6, 7)
    only_created = ld_script('{"@type":"Article","dateCreated":"2019-04-05"}')
    assert find_page_dates(page(only_created)).published == date(2019, 4, 5)


def test_wiki_page_dated_by_its_latest_revision() -> None:
    head = '<meta name="generator" content="MediaWiki 1.31.0">' + ld_script(
        '{"@type":"Article","datePublished":"2005-07-26T16:22:26-07:00","dateModified":"2020-04-07T12:33:32-07:00"}'
    )
    result = find_page_dates(page(head))
    assert (result.published, result.modified) == (date(2020, 4, 7), date(2020, 4, 7))
    # the same stamps on an ordinary article: published is published
    plain = find_page_dates(page(head.replace("MediaWiki 1.31.0", "WordPress 5.3")))
    assert plain.published == date(2005, 7, 26)


def test_byline_published_date_preferred_over_updated() -> None:
    both = '<div class="article-meta">Updated: 5 January 2021 | Published: 3 January 2021</div>'
    assert find_page_dates(page("", both)).published == date(2021, 1, 3)
    # an update-only byline is skipped in favour of the next dated one
    update_first = (
        '<div class="article-meta">Updated: 5 January 2021</div><span class="post-date">3 January 2021</span>'
    )
    result = find_page_dates(page("", update_first))
    assert (result.published, result.source) == (date(2021, 1, 3), "byline")


def test_warm_up_loads_the_fallback_date_parser_once_a_process():
    # In a fresh interpreter: nothing loaded before the warm-up, htmldate's dateparser after it (the
    # ~2.5 s of locale loading a request would otherwise pay; Settings.warm_up runs it at start-up).
    import subprocess
    import sys

    code = (
        "from dateparser.languages.loader import LocaleDataLoader as L\n"
        "from app.extract.dates import warm_up_dates\n"
        "before = len(L._loaded_locales)\n"
        "ok = warm_up_dates()\n"
        "print(before, ok, len(L._loaded_locales))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    before, ok, after = out.stdout.split()
    assert (before, ok) == ("0", "True") and int(after) > 200  # dateparser 1.2 has 205 locales
