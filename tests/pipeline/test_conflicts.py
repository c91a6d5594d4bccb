"""Conflicts for any asked value kind, read by the one value parser (app/pipeline/conflicts.py)."""

from __future__ import annotations

from app.pipeline.conflicts import asked_attribute, detect_conflicts, values_in
from tests.pipeline.helpers import make_evidence


def _two(a: str, b: str):
    return [
        make_evidence("S1", a, url="https://a.example/p"),
        make_evidence("S2", b, url="https://b.example/p"),
    ]


def test_counts_of_the_counted_noun_can_disagree() -> None:
    ev = _two("Greywater has 1,200 employees in four offices.", "Greywater now has 1,500 employees, it said.")
    (conflict,) = detect_conflicts("How many employees does Greywater have?", ev)
    assert conflict.attribute == "count"
    assert {v["value"] for v in conflict.values} == {"1,200", "1,500"}


def test_measures_of_the_asked_dimension_can_disagree() -> None:
    ev = _two("The Vanta S3 has a top speed of 25 km/h.", "The Vanta S3 reaches a top speed of 32 km/h.")
    (conflict,) = detect_conflicts("What is the top speed of the Vanta S3?", ev)
    assert {v["value"] for v in conflict.values} == {"25 km/h", "32 km/h"}


def test_quantities_without_the_measured_thing_named_are_not_one_fact() -> None:
    ev = _two(
        "The Mars crew would sleep through much of the 180-day cruise to Mars.",
        "The study sent six humans to Mars and back in a five year timescale, the crew said.",
    )
    assert detect_conflicts("How long would the Mars crew need to recover?", ev) == []


def test_surface_forms_of_one_price_agree() -> None:
    ev = _two("Acme paid $410m for the Greywater deal.", "Acme paid 410 million dollars for the Greywater deal.")
    assert detect_conflicts("How much did Acme pay for the Greywater deal?", ev) == []


def test_values_are_labelled_one_way() -> None:
    assert values_in("price", "It costs $49.00 per month, or 49 USD a month.") == ["$49/month", "$49/month"]
    assert values_in("date", "Released on March 3, 2024 (2024-03-03), planned for March 2024.") == [
        "2024-03-03",
        "2024-03-03",
    ]
    assert values_in("measure", "It is 120 metres tall and took 3 years.", frozenset({"length"})) == ["120 m"]
    assert asked_attribute("What percentage of voters backed it?") == "percent"
    assert asked_attribute("Who founded Acme?") is None
