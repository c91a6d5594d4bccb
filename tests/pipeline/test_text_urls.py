from app.language.text import split_sentences, strip_links, terms
from app.urls import domain_matches, normalize_url, registrable_domain


def test_sentence_splitter_keeps_abbreviations_and_versions():
    s = split_sentences("Python 3.11 was released on Oct. 24, 2022. It is faster, e.g. in loops. Mr. Smith agreed!")
    assert s == ["Python 3.11 was released on Oct. 24, 2022.", "It is faster, e.g. in loops.", "Mr. Smith agreed!"]


def test_a_possessive_meets_its_owner():
    assert terms("Microsoft's xCloud") == terms("Microsoft xCloud") == ["microsoft", "xcloud"]
    assert terms("Kepa Arrizabalaga's contract") == ["kepa", "arrizabalaga", "contract"]
    assert terms("don't stop") == ["don't", "stop"]  # not a possessive


def test_strip_links_counts_and_keeps_link_text():
    text, n = strip_links("Read [this](https://a.example/p) or www.b.example/q")
    assert n == 2 and "this" in text and "example" not in text


def test_normalize_url_collapses_tracking_www_amp_fragment_slash():
    base = normalize_url("https://example.com/news/story")
    for variant in (
        "http://www.example.com/news/story/",
        "https://example.com/news/story?utm_source=x#top",
        "https://example.com/news/story/amp/",
        "https://amp.example.com/news/story?amp=1",
        "https://example.com/news/story?fbclid=abc",
    ):
        assert normalize_url(variant) == base
    assert normalize_url("https://example.com/news/story?id=2") != base


def test_registrable_domain_offline_psl():
    assert registrable_domain("https://news.bbc.co.uk/x") == "bbc.co.uk"
    assert registrable_domain("https://docs.python.org/3/") == "python.org"
    assert registrable_domain("http://127.0.0.2:8000/") == "127.0.0.2"


def test_domain_matches_subdomains_only():
    assert domain_matches("docs.python.org", ["python.org"])
    assert not domain_matches("notpython.org", ["python.org"])


def test_bare_host_paths_are_links_too_and_punctuation_stays():
    text, n = strip_links("Visit brushdeals.test/offer?id=3 now. See https://a.example/c. Python 3.11 is out.")
    assert n == 2 and "brushdeals" not in text and "a.example" not in text
    assert "Python 3.11 is out." in text and text.count(".") >= 3
