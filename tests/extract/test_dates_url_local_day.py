"""A UTC stamp and the publisher's URL day one apart: the URL names the local day (aeb pages of
venturebeat and techcrunch: 07:03Z and 04:58Z on Nov 19 under /2019/11/18/)."""

from datetime import date

from app.extract.date_parse import utc_stamp_allows_day
from app.extract.dates import find_page_dates


def _page(stamp: str) -> str:
    return (
        '<html><head><meta property="article:published_time" content="' + stamp + '"></head>'
        "<body><article><p>Text.</p></article></body></html>"
    )


def test_a_utc_stamp_after_midnight_takes_the_url_day_before():
    found = find_page_dates(_page("2019-11-19T07:03:25+00:00"), url="https://example.com/2019/11/18/story/")
    assert (found.published, found.source) == (date(2019, 11, 18), "url")


def test_a_stamp_with_its_own_offset_is_already_local():
    found = find_page_dates(_page("2019-11-19T07:03:25-05:00"), url="https://example.com/2019/11/18/story/")
    assert found.published == date(2019, 11, 19)


def test_a_url_day_no_timezone_reaches_keeps_the_stamp():
    # 15:00 UTC is the 19th from Hawaii (-10) to New Zealand (+12): the URL's 18th is another day
    found = find_page_dates(_page("2019-11-19T15:00:00Z"), url="https://example.com/2019/11/18/story/")
    assert found.published == date(2019, 11, 19)


def test_offset_range_bounds():
    assert utc_stamp_allows_day("2019-11-19T09:59Z", date(2019, 11, 18))
    assert not utc_stamp_allows_day("2019-11-19T10:00Z", date(2019, 11, 18))
    assert utc_stamp_allows_day("2019-11-19T12:00Z", date(2019, 11, 20))
    assert not utc_stamp_allows_day("2019-11-19T11:59Z", date(2019, 11, 20))
    assert not utc_stamp_allows_day("2019-11-19", date(2019, 11, 18))


def test_named_and_sloppy_utc_stamps_are_read_as_utc():
    # forbes's JSON-LD writes a script's Date string; a Gazzetta page writes one-digit seconds
    from datetime import datetime

    from app.extract.date_parse import utc_instant

    assert utc_instant("Tue Nov 19 2019 03:05:46 GMT+0000") == datetime(2019, 11, 19, 3, 5, 46)
    assert utc_instant("Sun, 11 Oct 2020 07:34:36 GMT") == datetime(2020, 10, 11, 7, 34, 36)
    assert utc_instant("2020-12-05T23:15:0Z") == datetime(2020, 12, 5, 23, 15)
    assert utc_instant("2019-11-19T07:03:25-05:00") is None  # its own offset: already local
    assert utc_instant("2019-11-19") is None
    assert utc_instant("Tuesday GMT") is None  # no date in it


def test_a_named_utc_stamp_takes_the_url_day_too():
    page = (
        '<html><head><script type="application/ld+json">{"@type": "NewsArticle", '
        '"datePublished": "Tue Nov 19 2019 03:05:46 GMT+0000"}</script></head><body><p>x</p></body></html>'
    )
    found = find_page_dates(page, url="https://www.example.com/sites/x/2019/11/18/story/")
    assert found.published == date(2019, 11, 18)


def test_an_offset_of_a_day_or_more_is_not_a_utc_stamp_and_does_not_break_the_page():
    from app.extract.date_parse import utc_instant

    assert utc_instant("Tue Nov 19 2019 03:05:46 GMT+2400") is None
    found = find_page_dates(_page("Tue Nov 19 2019 03:05:46 GMT+2400"), url="https://example.com.au/2019/11/18/x/")
    assert found.published is not None
