"""Text normalisation shared by the extractors (app/extract/text_clean.py)."""

from __future__ import annotations

import re
import sys

from app.extract.text_clean import collapse_spaces, content_hash


def test_collapse_spaces_treats_every_unicode_space_as_the_regex_did():
    # collapse_spaces was re.sub(r"\s+", " ", text).strip(); str.split() must split on the same set
    spaces = "".join(chr(c) for c in range(sys.maxunicode + 1) if re.match(r"\s", chr(c)))
    assert len(spaces) > 20  # Unicode spaces, not only ASCII ones
    text = f"{spaces}a{spaces}b\u00a0c\u3000d\x1ce{spaces}"
    assert collapse_spaces(text) == re.sub(r"\s+", " ", text).strip() == "a b c d e"
    assert collapse_spaces("") == "" and collapse_spaces(spaces) == ""


def test_content_hash_ignores_case_spacing_and_invisible_characters():
    assert content_hash("Acme  Cloud\u200b Pro\n") == content_hash("acme cloud pro")
    assert content_hash("Acme Cloud Pro") != content_hash("Acme Cloud Plus")
