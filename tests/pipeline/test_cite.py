from app.pipeline.cite import expand_ref, parse_draft, render
from tests.pipeline.helpers import make_evidence

EV = [make_evidence(f"S{i}", f"text {i}") for i in range(1, 5)]


def test_expand_ref_forms():
    assert expand_ref("[S1]") == [1]
    assert expand_ref("[S1, S3]") == [1, 3]
    assert expand_ref("[S2-S4]") == [2, 3, 4]
    assert expand_ref("[S2–S4]") == [2, 3, 4]
    assert expand_ref("[1]") == [1]
    assert expand_ref("[1, 2]") == [1, 2]


def test_all_common_reference_forms_parse():
    draft = "Alpha is one [S1][S2]. Beta is two [S1, S3]. Gamma is three [S2-S4]. Delta is four [4]."
    answer = parse_draft(draft, EV)
    assert not answer.invalid_refs
    assert [c.span_ids for c in answer.claims] == [["S1", "S2"], ["S1", "S3"], ["S2", "S3", "S4"], ["S4"]]


def test_nonexistent_span_is_reported_never_kept():
    answer = parse_draft("Alpha is one [S1]. Beta is two [S9].", EV)
    assert answer.invalid_refs == ["S9"]
    assert all("S9" not in c.span_ids for c in answer.claims)


def test_code_subscripts_and_lists_are_not_markers():
    # A model answering a code question quotes code: "a_tuple[0]" was read as a citation of S0, so the
    # whole answer was withheld as citing a span that does not exist, and "x[1]" lost its index.
    draft = (
        "The __iadd__() call succeeds, but a_tuple[0] still cannot be assigned [S2]. "
        "So t[0] += [3] extends the list before the error [S1]. "
        "Use `items[1]` for the second item [S3]. Indexing 'abc'[0] or f(x)[1] works too [S4]."
    )
    answer = parse_draft(draft, EV)
    assert not answer.invalid_refs
    assert [c.span_ids for c in answer.claims] == [["S2"], ["S1"], ["S3"], ["S4"]]
    texts = " ".join(c.text for c in answer.claims)
    for code in ("a_tuple[0]", "t[0] += [3]", "`items[1]`", "'abc'[0]", "f(x)[1]"):
        assert code in texts


def test_bare_markers_where_a_citation_stands():
    answer = parse_draft("It shipped in October 2023[1]. It is faster [2]. Done [1][4]. The default is 5.[3]", EV)
    assert [c.span_ids for c in answer.claims] == [["S1"], ["S2"], ["S1", "S4"], ["S3"]]


def test_urls_and_markdown_links_are_removed():
    answer = parse_draft(
        "See [the docs](https://evil.example/x) for more [S1]. Visit https://evil.example/y now [S2].", EV
    )
    rendered = render(answer, EV)
    assert "http" not in rendered.content and "evil" not in rendered.content
    assert "the docs" in rendered.content
    assert answer.removed_urls == 2


def test_marker_after_period_belongs_to_previous_sentence():
    answer = parse_draft("Alpha is one. [S2] Beta is two [S1].", EV)
    assert [c.span_ids for c in answer.claims] == [["S2"], ["S1"]]


def test_render_numbers_by_first_use_and_offsets_locate_sentences():
    answer = render(parse_draft("Beta is two [S3]. Alpha is one [S1][S3].", EV), EV)
    assert answer.content == "Beta is two [1]. Alpha is one [1][2]."
    assert [e.span_id for e in answer.cited] == ["S3", "S1"]
    for claim in answer.claims:
        assert answer.content[claim.start : claim.end].startswith(claim.text.rstrip("."))


def test_a_token_that_starts_with_a_dot_keeps_its_space():
    # "Such .pyc files" was parsed as "Such.pyc files": the answer no longer quoted its source.
    answer = parse_draft("Such .pyc files are called hash-based [S1]. Fix .write() in ZipFile [S2] .", EV)
    assert [c.text for c in answer.claims] == ["Such .pyc files are called hash-based.", "Fix .write() in ZipFile."]
    # the space a marker leaves before punctuation still goes
    assert parse_draft("It is fast [S1] , they said [S2] .", EV).claims[0].text == "It is fast, they said."
    assert parse_draft("It waits [S1] ...", EV).claims[0].text == "It waits..."
