"""Typing one number from its context: a price, a percentage, a measure, a count, a year, or a
bare number; and splitting a run of number words into numbers ("three four" -> 3, 4)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.language.values.cues import NEXT_WORD, NOT_NOUNS, PERCENT, QUANTITY_CUE, SCALE_AFTER, is_name, plural
from app.language.values.currencies import CUR_NEEDS_SCALE, CUR_PREFIX, CUR_SUFFIX, CUR_SYM_ISO, CUR_WORDS
from app.language.values.number_words import SCALE_ABBREV, SCALE_WORDS, parse_words
from app.language.values.units import ADJ_UNITS, DEG_UNIT, UNIT, UNIT_SYMBOLS, UNIT_WORDS


@dataclass(slots=True)
class Item:
    kind: str  # a Value kind, "bare" (a number with nothing to type it) or "drop"
    amount: float | None
    unit: str
    start: int
    end: int
    scale: float = 1.0  # the scale word or suffix it carried ("billion" -> 1e9)
    weak: bool = False  # "one" alone: no value unless a range gives it a unit
    after_name: bool = False  # right after a name ("Windows 10", "Python 3.11")


def classify(
    text: str,
    start: int,
    end: int,
    amount: float,
    cur: str | None,
    suf: str | None,
    items: list[Item],
    year_ok: bool,
    weak: bool = False,
) -> None:
    """Type the number text[start:end] (value ``amount``) from its context and append it."""
    scale = 1.0
    if suf:
        low = suf.lower()
        if cur and low in SCALE_ABBREV:
            scale = SCALE_ABBREV[low]
        elif low in SCALE_WORDS or low in ("bn", "mn", "mln", "bln", "tn", "trn") or suf == "k":
            scale = SCALE_WORDS.get(low) or SCALE_ABBREV[low]  # "4.1bn", "10k"
        elif low in SCALE_ABBREV and CUR_SUFFIX.match(text, end):
            scale = SCALE_ABBREV[low]  # "500m euros", "5K dollars"
        elif not cur and suf == "in":
            items.append(Item("measure", amount, "in", start, end))  # "5ft 4in"
            return
        elif not cur and suf in UNIT_SYMBOLS:
            items.append(Item("measure", amount, UNIT_SYMBOLS[suf], start, end))
            return
        elif not cur and low in UNIT_WORDS:
            items.append(Item("measure", amount, UNIT_WORDS[low], start, end))
            return
        else:
            return  # a model number, an ordinal, "4K", "5G", "1990s": not a value
    else:
        m = SCALE_AFTER.match(text, end)
        if m:
            w = m["w"].lower()
            scale = SCALE_WORDS.get(w) or SCALE_ABBREV.get(w) or (12.0 if w == "dozen" else 1.0)
            end = m.end()
    amount *= scale
    if cur:
        key = cur.strip().lower()
        iso = CUR_PREFIX.get(key) or CUR_PREFIX.get(key.replace(" ", ""))
        if not iso:
            iso = key.rstrip(".").upper()
            iso = {"RMB": "CNY", "RS": "INR"}.get(iso, iso)
        items.append(Item("price", amount, iso, start, end, scale))
        return
    m = PERCENT.match(text, end)
    if m:
        items.append(Item("percent", amount, "pp" if m["pp"] else "%", start, m.end(), scale))
        return
    m = CUR_SUFFIX.match(text, end)
    if m:
        iso = None
        if m["pounds"]:
            if scale > 1 or "sterling" in m["pounds"].lower():
                iso = "GBP"
        elif m["w"]:
            w = " ".join(m["w"].lower().split())
            key = w if w in CUR_WORDS else w[:-1] if w[:-1] in CUR_WORDS else w[:-2]
            iso = CUR_WORDS.get(key)
            if key in CUR_NEEDS_SCALE and scale == 1:
                iso = None
        elif m["iso"]:
            iso = m["iso"].upper()
            iso = "CNY" if iso == "RMB" else iso
        else:
            iso = CUR_SYM_ISO.get(m["sym"], "GBP")  # a symbol after the amount: "25 €", "60,000₩"
        if iso:
            if iso.endswith("/100"):
                iso, amount = iso[:3], amount / 100
            items.append(Item("price", amount, iso, start, m.end(), scale))
            return
    if weak:  # "one day", "one of": no unit, no count
        items.append(Item("bare", amount, "", start, end, scale, weak=True))
        return
    m = UNIT.match(text, end)
    if m and text[end] == "-" and m["w"] and m["w"][0].isupper() and text[start].isupper():
        m = None  # "the 1967 Six-Day War": a name
    if m:
        sym = m["s"]
        # a symbol never follows a hyphen ("3-D", "5-G"); an inch mark is attached and not a closing quote
        if (
            sym is None
            or text[end] != "-"
            and not (sym in ('"', "″") and (text[end] != sym or (start and text[start - 1] in "\"“'")))
        ):
            unit = UNIT_WORDS[" ".join(m["w"].lower().split())] if m["w"] else UNIT_SYMBOLS[sym]
            end2 = m.end()
            if unit == "year" and text.startswith("-old", end2):
                end2 += 4
            items.append(Item("measure", amount, unit, start, end2, scale))
            return
    m = DEG_UNIT.match(text, end)
    if m:
        items.append(Item("measure", amount, "°" + (m[1] or ""), start, m.end(), scale))
        return
    m = ADJ_UNITS.match(text, end)
    if m and m[1] not in NOT_NOUNS:
        items.append(Item("measure", amount, UNIT_WORDS[m[2]], start, end, scale))
        return
    after_name = is_name(text, start) if start else False
    year_like = year_ok and scale == 1 and (1900 if after_name else 1600) <= amount <= 2099
    m = NEXT_WORD.match(text, end)
    if m:
        word = m["w"]
        low = word.lower()
        if low not in NOT_NOUNS and not low.endswith(("'s", "’s")):
            if year_like:
                # "2019 Apple AirPods", "2016 election", "2023 revenues" are years; "some 2000 homes" a count
                if word[0].islower() and plural(word) and QUANTITY_CUE.search(text, max(0, start - 20), start):
                    items.append(Item("count", amount, "", start, end, scale))
                else:
                    items.append(Item("year", amount, "", start, end))
                return
            if not after_name or plural(word) or amount == 1:
                items.append(Item("count", amount, "", start, end, scale))
                return
    if year_like:
        items.append(Item("year", amount, "", start, end))
        return
    items.append(Item("bare", amount, "", start, end, scale, after_name=after_name))


def word_numbers(text: str, start: int, end: int, items: list[Item]) -> None:
    """Split a run of number words into numbers ("three four" -> 3, 4) and type each."""
    toks = [(m.group().lower(), m.start(), m.end()) for m in _WORD_TOKEN_I.finditer(text, start, end)]
    i, n = 0, len(toks)
    while i < n:
        found = None
        for j in range(n, i, -1):
            words = [t[0] for t in toks[i:j]]
            if words[-1] in ("and", "a", "an"):
                continue
            v = parse_words(words)
            if v is not None:
                found = (j, v)
                break
        if found is None:
            i += 1
            continue
        j, v = found
        classify(
            text,
            toks[i][1],
            toks[j - 1][2],
            v,
            None,
            None,
            items,
            year_ok=False,
            weak=j - i == 1 and toks[i][0] == "one",
        )
        i = j


_WORD_TOKEN_I = re.compile(r"[a-z]+", re.I)
