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

from app.language.values.find import KINDS, Value, find_values, same_value
from app.language.values.number_words import parse_number

__all__ = ["Value", "find_values", "parse_number", "same_value", "KINDS"]
