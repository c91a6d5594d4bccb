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


DOC = "Lists have more methods: append adds an item to the end, and extend appends every item of an iterable. "


def test_a_sections_anchor_id_is_not_read_as_a_layout_name() -> None:
    # Sphinx slugs a section's heading into its id: "More on Lists" -> id="more-on-lists", and a FAQ
    # entry "How do I share global variables?" -> id="how-do-i-share-global-variables"
    body = (
        "<div role='main' class='body'><section id='data-structures'><h1>Data Structures</h1>"
        f"<section id='more-on-lists'><h2>5.1. More on Lists</h2>{paras(DOC, 3)}</section>"
        f"<section id='how-do-i-share-global-variables'><h2>How do I share global variables across modules?</h2>{paras(SENTENCE, 2)}</section>"
        f"<section id='tuples'><h2>5.3. Tuples and Sequences</h2>{paras(DOC.replace('Lists', 'Tuples'), 3)}</section>"
        "</section></div>"
    )
    text = extract_html(page(body, "Data Structures")).text
    assert "Lists have more methods" in text and "Tuples have more methods" in text
    assert "council approved" in text


def test_a_section_named_by_its_class_is_still_judged_by_it() -> None:
    body = f"<article>{paras(SENTENCE, 4)}</article><section class='comments' id='c1'>{paras(OTHER, 3)}</section>"
    text = extract_html(page(body)).text
    assert "council approved" in text and "penalty shootout" not in text


def test_footnotes_in_an_aside_are_kept_and_a_sidebar_aside_is_not() -> None:
    note = "Since ** has higher precedence than -, -3**2 will be interpreted as -(3**2) and thus result in -9."
    body = (
        f"<div role='main'><section id='intro'><h1>Intro</h1>{paras(DOC, 4)}"
        "<aside class='footnote-list brackets'><aside class='footnote brackets' id='id3' role='note'>"
        f"<span class='label'>[1]</span><p>{note}</p></aside></aside></section></div>"
        f"<aside class='sidebar'>{paras(OTHER, 2)}</aside>"
    )
    text = extract_html(page(body, "Intro")).text
    assert "result in -9" in text
    assert "penalty shootout" not in text


def test_a_one_word_section_id_and_a_related_note_still_count_against() -> None:
    body = (
        f"<article>{paras(SENTENCE, 4)}</article>"
        f"<section id='comments'>{paras(OTHER, 3)}</section>"
        f"<aside role='note' class='related-stories'>{paras(OTHER.replace('football', 'tennis'), 3)}</aside>"
    )
    text = extract_html(page(body)).text
    assert "council approved" in text
    assert "penalty shootout" not in text
