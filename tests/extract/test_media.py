"""Media queries at the reference viewports (app/extract/media.py)."""

from __future__ import annotations

import pytest

from app.extract.media import VIEWPORTS, Viewport, media_applies

PHONE, LAPTOP = VIEWPORTS


@pytest.mark.parametrize(
    ("prelude", "phone", "laptop"),
    [
        ("screen", True, True),
        ("all", True, True),
        ("print", False, False),
        ("not print", True, True),
        ("only screen and (max-width: 600px)", True, False),
        ("(min-width: 768px)", False, True),
        ("(min-width: 48em)", False, True),  # 768 px
        ("screen and (min-width: 0)", True, True),
        ("(max-width: 600px), print", True, False),
        ("print, (min-width: 1000px)", False, True),
        ("(orientation: portrait)", True, False),
        ("(orientation: landscape)", False, True),
        ("(width >= 600px)", False, True),
        ("(400px <= width <= 1300px)", False, True),
        ("(300px < width < 400px)", True, False),
        ("(height > 700px)", False, True),
        ("(min-height: 600px)", True, True),
        ("not screen and (max-width: 600px)", False, True),
        ("(prefers-color-scheme: dark)", False, False),  # not judged: the rule is ignored
        ("(hover: hover)", False, False),
        ("screen and (-webkit-min-device-pixel-ratio: 2)", False, False),
        ("(min-width: 600px", False, False),  # unbalanced
        ("(min-width: 10vw)", False, False),  # a unit this module does not judge
        ("tv", False, False),
        ("", False, False),
    ],
)
def test_queries_at_a_phone_and_a_laptop(prelude: str, phone: bool, laptop: bool) -> None:
    assert media_applies(prelude, PHONE) is phone
    assert media_applies(prelude, LAPTOP) is laptop


def test_the_viewports_are_a_phone_upright_and_a_laptop() -> None:
    assert PHONE == Viewport(375, 667) and LAPTOP == Viewport(1280, 800)
