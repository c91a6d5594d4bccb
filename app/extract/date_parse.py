"""Parsing date strings found in pages: ISO stamps, numeric dates, month-name dates, URL paths.

Only plausible dates are returned (1995-01-01 .. tomorrow): a page cannot be published before the
web was common or in the future, and a wrong date is worse than none.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from dateutil import parser as dateutil_parser

MIN_DATE = date(1995, 1, 1)

_MONTHS = {
    # English, German, French, Spanish, Portuguese, Italian, Dutch (full names and common stems)
    "jan": 1,
    "january": 1,
    "januar": 1,
    "janvier": 1,
    "enero": 1,
    "janeiro": 1,
    "gennaio": 1,
    "januari": 1,
    "feb": 2,
    "february": 2,
    "februar": 2,
    "février": 2,
    "fevrier": 2,
    "febrero": 2,
    "fevereiro": 2,
    "febbraio": 2,
    "februari": 2,
    "mar": 3,
    "march": 3,
    "märz": 3,
    "mars": 3,
    "marzo": 3,
    "março": 3,
    "marco": 3,
    "maart": 3,
    "apr": 4,
    "april": 4,
    "avril": 4,
    "abril": 4,
    "aprile": 4,
    "may": 5,
    "mai": 5,
    "mayo": 5,
    "maio": 5,
    "maggio": 5,
    "mei": 5,
    "jun": 6,
    "june": 6,
    "juni": 6,
    "juin": 6,
    "junio": 6,
    "junho": 6,
    "giugno": 6,
    "jul": 7,
    "july": 7,
    "juli": 7,
    "juillet": 7,
    "julio": 7,
    "julho": 7,
    "luglio": 7,
    "aug": 8,
    "august": 8,
    "août": 8,
    "aout": 8,
    "agosto": 8,
    "augustus": 8,
    "sep": 9,
    "sept": 9,
    "september": 9,
    "septembre": 9,
    "septiembre": 9,
    "setembro": 9,
    "settembre": 9,
    "oct": 10,
    "october": 10,
    "oktober": 10,
    "octobre": 10,
    "octubre": 10,
    "outubro": 10,
    "ottobre": 10,
    "nov": 11,
    "november": 11,
    "novembre": 11,
    "noviembre": 11,
    "novembro": 11,
    "dec": 12,
    "december": 12,
    "dezember": 12,
    "décembre": 12,
    "decembre": 12,
    "diciembre": 12,
    "dezembro": 12,
    "dicembre": 12,
}
_MONTH_ALT = "|".join(sorted((re.escape(m) for m in _MONTHS), key=len, reverse=True))

_ISO_RE = re.compile(r"(?<!\d)((?:19|20)\d\d)-(\d\d?)-(\d\d?)(?!\d)")
_YMD_RE = re.compile(r"(?<!\d)((?:19|20)\d\d)[/.](\d\d?)[/.](\d\d?)(?!\d)")
_DMY_RE = re.compile(r"(?<![\d/.])(\d\d?)[/.\-](\d\d?)[/.\-]((?:19|20)\d\d)(?!\d)")
_CJK_RE = re.compile(r"((?:19|20)\d\d)\s*年\s*(\d\d?)\s*月\s*(\d\d?)\s*日")
_COMPACT_RE = re.compile(r"(?<!\d)((?:19|20)\d\d)(\d\d)(\d\d)(?:T?\d{4,6})?(?!\d)")
_MDY_TEXT_RE = re.compile(rf"\b({_MONTH_ALT})\.?\s+(\d\d?)(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)\b", re.I)
_DMY_TEXT_RE = re.compile(
    rf"\b(\d\d?)(?:st|nd|rd|th|er|º)?\.?\s+(?:de\s+)?({_MONTH_ALT})\.?,?\s+(?:de\s+)?((?:19|20)\d\d)\b", re.I
)
_URL_RE = re.compile(r"/((?:19|20)\d\d)[/_-](\d\d?)[/_-](\d\d?)(?:/|[_-]|$)")
_URL_COMPACT_RE = re.compile(r"[/_-]((?:19|20)\d\d)(\d\d)(\d\d)(?:[/_.-]|$)")


def plausible(year: int, month: int, day: int, today: date | None = None) -> date | None:
    try:
        found = date(year, month, day)
    except ValueError:
        return None
    latest = (today or datetime.now(UTC).date()) + timedelta(days=1)
    return found if MIN_DATE <= found <= latest else None


def parse_date(value: str, day_first: bool = True) -> date | None:
    """The first plausible date in a string (machine stamps first, then human forms)."""
    if not value:
        return None
    for regex in (_ISO_RE, _YMD_RE, _CJK_RE):
        m = regex.search(value)
        if m:
            found = plausible(int(m[1]), int(m[2]), int(m[3]))
            if found:
                return found
    return parse_human_date(value, day_first=day_first) or _compact(value)


def parse_human_date(value: str, day_first: bool = True) -> date | None:
    m = _MDY_TEXT_RE.search(value)
    if m:
        found = plausible(int(m[3]), _MONTHS[m[1].lower()], int(m[2]))
        if found:
            return found
    m = _DMY_TEXT_RE.search(value)
    if m:
        found = plausible(int(m[3]), _MONTHS[m[2].lower()], int(m[1]))
        if found:
            return found
    m = _DMY_RE.search(value)
    if m:
        a, b, year = int(m[1]), int(m[2]), int(m[3])
        first = plausible(year, b, a) if day_first else plausible(year, a, b)
        return first or (plausible(year, a, b) if day_first else plausible(year, b, a))
    return None


def _compact(value: str) -> date | None:
    m = _COMPACT_RE.fullmatch(value.strip())
    return plausible(int(m[1]), int(m[2]), int(m[3])) if m else None


def date_in_url(url: str) -> date | None:
    """/2020/03/15/ or /2020-03-15- or /20200315/ in the path (not the host or query)."""
    path = url.split("://", 1)[-1].split("?", 1)[0].split("#", 1)[0]
    path = path[path.find("/") :] if "/" in path else ""
    m = _URL_RE.search(path) or _URL_COMPACT_RE.search(path)
    return plausible(int(m[1]), int(m[2]), int(m[3])) if m else None


def parse_http_date(value: str) -> date | None:
    """RFC 7231 dates as sent in Last-Modified."""
    from email.utils import parsedate_to_datetime

    try:
        stamp = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return plausible(stamp.year, stamp.month, stamp.day) if stamp else None


# Standard-time UTC offsets (hours) of countries whose sites stamp times in UTC but show their
# readers the local day. Country-code domains only: a .com says nothing about where it publishes.
# DST is ignored: it moves the boundary by an hour at most.
TLD_UTC_OFFSET: dict[str, float] = {
    "ca": -5,
    "us": -5,
    "mx": -6,
    "br": -3,
    "ar": -3,
    "cl": -4,
    "co": -5,
    "pe": -5,
    "ve": -4,
    "cu": -5,
    "uk": 0,
    "ie": 0,
    "pt": 0,
    "is": 0,
    "fr": 1,
    "de": 1,
    "it": 1,
    "es": 1,
    "nl": 1,
    "be": 1,
    "lu": 1,
    "at": 1,
    "ch": 1,
    "pl": 1,
    "cz": 1,
    "sk": 1,
    "hu": 1,
    "se": 1,
    "no": 1,
    "dk": 1,
    "hr": 1,
    "si": 1,
    "rs": 1,
    "ng": 1,
    "gr": 2,
    "fi": 2,
    "ro": 2,
    "bg": 2,
    "ua": 2,
    "lt": 2,
    "lv": 2,
    "ee": 2,
    "md": 2,
    "il": 2,
    "eg": 2,
    "za": 2,
    "ru": 3,
    "tr": 3,
    "by": 3,
    "sa": 3,
    "ke": 3,
    "ir": 3.5,
    "ae": 4,
    "am": 4,
    "az": 4,
    "pk": 5,
    "kz": 6,
    "in": 5.5,
    "bd": 6,
    "th": 7,
    "vn": 7,
    "id": 7,
    "cn": 8,
    "hk": 8,
    "tw": 8,
    "sg": 8,
    "my": 8,
    "ph": 8,
    "jp": 9,
    "kr": 9,
    "au": 10,
    "nz": 12,
}
# ISO-like, seconds optional and tolerated with one digit ("23:15:0Z" is seen in the wild)
_UTC_STAMP_RE = re.compile(
    r"((?:19|20)\d\d)-(\d\d)-(\d\d)[T ](\d\d):(\d\d)(?::\d\d?(?:\.\d+)?)?\s*(?:Z|[+-]00:?00)(?!\d)"
)
_NAMED_UTC_RE = re.compile(r"\b(?:GMT|UTC)\b")


def utc_offset_for_url(url: str | None) -> float | None:
    if not url:
        return None
    host = url.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0].lower().rstrip(".")
    return TLD_UTC_OFFSET.get(host.rsplit(".", 1)[-1]) if "." in host else None


def utc_instant(raw: str) -> datetime | None:
    """The moment a stamp written in UTC names (naive, in UTC); None when ``raw`` is not a UTC stamp.
    ISO-like stamps by pattern; named ones ("Sun, 11 Oct 2020 07:34:36 GMT", a script's
    "Tue Nov 19 2019 03:05:46 GMT+0000") by dateutil, kept only when their offset is zero."""
    m = _UTC_STAMP_RE.search(raw)
    if m:
        try:
            return datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]))
        except ValueError:
            return None
    if len(raw) > 64 or not _NAMED_UTC_RE.search(raw):
        return None
    try:
        stamp = dateutil_parser.parse(raw)
        # utcoffset() itself raises for an offset of a day or more ("GMT+2400")
        if stamp.tzinfo is None or stamp.utcoffset() != timedelta(0):
            return None
    except (ValueError, OverflowError, TypeError):
        return None
    return stamp.replace(tzinfo=None)


def local_day_of_utc_stamp(raw: str, offset_hours: float) -> date | None:
    """The calendar day a UTC stamp falls on at the given offset (None if ``raw`` is not UTC)."""
    stamp = utc_instant(raw)
    if stamp is None:
        return None
    local = stamp + timedelta(hours=offset_hours)
    return plausible(local.year, local.month, local.day)


# The UTC offsets a publisher's local day can plausibly sit at (Hawaii to New Zealand).
LOCAL_OFFSET_RANGE = (-10.0, 12.0)


def utc_stamp_allows_day(raw: str, day: date) -> bool:
    """Whether a UTC stamp can be ``day`` somewhere a publisher plausibly sits: the stamp's instant
    falls on ``day`` at some offset in LOCAL_OFFSET_RANGE. False when ``raw`` is not a UTC stamp."""
    stamp = utc_instant(raw)
    if stamp is None:
        return False
    west, east = ((stamp + timedelta(hours=h)).date() for h in LOCAL_OFFSET_RANGE)
    return west <= day <= east
