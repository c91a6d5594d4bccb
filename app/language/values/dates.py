"""Dates: month names ("March 4, 2019", "4 March 2019", "November 2018", "July 25") and numeric
forms ("2019-03-04", "2019/3/4", "11/18/2019", "04.03.2019"), as an amount YYYYMMDD ("day"),
YYYYMM00 ("month") or MMDD ("md", a day without a year)."""

from __future__ import annotations

import re
from typing import cast

_MONTHS = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "may": 5,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
MON = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
    r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\b"
)
DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?(?![\d%])"
YEAR4 = r"(?:1[6-9]|20)\d\d(?!\d)"
MONTH_TAILS = frozenset("nbhlyegtprvc.,f")  # last characters of "Jan", "March", "Sept.", "May," "of"
LB_MONTH = re.compile(rf"(?<![A-Za-z]){MON}\.?,?\s+(?:of\s+)?$")
AT_MONTH = re.compile(
    rf"(?P<mdy>(?P<m1>{MON})\.?\s+(?P<d1>{DAY})(?:,?\s+(?P<y1>{YEAR4}))?)"
    rf"|(?P<my>(?P<m3>{MON})\.?,?\s+(?:of\s+)?(?P<y3>{YEAR4}))"
)


def date_value(m: re.Match) -> tuple[float, str] | None:
    g = m.lastgroup
    if g == "iso":
        return int(m["iy"]) * 10000 + int(m["im"]) * 100 + int(m["id"]), "day"
    if g == "ymd":
        y, mo, d = int(m["yy"]), int(m["ym"]), int(m["yd"])
        return (y * 10000 + mo * 100 + d, "day") if 1 <= mo <= 12 and 1 <= d <= 31 else None
    if g == "num_date":
        a, b, y = int(m["na"]), int(m["nb"]), int(m["ny"])
        if m["ns"] == "/":  # 11/18/2019: month first unless impossible
            mo, d = (a, b) if a <= 12 else (b, a)
        else:  # 04.03.2019, 04-03-2019: day first unless impossible
            d, mo = (a, b) if b <= 12 else (b, a)
        return (y * 10000 + mo * 100 + d, "day") if 1 <= mo <= 12 and 1 <= d <= 31 else None
    if g in ("mdy", "dmy"):
        k = "1" if g == "mdy" else "2"
        mon = _MONTHS[m["m" + k][:3].lower()]
        day = int(cast(re.Match[str], _LEADING_DIGITS.match(m["d" + k]))[0])  # a day group starts with digits
        year = m["y" + k]
        if year:
            return int(year) * 10000 + mon * 100 + day, "day"
        return mon * 100 + day, "md"
    if g == "my":
        return int(m["y3"]) * 10000 + _MONTHS[m["m3"][:3].lower()] * 100, "month"
    return None


_LEADING_DIGITS = re.compile(r"\d+")
DATE_GROUPS = frozenset({"iso", "ymd", "num_date", "mdy", "dmy", "my"})
