"""Values stated in text: prices, counts, measures, percentages, dates, versions and years, in
their common written forms ("$410m", "410 million dollars", "twenty-five euros", "3 per cent",
"nine hundred employees", "6.4-inch", "March 4, 2019", "v2.4.1"), normalised so that two ways of
writing one value compare equal (``same_value``).

How it reads a sentence (all patterns compiled at import): a one-class regex finds each digit (re
skips to it in C, so a sentence without numbers costs next to nothing); the few characters before
it say whether a month, a currency, "version" or a phone prefix starts the value there, or whether
the digit is no value's start at all (inside "A350", "COVID-19", a URL path, "No. 1", "§ 68"); a
pattern matched at that point reads dates, clock times and phone numbers (which hold no value),
dotted versions and numbers. Number words are read only when the sentence holds one (a set test),
as runs parsed by ``parse_number``'s word grammar ("three four" is two numbers). Each number is then
typed by what follows it (a scale word, a percent sign, a currency word, a unit, a counted noun)
and what precedes it (a currency; a name: "Windows 10" is a name, not a count). Ranges ("20-30
minutes", "$40-50 billion", "between 20 and 30 people") give the first end the second's unit.

Conventions (what ``Value`` holds):
- price: amount in units of the currency (``$410m`` -> 410e6), unit an ISO 4217 code; "$" is USD.
- count: a number of things ("900 people", "a dozen cars"); unit "". The word "one" alone is
  never a count ("one of the", "one day"), digits are ("1 tackle").
- measure: a number with a physical, data or time unit; unit canonical ("km/h", "mi", "GB",
  "°C", "year"...). No conversion between units: "40 mph" and "64 km/h" differ.
- percent: unit "%" (or "pp" for percentage points).
- date: amount YYYYMMDD with unit "day"; YYYYMM00 with unit "month" ("November 2018"); MMDD
  with unit "md" (a day without a year: "July 25").
- year: amount the year ("in 2019"); unit "".
- version: amount None, unit the dotted version without "v" ("v2.4.1" -> "2.4.1").
- number: a bare number with none of the above ("Employees: 900"); only returned when asked for
  by name in ``kinds`` (it is too weak a signal to be listed by default).

Hand-written: on the labelled set (eval/labelled/values.jsonl, bench/values.py) it measured more
accurate than price-parser, quantulum3, dateparser's search_dates, word2number, text2num and
number-parser at their parts of the job, and 5-100x faster than all but text2num.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from app.language.text import STOP_WORDS

__all__ = ["Value", "find_values", "parse_number", "same_value", "KINDS"]

KINDS = frozenset({"price", "count", "measure", "percent", "date", "version", "year", "number"})
_DEFAULT_KINDS = KINDS - {"number"}


@dataclass(frozen=True, slots=True)
class Value:
    kind: str  # "price" | "count" | "measure" | "percent" | "date" | "version" | "year" | "number"
    amount: float | None  # normalised number: "$410m" -> 410e6, "twenty-five euros" -> 25.0
    unit: str  # price: ISO code; measure: canonical unit; percent: "%"; count/year/number: ""
    text: str  # the surface form as found
    start: int
    end: int


# ---------------------------------------------------------------------------------------------
# Number words

_SMALL_WORDS = {
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
_TENS_WORDS = {
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
_SCALE_WORDS = {
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
_SCALE_ABBREV = {
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
            *_SMALL_WORDS,
            *_TENS_WORDS,
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
_WORDNUM = (
    rf"(?:{_NUMBER_WORD_ALT}|an?{_SCALE_AHEAD})\b"
    rf"(?:[-\s]+(?:and[-\s]+)?(?:{_NUMBER_WORD_ALT}|an?{_SCALE_AHEAD})\b)*"
)
_WORD_TOKEN = re.compile(r"[a-z]+")


def _parse_words(words: list[str]) -> float | None:
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
            if i + 1 < n and (words[i + 1] in _SCALE_WORDS or words[i + 1] == "dozen"):
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
        if w in _TENS_WORDS:
            if last in ("unit", "teen", "tens", "half"):
                return None
            current += _TENS_WORDS[w]
            last = "tens"
        elif w in _SMALL_WORDS:
            v = _SMALL_WORDS[w]
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
        elif w in _SCALE_WORDS:
            if last == "scale" and not current:
                return None
            total += (current or 1.0) * _SCALE_WORDS[w]
            current = 0.0
            last = "scale"
        else:
            return None
        seen = True
        i += 1
    if not seen:
        return None
    return total + current


_LEADING_SCALES = frozenset({*_SCALE_WORDS, "dozen"})


_NUMERIC = re.compile(r"^(?P<int>\d{1,3}(?:,\d{3})+|\d*)(?P<dec>\.\d+)?(?P<frac>[½¼¾⅓⅔⅛])?$")
_PARSE_SPLIT = re.compile(r"^\s*([\d.,½¼¾⅓⅔⅛]+)\s*-?\s*([A-Za-z]*)\s*$")


def _digits_value(s: str) -> float | None:
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
        v = _digits_value(m[1])
        if v is None:
            return None
        scale = m[2]
        if not scale:
            return v
        if scale in _SCALE_ABBREV:
            return v * _SCALE_ABBREV[scale]
        if scale in _SCALE_WORDS:
            return v * _SCALE_WORDS[scale]
        if scale == "dozen":
            return v * 12
        return None
    # digits then scale words ("2.5 million", "3 dozen"), or number words
    parts = s.replace("-", " ").split()
    if parts and parts[0][0].isdigit():
        v = _digits_value(parts[0])
        if v is None:
            return None
        for w in parts[1:]:
            if w in _SCALE_WORDS:
                v *= _SCALE_WORDS[w]
            elif w == "dozen":
                v *= 12
            else:
                return None
        return v
    words = _WORD_TOKEN.findall(s)
    if " ".join(words) != " ".join(parts):
        return None
    return _parse_words(words)


# ---------------------------------------------------------------------------------------------
# Currencies

_CUR_PREFIX = {
    "$": "USD",
    "us$": "USD",
    "us $": "USD",
    "u.s.$": "USD",
    "a$": "AUD",
    "au$": "AUD",
    "c$": "CAD",
    "ca$": "CAD",
    "can$": "CAD",
    "nz$": "NZD",
    "hk$": "HKD",
    "s$": "SGD",
    "nt$": "TWD",
    "mx$": "MXN",
    "r$": "BRL",
    "€": "EUR",
    "£": "GBP",
    "¥": "JPY",
    "cn¥": "CNY",
    "₹": "INR",
    "₩": "KRW",
    "₽": "RUB",
    "₺": "TRY",
    "₪": "ILS",
    "₱": "PHP",
    "₦": "NGN",
    "₫": "VND",
    "฿": "THB",
    "rs": "INR",
    "rs.": "INR",
}
_ISO = (
    "USD EUR GBP JPY CHF CAD AUD NZD CNY RMB HKD INR SGD SEK NOK DKK KRW BRL MXN ZAR RUB TRY PLN TWD AED SAR "
    "ILS THB IDR MYR PHP NGN"
).split()
# A currency before a number, read backwards from the number's first digit.
_LB_CUR = re.compile(
    r"(?:(?<![A-Za-z])(?:US ?|U\.S\.|AU|A|CA|Can|C|NZ|HK|NT|MX|S|R)\$|(?<![A-Za-z])CN¥|[$€£¥₹₩₽₺₪₱₦₫฿]"
    rf"|(?<![A-Za-z])(?:Rs\.?|{'|'.join(_ISO)}))\s?$"
)

_CUR_WORDS = {
    "dollar": "USD",
    "us dollar": "USD",
    "u.s. dollar": "USD",
    "american dollar": "USD",
    "canadian dollar": "CAD",
    "australian dollar": "AUD",
    "hong kong dollar": "HKD",
    "new zealand dollar": "NZD",
    "singapore dollar": "SGD",
    "taiwan dollar": "TWD",
    "taiwanese dollar": "TWD",
    "euro": "EUR",
    "pound sterling": "GBP",
    "sterling": "GBP",
    "british pound": "GBP",
    "yen": "JPY",
    "yuan": "CNY",
    "renminbi": "CNY",
    "rupee": "INR",
    "indian rupee": "INR",
    "rouble": "RUB",
    "ruble": "RUB",
    "swiss franc": "CHF",
    "franc": "CHF",
    "peso": "MXN",
    "mexican peso": "MXN",
    "real": "BRL",
    "reais": "BRL",
    "rand": "ZAR",
    "lira": "TRY",
    "dirham": "AED",
    "riyal": "SAR",
    "naira": "NGN",
    "shekel": "ILS",
    "zloty": "PLN",
    "baht": "THB",
    "ringgit": "MYR",
    "rupiah": "IDR",
    "won": "KRW",
    "cent": "USD/100",
    "euro cent": "EUR/100",
    "pence": "GBP/100",
    "penny": "GBP/100",
    "krona": "SEK",
    "kronor": "SEK",
    "krone": "NOK",
    "kroner": "NOK",
}
# Words that only name a currency after a scale ("3 billion won"; "3 won" is a verb).
_CUR_NEEDS_SCALE = {"won", "real", "rand"}
_CUR_WORD_ALT = "|".join(sorted((re.escape(w) for w in _CUR_WORDS), key=len, reverse=True))
_CUR_SUFFIX = re.compile(
    rf"[\s-]?(?:(?P<w>(?:{_CUR_WORD_ALT})(?:s|es)?)\b|(?P<iso>{'|'.join(_ISO)})\b|(?P<sym>[€£¥₹₩₽₺₪₱₦₫฿]))"
    r"|(?P<pounds>[\s-]?(?:British\s+)?pounds?(?:\s+sterling)?\b)",
    re.I,
)

# ---------------------------------------------------------------------------------------------
# Units

_UNIT_WORDS: dict[str, str] = {}


def _words(canon: str, *forms: str) -> None:
    for f in forms:
        _UNIT_WORDS[f] = canon


_words("mph", "miles per hour", "mile per hour", "miles an hour", "mile an hour")
_words(
    "km/h",
    "kilometres per hour",
    "kilometers per hour",
    "kilometre per hour",
    "kilometer per hour",
    "kilometres an hour",
    "kilometers an hour",
)
_words("m/s", "metres per second", "meters per second")
_words("mpg", "miles per gallon", "mile per gallon")
_words("km/L", "kilometres per litre", "kilometers per liter", "kilometres per liter", "kilometers per litre")
_words("MB/s", "megabytes per second")
_words("GB/s", "gigabytes per second")
_words("Mbps", "megabits per second")
_words("Gbps", "gigabits per second")
_words("mi²", "square miles", "square mile", "sq miles", "sq mi")
_words("km²", "square kilometres", "square kilometers", "square kilometre", "square kilometer", "sq km")
_words("m²", "square metres", "square meters", "square metre", "square meter", "sq m")
_words("ft²", "square feet", "square foot", "sq ft", "sq. ft.")
_words("°C", "degrees celsius", "degrees centigrade", "degree celsius", "°c", "ºc", "° c", "celsius")
_words("°F", "degrees fahrenheit", "degree fahrenheit", "°f", "ºf", "° f", "fahrenheit")
_words("°", "degrees", "degree", "°", "º")
_words("lb-ft", "lb-ft", "lb ft", "pound-feet", "pound-foot", "foot-pounds")
_words("Nm", "newton-metres", "newton metres", "newton-meters", "newton meters")
_words("mi", "miles", "mile")
_words("km", "kilometres", "kilometers", "kilometre", "kilometer", "kms")
_words("m", "metres", "meters", "metre", "meter")
_words("cm", "centimetres", "centimeters", "centimetre", "centimeter")
_words("mm", "millimetres", "millimeters", "millimetre", "millimeter")
_words("in", "inches", "inch", "in.")
_words("ft", "feet", "foot")
_words("yd", "yards", "yard")
_words("g", "grams", "gram", "grammes", "gramme")
_words("kg", "kilograms", "kilogram", "kilogrammes", "kilos", "kilo")
_words("mg", "milligrams", "milligram")
_words("lb", "pounds", "pound", "lbs.", "lb.")
_words("oz", "ounces", "ounce", "oz.")
_words("t", "tonnes", "tonne", "tons", "ton", "metric tons")
_words("L", "litres", "liters", "litre", "liter")
_words("mL", "millilitres", "milliliters", "millilitre", "milliliter")
_words("gal", "gallons", "gallon")
_words("cup", "cups", "cup")
_words("tsp", "teaspoons", "teaspoon", "tsp.")
_words("tbsp", "tablespoons", "tablespoon", "tbsp.")
_words("s", "seconds", "second", "secs", "sec")
_words("min", "minutes", "minute", "mins")
_words("h", "hours", "hour", "hrs", "hr")
_words("day", "days", "day")
_words("week", "weeks", "week")
_words("month", "months", "month")
_words("year", "years", "year", "yrs", "yr")
_words("decade", "decades", "decade")
_words("century", "centuries", "century")
_words("Hz", "hertz")
_words("kHz", "kilohertz")
_words("MHz", "megahertz")
_words("GHz", "gigahertz")
_words("W", "watts", "watt")
_words("kW", "kilowatts", "kilowatt")
_words("MW", "megawatts", "megawatt")
_words("GW", "gigawatts", "gigawatt")
_words("kWh", "kilowatt-hours", "kilowatt hours", "kilowatt-hour", "kilowatt hour")
_words("V", "volts", "volt")
_words("A", "amps", "amp", "amperes", "ampere")
_words("KB", "kilobytes", "kilobyte")
_words("MB", "megabytes", "megabyte")
_words("GB", "gigabytes", "gigabyte")
_words("TB", "terabytes", "terabyte")
_words("PB", "petabytes", "petabyte")
_words("hp", "horsepower", "bhp")
_words("dB", "decibels", "decibel")
_words("MP", "megapixels", "megapixel")
_words("fps", "frames per second", "frame per second")
_words("acre", "acres", "acre")
_words("ha", "hectares", "hectare")
_words("kn", "knots", "knot")
# Symbols, case-sensitive ("m" metre vs "M"; "g" gram vs "5G").
_UNIT_SYMBOLS = {
    "mph": "mph",
    "MPH": "mph",
    "km/h": "km/h",
    "kph": "km/h",
    "kmh": "km/h",
    "km/hr": "km/h",
    "KPH": "km/h",
    "m/s": "m/s",
    "mpg": "mpg",
    "MPG": "mpg",
    "km": "km",
    "m": "m",
    "cm": "cm",
    "mm": "mm",
    "mi": "mi",
    "ft": "ft",
    "yd": "yd",
    '"': "in",
    "″": "in",
    "g": "g",
    "kg": "kg",
    "mg": "mg",
    "lb": "lb",
    "lbs": "lb",
    "oz": "oz",
    "mL": "mL",
    "ml": "mL",
    "L": "L",
    "l": "L",
    "gal": "gal",
    "tsp": "tsp",
    "Tbsp": "tbsp",
    "tbsp": "tbsp",
    "TBSP": "tbsp",
    "ms": "ms",
    "h": "h",
    "min": "min",
    "Hz": "Hz",
    "kHz": "kHz",
    "MHz": "MHz",
    "GHz": "GHz",
    "W": "W",
    "kW": "kW",
    "MW": "MW",
    "GW": "GW",
    "Wh": "Wh",
    "kWh": "kWh",
    "MWh": "MWh",
    "GWh": "GWh",
    "mAh": "mAh",
    "V": "V",
    "kV": "kV",
    "KB": "KB",
    "kB": "KB",
    "MB": "MB",
    "GB": "GB",
    "TB": "TB",
    "PB": "PB",
    "Kbps": "Kbps",
    "kbps": "Kbps",
    "Mbps": "Mbps",
    "Gbps": "Gbps",
    "MB/s": "MB/s",
    "GB/s": "GB/s",
    "hp": "hp",
    "bhp": "hp",
    "HP": "hp",
    "dB": "dB",
    "dBA": "dB",
    "dBa": "dB",
    "MP": "MP",
    "mAH": "mAh",
    "ha": "ha",
    "nm": "nm",
    "cc": "cc",
    "KG": "kg",
    "Kg": "kg",
    "GHZ": "GHz",
    "MHZ": "MHz",
    "KM": "km",
    "kt": "kn",
    "fps": "fps",
    "FPS": "fps",
}
# Units that may stand after one adjective ("four straight years", "eight more hours").
_ADJ_UNITS = re.compile(r"\s+([a-z]{3,})\s+(years?|hours?|minutes?|days?|weeks?|months?|miles?|seconds?|decades?)\b")

_UNIT_WORD_ALT = "|".join(sorted((re.escape(w) for w in _UNIT_WORDS), key=len, reverse=True)).replace(r"\ ", r"\s+")
_UNIT_SYM_ALT = "|".join(sorted((re.escape(w) for w in _UNIT_SYMBOLS), key=len, reverse=True))
_UNIT = re.compile(rf"(?:[ \u00a0]?|-)(?:(?P<w>(?i:{_UNIT_WORD_ALT}))|(?P<s>{_UNIT_SYM_ALT}))(?![A-Za-z0-9])")
_DEG_UNIT = re.compile(r"\s?[°º]\s?([CF])?(?![A-Za-z])")

_SCALE_AFTER = re.compile(
    r"[\s-]?(?P<w>(?i:hundred|thousand|million|billion|trillion|dozen|lakhs?|lac|crores?|mn|mln|"
    r"bn|bln|tn|trn)|cr)\b"
)
_PERCENT = re.compile(
    r"\s?(?:%|％)|[\s-]?(?i:percent|per\s?cent|pct|pc)\b(?!\.\d)|(?P<pp>\s?(?i:percentage[\s-]points?|"
    r"ppts?|pp)\b)"
)
_NEXT_WORD = re.compile(r"(?:\s+or\s+(?:more|so)|\s*\+|\s+plus)?\s+(?P<w>[A-Za-z][A-Za-z'’]*)")
_PREV_TOKEN = re.compile(r"(?:^|(?<=[\s(\"“‘']))([A-Za-z][\w&.+'’-]*)\s+$")
_RANGE_SEP = re.compile(r"\s*[-–—]\s*|\s+to\s+|-to-|\s+and\s+|\s+or\s+|\s*/\s*(?=[$€£])", re.I)

# Words after a number that show it counts nothing ("the 11 is", "at 9 on Monday").
_NOT_NOUNS = frozenset(
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
    | set(_SMALL_WORDS)
    | set(_TENS_WORDS)
    | set(_SCALE_WORDS)
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
_QUANTITY_CUE = re.compile(
    r"\b(?:than|about|around|nearly|almost|some|over|roughly|approximately|estimated|another|"
    r"all|the|employs|employed|had|has|have|with)\s+$",
    re.I,
)

# ---------------------------------------------------------------------------------------------
# The scanner

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
_MON = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
    r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\b"
)
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?(?![\d%])"
_YEAR4 = r"(?:1[6-9]|20)\d\d(?!\d)"
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?[½¼¾⅓⅔⅛]?|[½¼¾⅓⅔⅛]|\.\d+"

_DIGIT = re.compile(r"[\d½¼¾⅓⅔⅛]")  # one class: re skips to it in C, the hot path's whole cost
_TOKEN_REST = re.compile(r"[\w.,-]*")  # matches everywhere (maybe empty): .match() is never None
_TRAP_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-–][A-Za-z0-9]+)*[-–]$")  # "COVID-", "A350-", "i5-"
_TRAP_EXCEPT = frozenset({"mid", "pre", "post", "late", "early", "top", "over", "under", "sub", "than"})
# What may stand right before a number's first digit, read backwards from it.
_MONTH_TAILS = frozenset("nbhlyegtprvc.,f")  # last characters of "Jan", "March", "Sept.", "May," "of"
_CUR_SYMBOLS = frozenset("$€£¥₹₩₽₺₪₱₦₫฿")
_CUR_SYM_ISO = {
    "€": "EUR",
    "£": "GBP",
    "¥": "JPY",
    "₹": "INR",
    "₩": "KRW",
    "₽": "RUB",
    "₺": "TRY",
    "₪": "ILS",
    "₱": "PHP",
    "₦": "NGN",
    "₫": "VND",
    "฿": "THB",
}
_CUR_TAILS = frozenset("$.ABCDEFGHIJKLMNOPQRSTUVWXYZs¥")  # "US $ 5", "Rs. 5", "CHF 45", "Rs 200"
_LB_MONTH = re.compile(rf"(?<![A-Za-z]){_MON}\.?,?\s+(?:of\s+)?$")
_LB_VERSION = re.compile(r"(?<![\w.])[Vv]ersion\s+$")
_LB_PHONE = re.compile(r"(?:(?<![\w)])\(|(?<![\w+])\+\d{0,3}[\s.-]?\(?)$")
_LB_SIGN = re.compile(r"(?:\bNos?\.\s*|[#§¶]\s*)$")  # "No. 1", "#3", "§ 68": ranks and sections, not values

_AT_MONTH = re.compile(
    rf"(?P<mdy>(?P<m1>{_MON})\.?\s+(?P<d1>{_DAY})(?:,?\s+(?P<y1>{_YEAR4}))?)"
    rf"|(?P<my>(?P<m3>{_MON})\.?,?\s+(?:of\s+)?(?P<y3>{_YEAR4}))"
)
_AT_VERSION = re.compile(r"(?:[vV]|[Vv]ersion\s+)(?P<v>\d+(?:\.\d+)*)(?!\w|\.\d)")
_AT_PHONE = re.compile(r"\+\d{1,3}(?:[\s.-]?\(?\d+\)?){2,}|\(\d{3}\)\s?\d{3}[.-]\d{4}(?!\d)")
_AT_DIGIT = re.compile(
    r"(?P<phone>(?:1[\s.-])?\d{3}[.-]\d{3}[.-]\d{4}(?!\d))"
    r"|(?P<time>\d{1,2}:\d\d(?::\d\d)?(?:\s?(?:[ap]\.m\.|[AaPp][Mm]\b))?|\d{1,2}\s?(?:[ap]\.m\.|[AaPp][Mm]\b)|\d+/7\b)"
    rf"|(?P<iso>(?P<iy>{_YEAR4})-(?P<im>0[1-9]|1[0-2])-(?P<id>0[1-9]|[12]\d|3[01])(?!\d))"
    rf"|(?P<ymd>(?P<yy>{_YEAR4})(?P<ys>[/.])(?P<ym>\d\d?)(?P=ys)(?P<yd>\d\d?)(?!\d|\.\d))"
    rf"|(?P<num_date>(?P<na>\d\d?)(?P<ns>[/.-])(?P<nb>\d\d?)(?P=ns)(?P<ny>{_YEAR4}))"
    rf"|(?P<dmy>(?P<d2>{_DAY})\s+(?:of\s+)?(?P<m2>{_MON})\.?(?:,?\s+(?P<y2>{_YEAR4}))?)"
    r"|(?P<version>(?P<vd>\d+\.\d+\.\d+(?:\.\d+)*)(?!\w|\.\d))"
    rf"|(?P<num>{_DIGITS})(?P<suf>[A-Za-z]\w*)?(?!\w)"
)
# Number words: a set test first (most sentences have none), then the run at each such word.
_NUMBER_WORDS = frozenset(
    {*_SMALL_WORDS, *_TENS_WORDS, "hundred", "thousand", "million", "billion", "trillion", "dozen", "lakh", "crore"}
)
_LOWER_WORD = re.compile(r"[a-z]+")
_ALPHA_WORD = re.compile(r"(?<![\w.])[A-Za-z]+")
_WORDNUM_AT = re.compile(rf"(?i:{_WORDNUM})")
_WORD_STARTS = _NUMBER_WORDS | {"a", "an", "half"}
_HYPHEN_HEAD = re.compile(r"([A-Za-z]+)[-–]$")


@dataclass(slots=True)
class _Item:
    kind: str  # a Value kind, "bare" (a number with nothing to type it) or "drop"
    amount: float | None
    unit: str
    start: int
    end: int
    scale: float = 1.0  # the scale word or suffix it carried ("billion" -> 1e9)
    weak: bool = False  # "one" alone: no value unless a range gives it a unit
    after_name: bool = False  # right after a name ("Windows 10", "Python 3.11")


def _date_value(m: re.Match) -> tuple[float, str] | None:
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
_DATE_GROUPS = frozenset({"iso", "ymd", "num_date", "mdy", "dmy", "my"})


def _is_name(text: str, start: int) -> bool:
    """A capitalised word right before ``start`` that is not a function word ("Windows 10")."""
    m = _PREV_TOKEN.search(text, max(0, start - 40), start)
    if not m:
        return False
    tok = m.group(1)
    if not any(c.isupper() for c in tok):
        return False
    return tok.lower().rstrip(".") not in _FUNCTION_WORDS


def _plural(word: str) -> bool:
    w = word.lower()
    if w in _IRREGULAR_PLURALS:
        return True
    return len(w) > 2 and w.endswith("s") and not w.endswith(("ss", "us", "is")) and w not in _S_VERBS


def _classify(
    text: str,
    start: int,
    end: int,
    amount: float,
    cur: str | None,
    suf: str | None,
    items: list[_Item],
    year_ok: bool,
    weak: bool = False,
) -> None:
    """Type the number text[start:end] (value ``amount``) from its context and append it."""
    scale = 1.0
    if suf:
        low = suf.lower()
        if cur and low in _SCALE_ABBREV:
            scale = _SCALE_ABBREV[low]
        elif low in _SCALE_WORDS or low in ("bn", "mn", "mln", "bln", "tn", "trn") or suf == "k":
            scale = _SCALE_WORDS.get(low) or _SCALE_ABBREV[low]  # "4.1bn", "10k"
        elif low in _SCALE_ABBREV and _CUR_SUFFIX.match(text, end):
            scale = _SCALE_ABBREV[low]  # "500m euros", "5K dollars"
        elif not cur and suf == "in":
            items.append(_Item("measure", amount, "in", start, end))  # "5ft 4in"
            return
        elif not cur and suf in _UNIT_SYMBOLS:
            items.append(_Item("measure", amount, _UNIT_SYMBOLS[suf], start, end))
            return
        elif not cur and low in _UNIT_WORDS:
            items.append(_Item("measure", amount, _UNIT_WORDS[low], start, end))
            return
        else:
            return  # a model number, an ordinal, "4K", "5G", "1990s": not a value
    else:
        m = _SCALE_AFTER.match(text, end)
        if m:
            w = m["w"].lower()
            scale = _SCALE_WORDS.get(w) or _SCALE_ABBREV.get(w) or (12.0 if w == "dozen" else 1.0)
            end = m.end()
    amount *= scale
    if cur:
        key = cur.strip().lower()
        iso = _CUR_PREFIX.get(key) or _CUR_PREFIX.get(key.replace(" ", ""))
        if not iso:
            iso = key.rstrip(".").upper()
            iso = {"RMB": "CNY", "RS": "INR"}.get(iso, iso)
        items.append(_Item("price", amount, iso, start, end, scale))
        return
    m = _PERCENT.match(text, end)
    if m:
        items.append(_Item("percent", amount, "pp" if m["pp"] else "%", start, m.end(), scale))
        return
    m = _CUR_SUFFIX.match(text, end)
    if m:
        iso = None
        if m["pounds"]:
            if scale > 1 or "sterling" in m["pounds"].lower():
                iso = "GBP"
        elif m["w"]:
            w = " ".join(m["w"].lower().split())
            key = w if w in _CUR_WORDS else w[:-1] if w[:-1] in _CUR_WORDS else w[:-2]
            iso = _CUR_WORDS.get(key)
            if key in _CUR_NEEDS_SCALE and scale == 1:
                iso = None
        elif m["iso"]:
            iso = m["iso"].upper()
            iso = "CNY" if iso == "RMB" else iso
        else:
            iso = _CUR_SYM_ISO.get(m["sym"], "GBP")  # a symbol after the amount: "25 €", "60,000₩"
        if iso:
            if iso.endswith("/100"):
                iso, amount = iso[:3], amount / 100
            items.append(_Item("price", amount, iso, start, m.end(), scale))
            return
    if weak:  # "one day", "one of": no unit, no count
        items.append(_Item("bare", amount, "", start, end, scale, weak=True))
        return
    m = _UNIT.match(text, end)
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
            unit = _UNIT_WORDS[" ".join(m["w"].lower().split())] if m["w"] else _UNIT_SYMBOLS[sym]
            end2 = m.end()
            if unit == "year" and text.startswith("-old", end2):
                end2 += 4
            items.append(_Item("measure", amount, unit, start, end2, scale))
            return
    m = _DEG_UNIT.match(text, end)
    if m:
        items.append(_Item("measure", amount, "°" + (m[1] or ""), start, m.end(), scale))
        return
    m = _ADJ_UNITS.match(text, end)
    if m and m[1] not in _NOT_NOUNS:
        items.append(_Item("measure", amount, _UNIT_WORDS[m[2]], start, end, scale))
        return
    after_name = _is_name(text, start) if start else False
    year_like = year_ok and scale == 1 and (1900 if after_name else 1600) <= amount <= 2099
    m = _NEXT_WORD.match(text, end)
    if m:
        word = m["w"]
        low = word.lower()
        if low not in _NOT_NOUNS and not low.endswith(("'s", "’s")):
            if year_like:
                # "2019 Apple AirPods", "2016 election", "2023 revenues" are years; "some 2000 homes" a count
                if word[0].islower() and _plural(word) and _QUANTITY_CUE.search(text, max(0, start - 20), start):
                    items.append(_Item("count", amount, "", start, end, scale))
                else:
                    items.append(_Item("year", amount, "", start, end))
                return
            if not after_name or _plural(word) or amount == 1:
                items.append(_Item("count", amount, "", start, end, scale))
                return
    if year_like:
        items.append(_Item("year", amount, "", start, end))
        return
    items.append(_Item("bare", amount, "", start, end, scale, after_name=after_name))


def _word_numbers(text: str, start: int, end: int, items: list[_Item]) -> None:
    """Split a run of number words into numbers ("three four" -> 3, 4) and type each."""
    toks = [(m.group().lower(), m.start(), m.end()) for m in _WORD_TOKEN_I.finditer(text, start, end)]
    i, n = 0, len(toks)
    while i < n:
        found = None
        for j in range(n, i, -1):
            words = [t[0] for t in toks[i:j]]
            if words[-1] in ("and", "a", "an"):
                continue
            v = _parse_words(words)
            if v is not None:
                found = (j, v)
                break
        if found is None:
            i += 1
            continue
        j, v = found
        _classify(
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


def _scan_digits(text: str, items: list[_Item]) -> None:
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
                items.append(_Item("version", None, m["v"], m.start(), m.end()))  # "v2.4.1"
                pos = m.end()
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
        if prev == " " or prev in _CUR_SYMBOLS:
            lb = _LB_MONTH.search(text, window, p) if prev == " " and text[p - 2] in _MONTH_TAILS else None
            if lb:
                m = _AT_MONTH.match(text, lb.start())
                if m:
                    dv = _date_value(m)
                    if dv:
                        items.append(_Item("date", float(dv[0]), dv[1], m.start(), m.end()))
                        pos = m.end()
                        continue
            lb = _LB_CUR.search(text, max(0, p - 6), p) if prev != " " or text[p - 2] in _CUR_TAILS else None
            if lb:
                m = _AT_DIGIT.match(text, p)
                if m and m["num"] is not None:
                    amount = _digits_value(m["num"])
                    if amount is not None:
                        _classify(text, lb.start(), m.end(), amount, lb.group(), m["suf"], items, year_ok=False)
                        pos = max(m.end(), items[-1].end if items else 0)
                        continue
            if prev == " " and text[p - 2] == "n":
                lb = _LB_VERSION.search(text, window, p)
                if lb:
                    m = _AT_VERSION.match(text, lb.start())
                    if m:
                        items.append(_Item("version", None, m["v"], m.start(), m.end()))
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
            amount = _digits_value(num)
            if amount is not None:
                _classify(text, p, m.end(), amount, None, m["suf"], items, year_ok=len(num) == 4 and num.isdigit())
                pos = max(m.end(), items[-1].end if items else 0)
            else:
                pos = m.end()
            continue
        if g in _DATE_GROUPS:
            dv = _date_value(m)
            if dv:
                items.append(_Item("date", float(dv[0]), dv[1], m.start(), m.end()))
        elif g == "version":
            items.append(_Item("version", None, m["vd"], m.start(), m.end()))
        pos = m.end()  # phone numbers and clock times hold no value


def _scan_words(text: str, items: list[_Item]) -> None:
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
            _word_numbers(text, m.start(), m.end(), items)
            pos = max(m.end(), items[-1].end if items else 0)


def _scan(text: str) -> list[_Item]:
    items: list[_Item] = []
    _scan_digits(text, items)
    if not _NUMBER_WORDS.isdisjoint(_LOWER_WORD.findall(text.lower())):
        words: list[_Item] = []
        _scan_words(text, words)
        if words:
            if items:
                spans = [(i.start, i.end) for i in items]
                words = [w for w in words if not any(s < w.end and w.start < e for s, e in spans)]
                items = sorted(items + words, key=lambda i: i.start)
            else:
                items = words
    return items


_HYPHENS = frozenset({"-", "–", "—"})


def _link_ranges(text: str, items: list[_Item]) -> None:
    """ "20-30 minutes", "$40-50 billion", "between 20 and 30 people": the first end takes the
    second's kind, unit and scale; "$5-10": the second takes the first's currency."""
    for a, b in zip(items, items[1:]):
        sep = text[a.end : b.start]
        if not _RANGE_SEP.fullmatch(sep):
            continue
        dash = sep.strip() in _HYPHENS
        if a.kind == "year" and dash and b.kind in ("bare", "count", "year") and b.end - b.start in (2, 4):
            b.kind = "year" if b.end - b.start == 4 else "drop"  # "2019-20 season", "2019–2020"
            continue
        if (
            a.kind == "bare"
            and b.kind in ("price", "percent", "measure")
            or a.kind == "bare"
            and not a.after_name
            and b.kind == "count"
        ):
            if b.kind == "count":
                if dash:
                    nxt = _NEXT_WORD.match(text, b.end)
                    if not nxt or not _plural(nxt["w"]):
                        b.kind = "bare"  # "a 5-4 decision", "the 2-1 win"
                        continue
                if " and " in sep.lower() and not _BETWEEN.search(text, max(0, a.start - 9), a.start):
                    continue
            a.kind, a.unit, a.weak = b.kind, b.unit, False
            if b.scale > 1 and a.scale == 1 and a.amount is not None:
                a.amount *= b.scale
                a.scale = b.scale
        elif (
            a.kind == "price"
            and b.kind == "price"
            and a.unit == b.unit
            and b.scale > 1
            and a.scale == 1
            and a.amount is not None
            and b.amount is not None
            and a.amount * b.scale <= b.amount
        ):
            a.amount *= b.scale  # "$3 to $4 billion"
            a.scale = b.scale
        elif a.kind == "price" and b.kind == "bare" and not b.after_name and (dash or sep.strip() == "to"):
            b.kind, b.unit = "price", a.unit  # "$5-10"
            if b.scale > 1 and a.scale == 1 and a.amount is not None:
                a.amount *= b.scale
                a.scale = b.scale


_BETWEEN = re.compile(r"\bbetween\s+$", re.I)
_DOTTED = re.compile(r"\d+\.\d+")


def _versions_in_context(text: str, items: list[_Item]) -> None:
    """ "Python 3.11", "iOS 13.2": a dotted number right after a name is a version; so is a bare
    dotted number with the major of a version found ("faster than 3.10")."""
    for i in items:
        if i.kind == "bare" and i.after_name and _DOTTED.fullmatch(text, i.start, i.end):
            i.kind, i.unit, i.amount = "version", text[i.start : i.end], None
    majors = {i.unit.split(".")[0] for i in items if i.kind == "version"}
    if majors:
        for i in items:
            if (
                i.kind == "bare"
                and _DOTTED.fullmatch(text, i.start, i.end)
                and text[i.start : i.end].split(".")[0] in majors
            ):
                i.kind, i.unit, i.amount = "version", text[i.start : i.end], None


def find_values(text: str, kinds: Iterable[str] | None = None) -> list[Value]:
    """All values in ``text`` of the given kinds (default: all but "number"), in order of appearance,
    non-overlapping."""
    wanted = _DEFAULT_KINDS if kinds is None else frozenset(kinds)
    if not text:
        return []
    items = _scan(text)
    if not items:
        return []
    if len(items) > 1:
        _link_ranges(text, items)
    _versions_in_context(text, items)
    out: list[Value] = []
    for i in items:
        kind = i.kind
        if kind == "bare":
            if i.weak or i.after_name:
                continue
            kind = "number"
        if kind in wanted:
            out.append(Value(kind, i.amount, i.unit, text[i.start : i.end], i.start, i.end))
    return out


_EXACT_KINDS = frozenset({"date", "year", "version"})


def same_value(a: Value, b: Value) -> bool:
    """Same kind, unit and amount (within 0.5%; dates, years and versions exactly):
    "$410 million" == "410 million dollars" == "$410m"."""
    if a.kind != b.kind or a.unit != b.unit:
        return False
    if a.amount is None or b.amount is None:
        return a.amount is None and b.amount is None
    if a.kind in _EXACT_KINDS:
        return a.amount == b.amount
    x, y = a.amount, b.amount
    if x == y:
        return True
    return abs(x - y) <= 0.005 * max(abs(x), abs(y))
