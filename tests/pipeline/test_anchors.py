from app.language.anchors import about_a_sibling
from app.language.question import anchors_of as question_anchors
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
