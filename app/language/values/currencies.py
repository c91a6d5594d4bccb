"""Currencies before and after an amount: symbols and prefixes ("$", "US$", "€", "Rs."), ISO codes
("CHF 45", "45 CHF") and currency words ("410 million dollars", "twenty-five euros", "50 cents")."""

from __future__ import annotations

import re

CUR_PREFIX = {
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
LB_CUR = re.compile(
    r"(?:(?<![A-Za-z])(?:US ?|U\.S\.|AU|A|CA|Can|C|NZ|HK|NT|MX|S|R)\$|(?<![A-Za-z])CN¥|[$€£¥₹₩₽₺₪₱₦₫฿]"
    rf"|(?<![A-Za-z])(?:Rs\.?|{'|'.join(_ISO)}))\s?$"
)

CUR_WORDS = {
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
CUR_NEEDS_SCALE = {"won", "real", "rand"}
_CUR_WORD_ALT = "|".join(sorted((re.escape(w) for w in CUR_WORDS), key=len, reverse=True))
CUR_SUFFIX = re.compile(
    rf"[\s-]?(?:(?P<w>(?:{_CUR_WORD_ALT})(?:s|es)?)\b|(?P<iso>{'|'.join(_ISO)})\b|(?P<sym>[€£¥₹₩₽₺₪₱₦₫฿]))"
    r"|(?P<pounds>[\s-]?(?:British\s+)?pounds?(?:\s+sterling)?\b)",
    re.I,
)
CUR_SYMBOLS = frozenset("$€£¥₹₩₽₺₪₱₦₫฿")
CUR_SYM_ISO = {
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
CUR_TAILS = frozenset("$.ABCDEFGHIJKLMNOPQRSTUVWXYZs¥")  # "US $ 5", "Rs. 5", "CHF 45", "Rs 200"
