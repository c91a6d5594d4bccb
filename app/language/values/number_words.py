"""Number words and ``parse_number``: "twenty-five", "nine hundred", "a dozen", "half a million",
"4.1bn", "2.5 million" -> the number. The word grammar (``parse_words``) also reads the runs of
number words the scanner finds in a sentence ("three four" is two numbers)."""

from __future__ import annotations

import re
from functools import lru_cache

SMALL_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
TENS_WORDS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fourty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
SCALE_WORDS = {
    "hundred": 100,
    "thousand": 1e3,
    "million": 1e6,
    "billion": 1e9,
    "trillion": 1e12,
    "lakh": 1e5,
    "lakhs": 1e5,
    "lac": 1e5,
    "crore": 1e7,
    "crores": 1e7,
}
# Abbreviated scales, after digits ("4.1bn", "$410m", "2.5 mln").
SCALE_ABBREV = {
    "k": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "mln": 1e6,
    "mil": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "bln": 1e9,
    "t": 1e12,
    "tn": 1e12,
    "trn": 1e12,
    "cr": 1e7,
}
_FRACTIONS = {"½": 0.5, "¼": 0.25, "¾": 0.75, "⅓": 1 / 3, "⅔": 2 / 3, "⅛": 0.125}

_NUMBER_WORD_ALT = "|".join(
    sorted(
        [
            *SMALL_WORDS,
            *TENS_WORDS,
            "hundred",
            "thousand",
            "million",
            "billion",
            "trillion",
            "dozen",
            "lakh",
            "crore",
            "half",
        ],
        key=len,
        reverse=True,
    )
)
_SCALE_AHEAD = r"(?=[-\s]+(?:hundred|thousand|million|billion|trillion|dozen|lakh|crore|half)\b)"
# A run of number words: "twenty-five", "nine hundred", "a dozen", "five-and-a-half", "half a million".
WORDNUM = (
    rf"(?:{_NUMBER_WORD_ALT}|an?{_SCALE_AHEAD})\b"
    rf"(?:[-\s]+(?:and[-\s]+)?(?:{_NUMBER_WORD_ALT}|an?{_SCALE_AHEAD})\b)*"
)
_WORD_TOKEN = re.compile(r"[a-z]+")


def parse_words(words: list[str]) -> float | None:
    """Number words -> value; None when they do not make one number ("three four")."""
    if words and words[0] in _LEADING_SCALES:
        return None  # "thousand", "the initial dozen": no number without a count before it
    total = 0.0
    current = 0.0
    last = ""  # kind of the last token: unit, teen, tens, hundred, scale, half
    i = 0
    n = len(words)
    seen = False
    while i < n:
        w = words[i]
        if w == "and":
            i += 1
            continue
        if w in ("a", "an"):
            # "a dozen", "a million", "and a half"
            if i + 1 < n and words[i + 1] == "half":
                current += 0.5
                last = "half"
                i += 2
                seen = True
                continue
            if i + 1 < n and (words[i + 1] in SCALE_WORDS or words[i + 1] == "dozen"):
                current = current or 1.0
                if last in ("unit", "teen", "tens"):
                    return None
                last = "unit"
                i += 1
                continue
            return None
        if w == "half":
            # "half a million" (a factor) or a trailing "and a half" (handled above)
            if i + 1 < n and words[i + 1] in ("a", "an"):
                current = 0.5
                last = "unit"
                i += 2
                seen = True
                continue
            return None
        if w in TENS_WORDS:
            if last in ("unit", "teen", "tens", "half"):
                return None
            current += TENS_WORDS[w]
            last = "tens"
        elif w in SMALL_WORDS:
            v = SMALL_WORDS[w]
            if last in ("unit", "teen", "half") or (last == "tens" and v >= 10):
                return None
            current += v
            last = "unit" if v < 10 else "teen"
        elif w == "hundred":
            if last == "hundred":
                return None
            current = (current or 1.0) * 100
            last = "hundred"
        elif w == "dozen":
            current = (current or 1.0) * 12
            last = "scale"
        elif w in SCALE_WORDS:
            if last == "scale" and not current:
                return None
            total += (current or 1.0) * SCALE_WORDS[w]
            current = 0.0
            last = "scale"
        else:
            return None
        seen = True
        i += 1
    if not seen:
        return None
    return total + current


_LEADING_SCALES = frozenset({*SCALE_WORDS, "dozen"})


_NUMERIC = re.compile(r"^(?P<int>\d{1,3}(?:,\d{3})+|\d*)(?P<dec>\.\d+)?(?P<frac>[½¼¾⅓⅔⅛])?$")
_PARSE_SPLIT = re.compile(r"^\s*([\d.,½¼¾⅓⅔⅛]+)\s*-?\s*([A-Za-z]*)\s*$")


def digits_value(s: str) -> float | None:
    m = _NUMERIC.match(s)
    if not m or not (m["int"] or m["dec"] or m["frac"]):
        return None
    v = float(m["int"].replace(",", "") or 0) + (float(m["dec"]) if m["dec"] else 0.0)
    return v + (_FRACTIONS[m["frac"]] if m["frac"] else 0.0)


@lru_cache(maxsize=8192)
def parse_number(text: str) -> float | None:
    """ "410", "4.1", "1,200", "twenty-five", "three hundred", "4.1bn", "2.5 million", "a dozen",
    "half a million", "five-and-a-half" -> the number; None if ``text`` is not one number."""
    s = text.strip().lower()
    if not s:
        return None
    m = _PARSE_SPLIT.match(s)
    if m:
        v = digits_value(m[1])
        if v is None:
            return None
        scale = m[2]
        if not scale:
            return v
        if scale in SCALE_ABBREV:
            return v * SCALE_ABBREV[scale]
        if scale in SCALE_WORDS:
            return v * SCALE_WORDS[scale]
        if scale == "dozen":
            return v * 12
        return None
    # digits then scale words ("2.5 million", "3 dozen"), or number words
    parts = s.replace("-", " ").split()
    if parts and parts[0][0].isdigit():
        v = digits_value(parts[0])
        if v is None:
            return None
        for w in parts[1:]:
            if w in SCALE_WORDS:
                v *= SCALE_WORDS[w]
            elif w == "dozen":
                v *= 12
            else:
                return None
        return v
    words = _WORD_TOKEN.findall(s)
    if " ".join(words) != " ".join(parts):
        return None
    return parse_words(words)


# Number words: a set test first (most sentences have none), then the run at each such word.
NUMBER_WORDS = frozenset(
    {*SMALL_WORDS, *TENS_WORDS, "hundred", "thousand", "million", "billion", "trillion", "dozen", "lakh", "crore"}
)
