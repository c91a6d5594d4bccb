"""Units of measure after a number, each mapped to one canonical unit ("km/h", "mi", "GB", "°C",
"year"...): written out ("miles per hour", "square feet"), as symbols (case-sensitive: "m" metre vs
"M"; "g" gram vs "5G") and after one adjective ("four straight years")."""

from __future__ import annotations

import re

UNIT_WORDS: dict[str, str] = {}


def _words(canon: str, *forms: str) -> None:
    for f in forms:
        UNIT_WORDS[f] = canon


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
UNIT_SYMBOLS = {
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
ADJ_UNITS = re.compile(r"\s+([a-z]{3,})\s+(years?|hours?|minutes?|days?|weeks?|months?|miles?|seconds?|decades?)\b")

_UNIT_WORD_ALT = "|".join(sorted((re.escape(w) for w in UNIT_WORDS), key=len, reverse=True)).replace(r"\ ", r"\s+")
_UNIT_SYM_ALT = "|".join(sorted((re.escape(w) for w in UNIT_SYMBOLS), key=len, reverse=True))
UNIT = re.compile(rf"(?:[ \u00a0]?|-)(?:(?P<w>(?i:{_UNIT_WORD_ALT}))|(?P<s>{_UNIT_SYM_ALT}))(?![A-Za-z0-9])")
DEG_UNIT = re.compile(r"\s?[°º]\s?([CF])?(?![A-Za-z])")

# The physical dimension of each canonical unit: "How tall?" is answered by a length, not by a
# price or a year count (app/language/question.py reads the dimension a question asks for).
_DIMENSION_UNITS = {
    "length": ("m", "km", "cm", "mm", "nm", "mi", "ft", "in", "yd"),
    "speed": ("mph", "km/h", "m/s", "kn"),
    "mass": ("g", "kg", "mg", "lb", "oz", "t"),
    "duration": ("s", "min", "h", "day", "week", "month", "year", "decade", "century"),
    "temperature": ("°C", "°F", "°"),
    "area": ("m²", "km²", "mi²", "ft²", "acre", "ha"),
    "power": ("W", "kW", "MW", "GW", "hp"),
    "torque": ("Nm", "lb-ft"),
}
UNIT_DIMENSION: dict[str, str] = {unit: dim for dim, units in _DIMENSION_UNITS.items() for unit in units}


def of_dimension(unit: str, dimensions: frozenset[str]) -> bool:
    """Is a canonical unit of one of these dimensions ("km" of "length")?"""
    return UNIT_DIMENSION.get(unit) in dimensions
