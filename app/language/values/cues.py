"""The words around a number that type it: a scale word or a percent sign after it, the next word
(a counted noun, or a word that shows it counts nothing), a name before it ("Windows 10" is a name,
not a count), and range separators ("20-30", "20 to 30")."""

from __future__ import annotations

import re

from app.language.text import STOP_WORDS
from app.language.values.number_words import SCALE_WORDS, SMALL_WORDS, TENS_WORDS

SCALE_AFTER = re.compile(
    r"[\s-]?(?P<w>(?i:hundred|thousand|million|billion|trillion|dozen|lakhs?|lac|crores?|mn|mln|"
    r"bn|bln|tn|trn)|cr)\b"
)
PERCENT = re.compile(
    r"\s?(?:%|％)|[\s-]?(?i:percent|per\s?cent|pct|pc)\b(?!\.\d)|(?P<pp>\s?(?i:percentage[\s-]points?|"
    r"ppts?|pp)\b)"
)
NEXT_WORD = re.compile(r"(?:\s+or\s+(?:more|so)|\s*\+|\s+plus)?\s+(?P<w>[A-Za-z][A-Za-z'’]*)")
_PREV_TOKEN = re.compile(r"(?:^|(?<=[\s(\"“‘']))([A-Za-z][\w&.+'’-]*)\s+$")
RANGE_SEP = re.compile(r"\s*[-–—]\s*|\s+to\s+|-to-|\s+and\s+|\s+or\s+|\s*/\s*(?=[$€£])", re.I)

# Words after a number that show it counts nothing ("the 11 is", "at 9 on Monday").
NOT_NOUNS = frozenset(
    STOP_WORDS
    | set(
        """to in on at by for from with and or nor but than as is are was were be been being am has have had will
    would can could should may might must shall did do does per a an the this that these those it its he she they
    we you i his her their our my your me him them us if when while after before since until into onto over under
    through about against between among which who whom whose where why how so not no also up down off out more
    less fewer most least only just still yet even all both each either neither again too very then there here
    what ago now today yesterday tomorrow tonight later earlier already nearly almost around approximately
    roughly last next vs versus via percent pct cent et al etc say says said""".split()
    )
    | set(SMALL_WORDS)
    | set(TENS_WORDS)
    | set(SCALE_WORDS)
    | {"dozen", "half"}
) - {"of", "new", "newest", "latest", "recent", "current", "other", "own", "same", "such"}  # "208,560 new vehicles"
# A capitalised word before a number is a name ("Windows 10", "Series 3") unless it is one of these.
_FUNCTION_WORDS = frozenset(
    STOP_WORDS
    | set(
        """about around nearly almost some over under more less than only just roughly approximately another save get
    buy up down top below above exactly estimated least total extra additional additionally also plus minus
    at by in on of for from to with and but or since until after before during between among within across
    ages aged age""".split()
    )
)
# Verbs in -s that follow model names ("Windows 10 runs", "Series 3 features" stays a plural).
_S_VERBS = frozenset(
    """runs has is was does says gets makes comes goes uses needs offers includes costs sells ships
    adds brings takes gives shows looks seems remains supports lets keeps helps works starts ends launches arrives
    requires""".split()
)
_IRREGULAR_PLURALS = frozenset(
    "people men women children police staff feet teeth mice geese cattle sheep fish deer "
    "aircraft personnel crew troops".split()
)
QUANTITY_CUE = re.compile(
    r"\b(?:than|about|around|nearly|almost|some|over|roughly|approximately|estimated|another|"
    r"all|the|employs|employed|had|has|have|with)\s+$",
    re.I,
)


def is_name(text: str, start: int) -> bool:
    """A capitalised word right before ``start`` that is not a function word ("Windows 10")."""
    m = _PREV_TOKEN.search(text, max(0, start - 40), start)
    if not m:
        return False
    tok = m.group(1)
    if not any(c.isupper() for c in tok):
        return False
    return tok.lower().rstrip(".") not in _FUNCTION_WORDS


def plural(word: str) -> bool:
    w = word.lower()
    if w in _IRREGULAR_PLURALS:
        return True
    return len(w) > 2 and w.endswith("s") and not w.endswith(("ss", "us", "is")) and w not in _S_VERBS
