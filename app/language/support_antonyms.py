"""Antonym pairs for the support scorer (app/language/support.py): opposite predicates (rise/fall,
win/lose, approve/reject, ...) and the marks they put on a sentence's tokens."""

from __future__ import annotations

from app.language.support_terms import NEG_BEFORE_TO, PUNCT
from app.language.text import stem

# Each pair has two sides; a word may sit in several pairs. Words are met by stem ("defending" is
# "defend"). Words marked * only count when a quantity follows ("up 0.35%", "added 20.72 points",
# "lost more than 2%"), not in "set up", "added that", "lost the vote".

_QUANT_NEXT = frozenset("more less over nearly about roughly around almost by from some as well than".split())
_PAIRS: list[tuple[str, str, str]] = [
    (
        "rise/fall",
        "rise rose risen increase climb grow grew grown gain jump surge soar raise hike boost upward "
        "*up *add *added *adds *adding",
        "fall fell fallen decrease decline drop cut reduce reduction lowered lowering slash plunge sink sank "
        "sunk tumble slide slid shrink shrank eliminate downward *down *lost *lose *loses *losing loss",
    ),
    ("win/lose", "win won winner beat beaten defeated defeats victory victories victorious", "lose lost losing loss"),
    ("high/low", "high higher highest", "low lower lowest"),
    ("more/less", "more", "less fewer"),
    ("before/after", "before", "after"),
    ("early/late", "early earlier earliest", "late later latest"),
    ("open/close", "open opened reopen reopened re-open re-opened", "close closed shut shelve shelved"),
    ("accept/reject", "approve approval accept welcome agree agreed", "reject rejection refuse refused balk balked"),
    (
        "allow/ban",
        "allow permit legalize legalized legalise legalised legal authorize authorized",
        "ban banned prohibit outlaw forbid forbidden illegal",
    ),
    ("support/oppose", "support supporter defend endorse", "oppose opponent contradict refute"),
    ("buy/sell", "buy bought purchase acquire", "sell sold divest"),
    ("majority/minority", "majority", "minority"),
    ("strong/weak", "strong stronger strongest strengthen strengthened", "weak weaker weakest weaken weakened"),
    ("large/small", "large larger largest big bigger biggest", "small smaller smallest"),
    ("premium/discount", "premium", "discount"),
    ("long/short", "long longer longest", "short shorter shortest"),
]


def _inflections(w: str) -> set[str]:
    """w and its regular inflections: the stemmer leaves short words alone ("rising" is not "rise")."""
    forms = {w, w + "s", w + "es", w + "ed", w + "d", w + "ing"}
    if w.endswith("e"):
        forms.add(w[:-1] + "ing")
    if w.endswith("y"):
        forms |= {w[:-1] + "ies", w[:-1] + "ied"}
    if len(w) >= 3 and w[-1] not in "aeiouwxy" and w[-2] in "aeiou" and w[-3] not in "aeiou":
        forms |= {w + w[-1] + "ing", w + w[-1] + "ed"}  # cut -> cutting, drop -> dropped
    return forms


_ANT_STEM: dict[str, list[tuple[int, int]]] = {}  # stem -> [(pair, side)]
_ANT_QUANT: dict[str, list[tuple[int, int]]] = {}  # surface word -> [(pair, side)], quantity needed
for _i, (_name, _a, _b) in enumerate(_PAIRS):
    for _side, _words in ((0, _a), (1, _b)):
        for _w in _words.split():
            if _w.startswith("*"):
                _ANT_QUANT.setdefault(_w[1:], []).append((_i, _side))
                continue
            for _f in _inflections(_w):
                _lst = _ANT_STEM.setdefault(stem(_f), [])
                if (_i, _side) not in _lst:
                    _lst.append((_i, _side))


class _StemMarks(dict):
    """token -> its (pair, side) marks by stem; hits are one C-level lookup."""

    def __missing__(self, tok: str) -> tuple[tuple[int, int], ...]:
        if len(self) > 200_000:
            self.clear()
        out = () if tok[0].isdigit() or tok in PUNCT else tuple(_ANT_STEM.get(stem(tok), ()))
        self[tok] = out
        return out


STEM_MARKS = _StemMarks()


def marks_of(toks: list[str], j: int) -> list[tuple[int, int]] | tuple:
    t = toks[j]
    out = STEM_MARKS[t]
    if t in SPECIAL_MARK:
        if t in NEG_BEFORE_TO and j + 1 < len(toks) and toks[j + 1] == "to":
            return ()  # "declined to comment" is a negation, not a fall
        q = _ANT_QUANT.get(t)
        if q:
            nxt = toks[j + 1] if j + 1 < len(toks) else ""
            if nxt[:1].isdigit() or nxt in _QUANT_NEXT:
                return list(out) + q
    return out


SPECIAL_MARK = frozenset(_ANT_QUANT) | NEG_BEFORE_TO
