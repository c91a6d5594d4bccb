"""Article selection and furniture rules: split articles, teaser grids, "other content" sections,
embedded posts, bylines and datelines, the repeated title, the headline's region."""

from __future__ import annotations

from app.extract import extract_html

SENTENCE = "The council approved the new transit budget on Tuesday after a long debate about fares. "
OTHER = "A completely different story about a football match that ended in a dramatic penalty shootout. "


def page(body: str, title: str = "Transit budget approved") -> str:
    return f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"


def paras(text: str, n: int, tag: str = "p") -> str:
    return "".join(f"<{tag}>{i} {text * 3}</{tag}>" for i in range(n))


def links(n: int, label: str = "Link") -> str:
    return "<ul>" + "".join(f"<li><a href='/x{i}'>{label} number {i} to elsewhere</a></li>" for i in range(n)) + "</ul>"


def test_article_split_by_an_ad_slot_keeps_both_parts() -> None:
    body = (
        "<div class='wrap'>"
        f"<div class='part-one'>{paras(SENTENCE, 4)}</div>"
        f"<div class='slot'>{links(30, 'Sponsored offer')}</div>"
        f"<div class='part-two'>{paras(SENTENCE.replace('Tuesday', 'Wednesday'), 2)}</div>"
        "</div>"
    )
    text = extract_html(page(body)).text
    assert "Tuesday" in text and "Wednesday" in text
    assert "Sponsored offer" not in text


def test_teaser_grid_inside_article_dropped_as_a_whole() -> None:
    teasers = "".join(
        f"<div><h3><a href='/t{i}'>A linked teaser headline that goes on for a while {i}</a></h3>"
        f"<p>Short blurb {i} here.</p></div>"
        for i in range(5)
    )
    body = f"<article class='story'>{paras(SENTENCE, 5)}<div class='rail'>{teasers}</div></article>"
    text = extract_html(page(body)).text
    assert "council approved" in text
    assert "Short blurb" not in text


def test_other_content_heading_cuts_what_follows_in_its_container() -> None:
    body = f"<article class='story'>{paras(SENTENCE, 5)}<div><h2>Most popular</h2>{paras(OTHER, 2)}</div></article>"
    text = extract_html(page(body)).text
    assert "council approved" in text
    assert "Most popular" not in text and "penalty shootout" not in text


def test_embedded_post_in_a_social_wrapper_is_kept() -> None:
    tweet = (
        "<div class='social-media-embed'><blockquote class='twitter-tweet'>"
        "<p>Residents cheered the decision to keep fares frozen for another year.</p>"
        "— A Resident (@resident) November 18, 2019</blockquote></div>"
    )
    body = f"<article class='story'>{paras(SENTENCE, 3)}{tweet}{paras(SENTENCE, 2)}</article>"
    assert "Residents cheered" in extract_html(page(body)).text


def test_bylines_and_datelines_dropped_but_sentences_opening_alike_kept() -> None:
    body = (
        "<article class='story'><p>By Jane Doe</p><p>November 19, 2019 6:30 AM</p>"
        "<p>Updated: 18 Nov 2019, 19:11</p>"
        "<p>Posted on social media by the transit authority, the budget summary drew hundreds of "
        "replies from riders within the first hour of publication.</p>"
        f"{paras(SENTENCE, 4)}<p>A bus at the depot. (Image: GETTY)</p></article>"
    )
    text = extract_html(page(body)).text
    assert "Posted on social media" in text
    for furniture in ("Jane Doe", "6:30 AM", "19:11", "(Image: GETTY)"):
        assert furniture not in text


def test_title_heading_and_kicker_above_it_dropped() -> None:
    body = (
        "<article class='story'><p>CITY HALL</p><h1>Council approves the transit budget after a long debate</h1>"
        f"{paras(SENTENCE, 4)}<h2>What happens next</h2>{paras(SENTENCE, 1)}</article>"
    )
    result = extract_html(page(body, title="Transit budget approved"))
    assert "CITY HALL" not in result.text and "long debate</h1>" not in result.text
    assert result.blocks[0].text.startswith("0 The council")
    assert any(b.kind == "heading" and b.text == "What happens next" for b in result.blocks)


def test_article_near_the_title_heading_beats_a_larger_block_elsewhere() -> None:
    body = (
        f"<div class='a'><div><h1>Transit budget approved</h1>{paras(SENTENCE, 4)}</div></div>"
        f"<div class='lists'>{links(60)}</div>"
        f"<div class='b'>{paras(OTHER, 6)}</div>"
    )
    text = extract_html(page(body)).text
    assert "council approved" in text
    assert "penalty shootout" not in text
