from app.pipeline.anchors import about_a_sibling, asked_value_kind, has_value, question_anchors
from app.language.text import terms


def test_siblings_are_recognised_and_the_anchor_itself_is_not():
    anchors = question_anchors("What is the top speed of the Vanta S3 scooter?")
    assert "s3" in anchors and "vanta" in anchors
    assert about_a_sibling(set(terms("The Vanta S2 reaches a top speed of 25 km/h.")), anchors)
    assert not about_a_sibling(set(terms("The Vanta S3 replaces the S2 this spring.")), anchors)
    assert not about_a_sibling(set(terms("Vanta scooters are sold in 12 countries.")), anchors)


def test_versions_and_years():
    anchors = question_anchors("When was Python 3.11 released?")
    assert about_a_sibling(set(terms("Python 3.10 was released on October 4, 2021.")), anchors)
    assert not about_a_sibling(set(terms("Python 3.11.2 fixes bugs.")), anchors)
    assert not about_a_sibling(set(terms("In 2021 and 2022 the team grew.")), question_anchors("Who won in 2022?"))


def test_asked_value_kinds():
    assert asked_value_kind("How many employees does Greywater have?") == "count"
    assert asked_value_kind("How much does the Pro plan cost?") == "price"
    assert asked_value_kind("When was Quill 1.0 released?") == "date"
    assert has_value("date", "Quill 1.0 was released in 2017.")
    assert not has_value("count", "Greywater is a growing company with offices in Oslo.")


def test_measures_only_when_a_value_is_asked_for():
    assert asked_value_kind("What is the top speed of the Vanta S3?") == "measure"
    assert asked_value_kind("How does the storage engine compact its files?") is None
