"""The scanner: finds each digit of a sentence (a one-class regex: re skips to it in C), reads what
stands before it (a month, a currency, "version", a phone prefix, or a sign that the digit starts no
value: "A350", "COVID-19", "No. 1", "§ 68"), matches the date, time, phone, version or number there,
and reads the runs of number words when the sentence holds any."""

from __future__ import annotations

import re
from typing import cast

from app.language.values.classify import Item, classify, word_numbers
from app.language.values.currencies import CUR_SYMBOLS, CUR_TAILS, LB_CUR
from app.language.values.dates import AT_MONTH, DATE_GROUPS, DAY, LB_MONTH, MON, MONTH_TAILS, YEAR4, date_value
from app.language.values.number_words import NUMBER_WORDS, WORDNUM, digits_value

_DIGITS = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?[½¼¾⅓⅔⅛]?|[½¼¾⅓⅔⅛]|\.\d+"

_DIGIT = re.compile(r"[\d½¼¾⅓⅔⅛]")  # one class: re skips to it in C, the hot path's whole cost
_TOKEN_REST = re.compile(r"[\w.,-]*")  # matches everywhere (maybe empty): .match() is never None
_TRAP_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-–][A-Za-z0-9]+)*[-–]$")  # "COVID-", "A350-", "i5-"
_TRAP_EXCEPT = frozenset({"mid", "pre", "post", "late", "early", "top", "over", "under", "sub", "than"})
# What may stand right before a number's first digit, read backwards from it.
_LB_VERSION = re.compile(r"(?<![\w.])[Vv]ersion\s+$")
_LB_PHONE = re.compile(r"(?:(?<![\w)])\(|(?<![\w+])\+\d{0,3}[\s.-]?\(?)$")
_LB_SIGN = re.compile(r"(?:\bNos?\.\s*|[#§¶]\s*)$")  # "No. 1", "#3", "§ 68": ranks and sections, not values

_AT_VERSION = re.compile(r"(?:[vV]|[Vv]ersion\s+)(?P<v>\d+(?:\.\d+)*)(?!\w|\.\d)")
_AT_PHONE = re.compile(r"\+\d{1,3}(?:[\s.-]?\(?\d+\)?){2,}|\(\d{3}\)\s?\d{3}[.-]\d{4}(?!\d)")
_SCALE_WORD_AHEAD = re.compile(r"\s(?:million|billion|trillion)\b", re.I)
_AT_DIGIT = re.compile(
    r"(?P<phone>(?:1[\s.-])?\d{3}[.-]\d{3}[.-]\d{4}(?!\d))"
    r"|(?P<time>\d{1,2}:\d\d(?::\d\d)?(?:\s?(?:[ap]\.m\.|[AaPp][Mm]\b))?|\d{1,2}\s?(?:[ap]\.m\.|[AaPp][Mm]\b)|\d+/7\b)"
    rf"|(?P<iso>(?P<iy>{YEAR4})-(?P<im>0[1-9]|1[0-2])-(?P<id>0[1-9]|[12]\d|3[01])(?!\d))"
    rf"|(?P<ymd>(?P<yy>{YEAR4})(?P<ys>[/.])(?P<ym>\d\d?)(?P=ys)(?P<yd>\d\d?)(?!\d|\.\d))"
    rf"|(?P<num_date>(?P<na>\d\d?)(?P<ns>[/.-])(?P<nb>\d\d?)(?P=ns)(?P<ny>{YEAR4}))"
    rf"|(?P<dmy>(?P<d2>{DAY})\s+(?:of\s+)?(?P<m2>{MON})\.?(?:,?\s+(?P<y2>{YEAR4}))?)"
    r"|(?P<version>(?P<vd>\d+\.\d+\.\d+(?:\.\d+)*)(?!\w|\.\d))"
    rf"|(?P<num>{_DIGITS})(?P<suf>[A-Za-z]\w*)?(?!\w)"
)
_LOWER_WORD = re.compile(r"[a-z]+")
_ALPHA_WORD = re.compile(r"(?<![\w.])[A-Za-z]+")
_WORDNUM_AT = re.compile(rf"(?i:{WORDNUM})")
_WORD_STARTS = NUMBER_WORDS | {"a", "an", "half"}
_HYPHEN_HEAD = re.compile(r"([A-Za-z]+)[-–]$")


def _scan_digits(text: str, items: list[Item]) -> None:
    pos = 0
    n = len(text)
    while pos < n:
        d = _DIGIT.search(text, pos)
        if d is None:
            return
        p = d.start()
        prev = text[p - 1] if p else " "
        if prev in "vV" and (p < 2 or not (text[p - 2].isalnum() or text[p - 2] in "._-")):
            m = _AT_VERSION.match(text, p - 1)
            if m and "." in m["v"]:
                items.append(Item("version", None, m["v"], m.start(), m.end()))  # "v2.4.1"
                pos = m.end()
                continue
        if prev == "N" and (p < 2 or not (text[p - 2].isalnum() or text[p - 2] in "_-")):
            # The naira as Nigerian papers write it: "N500m", "N2.5bn", "N10,000" — only with a scale or
            # thousands separators, so "N95" masks and "N64" stay names.
            m = _AT_DIGIT.match(text, p)
            if m and m["num"] is not None and (m["suf"] or "," in m["num"] or _SCALE_WORD_AHEAD.match(text, m.end())):
                amount = digits_value(m["num"])
                if amount is not None:
                    classify(text, p - 1, m.end(), amount, "₦", m["suf"], items, year_ok=False)
                    pos = max(m.end(), items[-1].end if items else 0)
                    continue
        if prev.isalnum() or prev in "_/#@=.,&" and not (prev == "." and (p < 2 or text[p - 2] in " (")):
            pos = cast(re.Match[str], _TOKEN_REST.match(text, p)).end() or p + 1  # "A350", "HO1ZRs9T1P", "/2019/", "#3"
            continue
        if prev == ".":  # " .5"
            p -= 1
            prev = text[p - 1] if p else " "
        if prev in "-–":
            t = _TRAP_TOKEN.search(text, max(0, p - 24), p)
            if t and t.group().rstrip("-–").split("-")[0].lower() not in _TRAP_EXCEPT:
                pos = cast(re.Match[str], _TOKEN_REST.match(text, p)).end() or p + 1  # "COVID-19", "F-35", "A350-900"
                continue
        window = max(0, p - 16)
        # a month, currency, version or phone prefix before the digit
        if prev == " " or prev in CUR_SYMBOLS:
            lb = LB_MONTH.search(text, window, p) if prev == " " and text[p - 2] in MONTH_TAILS else None
            if lb:
                m = AT_MONTH.match(text, lb.start())
                if m:
                    dv = date_value(m)
                    if dv:
                        items.append(Item("date", float(dv[0]), dv[1], m.start(), m.end()))
                        pos = m.end()
                        continue
            lb = LB_CUR.search(text, max(0, p - 6), p) if prev != " " or text[p - 2] in CUR_TAILS else None
            if lb:
                m = _AT_DIGIT.match(text, p)
                if m and m["num"] is not None:
                    amount = digits_value(m["num"])
                    if amount is not None:
                        classify(text, lb.start(), m.end(), amount, lb.group(), m["suf"], items, year_ok=False)
                        pos = max(m.end(), items[-1].end if items else 0)
                        continue
            if prev == " " and text[p - 2] == "n":
                lb = _LB_VERSION.search(text, window, p)
                if lb:
                    m = _AT_VERSION.match(text, lb.start())
                    if m:
                        items.append(Item("version", None, m["v"], m.start(), m.end()))
                        pos = m.end()
                        continue
        if prev in "(+" or prev == " " and p > 1 and text[p - 2] == "+":
            lb = _LB_PHONE.search(text, window, p)
            if lb:
                m = _AT_PHONE.match(text, lb.start())
                if m:
                    pos = m.end()
                    continue
        if (prev in "§¶" or prev == " " and text[p - 2] in ".#§¶") and _LB_SIGN.search(text, max(0, p - 6), p):
            pos = cast(re.Match[str], _TOKEN_REST.match(text, p)).end() or p + 1
            continue
        m = _AT_DIGIT.match(text, p)
        if m is None:
            pos = p + 1
            continue
        g = m.lastgroup
        num = m["num"]
        if num is not None:
            amount = digits_value(num)
            if amount is not None:
                classify(text, p, m.end(), amount, None, m["suf"], items, year_ok=len(num) == 4 and num.isdigit())
                pos = max(m.end(), items[-1].end if items else 0)
            else:
                pos = m.end()
            continue
        if g in DATE_GROUPS:
            dv = date_value(m)
            if dv:
                items.append(Item("date", float(dv[0]), dv[1], m.start(), m.end()))
        elif g == "version":
            items.append(Item("version", None, m["vd"], m.start(), m.end()))
        pos = m.end()  # phone numbers and clock times hold no value


def _scan_words(text: str, items: list[Item]) -> None:
    pos = 0
    for w in _ALPHA_WORD.finditer(text):
        if w.start() < pos or w.group().lower() not in _WORD_STARTS:
            continue
        if w.start() > 1 and text[w.start() - 1] in "-–" and text[w.start() - 2].isalpha():
            h = _HYPHEN_HEAD.search(text, max(0, w.start() - 12), w.start())
            if not h or h[1].lower() not in ("to", "and", "or"):
                continue  # "Take-Two", "Catch-22" style names; "one-to-seven" stays
        m = _WORDNUM_AT.match(text, w.start())
        if m:
            word_numbers(text, m.start(), m.end(), items)
            pos = max(m.end(), items[-1].end if items else 0)


def scan(text: str) -> list[Item]:
    items: list[Item] = []
    _scan_digits(text, items)
    if not NUMBER_WORDS.isdisjoint(_LOWER_WORD.findall(text.lower())):
        words: list[Item] = []
        _scan_words(text, words)
        if words:
            if items:
                spans = [(i.start, i.end) for i in items]
                words = [w for w in words if not any(s < w.end and w.start < e for s, e in spans)]
                items = sorted(items + words, key=lambda i: i.start)
            else:
                items = words
    return items
