"""Values in text (app.language.values): each written form the service must recognise, the
equivalences same_value draws, and the traps that hold no value."""

from __future__ import annotations

import pytest

from app.language.values import Value, find_values, parse_number, same_value


def found(text: str, kinds=None) -> list[tuple]:
    return [(v.kind, v.amount, v.unit) for v in find_values(text, kinds)]


def approx(rows: list[tuple]) -> list[tuple]:
    return [(k, pytest.approx(a, rel=1e-9) if a is not None else None, u) for k, a, u in rows]


@pytest.mark.parametrize(
    "text, expected",
    [
        # prices: symbols, scale suffixes and words, currency words, number words
        ("The startup raised $410m last year.", [("price", 410e6, "USD")]),
        ("The startup raised $410 million last year.", [("price", 410e6, "USD")]),
        ("The deal is worth 410 million dollars.", [("price", 410e6, "USD")]),
        ("The unit was valued at US$4.1bn.", [("price", 4.1e9, "USD")]),
        ("Tickets cost €25 at the door.", [("price", 25, "EUR")]),
        ("Tickets cost 25 euros at the door.", [("price", 25, "EUR")]),
        ("Tickets cost twenty-five euros at the door.", [("price", 25, "EUR")]),
        ("The club agreed a £1.2 billion fee.", [("price", 1.2e9, "GBP")]),
        ("A bowl of ramen costs ¥500.", [("price", 500, "JPY")]),
        ("The ministry set aside Rs 200 crore.", [("price", 2e9, "INR")]),
        ("He spent Rs 24 lakh on it.", [("price", 2.4e6, "INR")]),
        ("Tickets start at CHF 45.", [("price", 45, "CHF")]),
        ("The miner paid A$30 million and C$12m in fees.", [("price", 30e6, "AUD"), ("price", 12e6, "CAD")]),
        ("The fine was 3,000 yuan.", [("price", 3000, "CNY")]),
        ("Investors were told 176 Hong Kong dollars a share.", [("price", 176, "HKD")]),
        ("A bottle costs 99 cents.", [("price", 0.99, "USD")]),
        ("Chelsea paid the £71.6million fee.", [("price", 71.6e6, "GBP")]),
        ("They offered 500k euros.", [("price", 5e5, "EUR")]),
        ("The transfer was worth 38 million pounds.", [("price", 38e6, "GBP")]),
        # percentages
        ("Prices rose 3 percent.", [("percent", 3, "%")]),
        ("Prices rose 3%.", [("percent", 3, "%")]),
        ("Prices rose three per cent.", [("percent", 3, "%")]),
        ("Shares fell 2.8 per cent.", [("percent", 2.8, "%")]),
        ("It can top up to 80-percent quickly.", [("percent", 80, "%")]),
        ("The fund beat its benchmark by 1.5 percentage points.", [("percent", 1.5, "pp")]),
        # counts: a number with a counted noun
        ("About 900 people attended.", [("count", 900, "")]),
        ("Nine hundred employees were laid off.", [("count", 900, "")]),
        ("Police towed a dozen cars.", [("count", 12, "")]),
        ("A flu outbreak affected nearly three dozen immigrants.", [("count", 36, "")]),
        ("The app has 1.2 million users.", [("count", 1.2e6, "")]),
        ("The company employs two thousand five hundred people.", [("count", 2500, "")]),
        ("Half a million people signed the petition.", [("count", 5e5, "")]),
        ("India had more than 2.5 million of these deaths.", [("count", 2.5e6, "")]),
        ("It eliminated 195,600 full-time-equivalent jobs.", [("count", 195600, "")]),
        ("Consumers bought 208,560 new vehicles and 2 other cars.", [("count", 208560, ""), ("count", 2, "")]),
        # measures: units spaced, attached, hyphenated, written out
        ("The e-bike reaches 40 mph.", [("measure", 40, "mph")]),
        ("The scooter tops out at 25 km/h.", [("measure", 25, "km/h")]),
        ("The phone weighs 895 g.", [("measure", 895, "g")]),
        ("It packs a 4,000 mAh battery.", [("measure", 4000, "mAh")]),
        ("It has a 6.4-inch screen.", [("measure", 6.4, "in")]),
        ("The display refreshes at 120 Hz.", [("measure", 120, "Hz")]),
        ("It ships with 2 TB of storage and 512GB of RAM.", [("measure", 2, "TB"), ("measure", 512, "GB")]),
        ("The car can travel 350 miles on a charge.", [("measure", 350, "mi")]),
        ("The trail is 10 kilometres long.", [("measure", 10, "km")]),
        ("It gets 90 miles per gallon.", [("measure", 90, "mpg")]),
        ("Temperatures hit 40°C.", [("measure", 40, "°C")]),
        ("The processor ran at 83 degrees Celsius.", [("measure", 83, "°C")]),
        ("The 55-year-old was arrested.", [("measure", 55, "year")]),
        ("It was down for four straight years.", [("measure", 4, "year")]),
        ("He was sacked after five-and-a-half years in charge.", [("measure", 5.5, "year")]),
        ("Add ½ cup of sugar.", [("measure", 0.5, "cup")]),
        ('The 70" TV is on sale.', [("measure", 70, "in")]),
        ("The game runs at 60fps.", [("measure", 60, "fps")]),
        # ranges: the first end takes the second's unit and scale
        ("Drink 20–30 minutes before your workout.", [("measure", 20, "min"), ("measure", 30, "min")]),
        ("Purchases of $40-50 billion a year.", [("price", 40e9, "USD"), ("price", 50e9, "USD")]),
        ("Between 20 and 30 people were hurt.", [("count", 20, ""), ("count", 30, "")]),
        ("A 30-60 per cent chance.", [("percent", 30, "%"), ("percent", 60, "%")]),
        (
            "It goes from zero to 60 mph in five seconds.",
            [("measure", 0, "mph"), ("measure", 60, "mph"), ("measure", 5, "s")],
        ),
        ("Symptoms appear after one-to-seven days.", [("measure", 1, "day"), ("measure", 7, "day")]),
        # dates, years, versions
        ("It was published on March 4, 2019.", [("date", 20190304, "day")]),
        ("It was published on 4 March 2019.", [("date", 20190304, "day")]),
        ("It was published on 2019-03-04.", [("date", 20190304, "day")]),
        ("Report dated 11/18/2019.", [("date", 20191118, "day")]),
        ("Filed 2019/03/04 and 2019.03.05.", [("date", 20190304, "day"), ("date", 20190305, "day")]),
        ("Bis zum 01.03.2019 sollen alle angebunden sein.", [("date", 20190301, "day")]),
        ("It happened in November 2018.", [("date", 20181100, "month")]),
        ("He heard the July 25 call.", [("date", 725, "md")]),
        ("Tariffs on Dec. 15 will hit goods.", [("date", 1215, "md")]),
        ("The company was founded in 1998.", [("year", 1998, "")]),
        ("The 2019-20 season ended early.", [("year", 2019, "")]),
        ("Python 3.11 is faster than 3.10.", [("version", None, "3.11"), ("version", None, "3.10")]),
        ("Upgrade to v2.4.1 to fix the bug.", [("version", None, "2.4.1")]),
        ("The patch shipped in version 1.8.", [("version", None, "1.8")]),
        ("Node.js 18.17.1 fixes a flaw.", [("version", None, "18.17.1")]),
        ("The mass could be reduced by a third.", [("percent", 33.33, "%")]),
        ("Costs were cut by half, sales by two-thirds.", [("percent", 50, "%"), ("percent", 66.67, "%")]),
        ("By a third, costs fell; sales fell by two thirds.", [("percent", 33.33, "%"), ("percent", 66.67, "%")]),
        ("They demanded N500m; the contract is N2.5bn.", [("price", 500e6, "NGN"), ("price", 2.5e9, "NGN")]),
        ("Fees rose to N10,000, or N500 million in all.", [("price", 10_000, "NGN"), ("price", 500e6, "NGN")]),
    ],
)
def test_forms(text, expected):
    assert found(text) == approx(expected)


@pytest.mark.parametrize(
    "text",
    [
        "COVID-19 cases rose sharply.",
        "He upgraded his laptop to Windows 10 last week.",
        "Call us at (555) 123-4567 or 555-987-6543.",
        "Call +44 20 7946 0958 for details.",
        "The meeting starts at 9:30 and the bus leaves at 6am.",
        "It was updated at 5:45 p.m.",
        "The F-35 and the A350-900 were on show.",
        "The Apple iPhone 11 Pro and the Galaxy S10 launched.",
        "It runs at native 4K with 5G support on the 3rd floor.",
        "The United States won 7-6 (5), 6-3.",
        "Visit https://t.co/HO1ZRs9T1P or www.example.com/2019/page-2 now.",
        "The retailer filed for Chapter 11 bankruptcy.",
        "She was ranked No. 1 in the world.",
        "It threatens a two-state solution and a four-door coupe.",
        "It is one of the best.",
        "Several thousand teachers and several hundred parents came.",
        "Israel won the Six-Day War.",
        "The 24/7 helpline is staffed.",
        "Take-Two Interactive makes games.",
        "The law is in § 68 SGB V.",
        "More than half of the districts closed; pupils were grouped by thirds.",
        "It was checked by a third party and by a third-party auditor.",
        "N95 masks, the N64 console and Route N2 are names.",
        "They will arrive by half past five, or by a quarter of an hour later.",
        "The bank cut rates by half a percentage point, then by a half-point.",
    ],
)
def test_traps_hold_no_value(text):
    assert found(text) == []


def test_a_name_counts_only_before_a_counted_noun():
    assert found("Windows 10 now runs on 1.5 billion devices.") == [("count", 1.5e9, "")]
    assert found("Sheldon Bryan 1 goal, 1 assist.") == [("count", 1, ""), ("count", 1, "")]


def test_a_year_is_not_a_count():
    assert found("The 2020 Sentra goes on sale.") == [("year", 2020, "")]
    assert found("Holcomb's 2016 election campaign.") == [("year", 2016, "")]
    assert found("Some 2000 homes lost power.") == [("count", 2000, "")]


def test_bare_numbers_only_on_request():
    text = "Employees: 900. The population grew to 4.1bn."
    assert found(text) == []
    assert found(text, ["number"]) == approx([("number", 900, ""), ("number", 4.1e9, "")])


def test_kinds_filter_spans_and_order():
    text = "Revenue rose 12% to €3.2bn in 2019, from 900 stores."
    values = find_values(text)
    assert [v.kind for v in values] == ["percent", "price", "year", "count"]
    assert [v.text for v in values] == ["12%", "€3.2bn", "2019", "900"]
    assert all(text[v.start : v.end] == v.text for v in values)
    assert all(a.end <= b.start for a, b in zip(values, values[1:]))
    assert [v.kind for v in find_values(text, ["price", "year"])] == ["price", "year"]
    assert find_values("") == [] and find_values("No digits here at all.") == []


@pytest.mark.parametrize(
    "a, b",
    [
        ("$410 million", "410 million dollars"),
        ("$410m", "US$410 million"),
        ("€25", "twenty-five euros"),
        ("£1.2 billion", "£1.2bn"),
        ("3 percent", "three per cent"),
        ("3%", "3 percent"),
        ("900 people", "nine hundred employees"),
        ("a dozen cars", "12 cars"),
        ("1.2 million users", "1,200,000 users"),
        ("March 4, 2019", "2019-03-04"),
        ("2 hours", "two hours"),
        ("$449,000", "$449 thousand"),
    ],
)
def test_same_value(a, b):
    va, vb = find_values(a), find_values(b)
    assert len(va) == 1 and len(vb) == 1, (va, vb)
    assert same_value(va[0], vb[0])


@pytest.mark.parametrize(
    "a, b",
    [
        ("$410 million", "€410 million"),  # currency
        ("$410 million", "$420 million"),  # amount beyond 0.5%
        ("40 mph", "40 km/h"),  # unit
        ("3 percent", "3 people"),  # kind
        ("March 4, 2019", "March 5, 2019"),  # dates are exact
        ("Python 3.11", "Python 3.1"),  # versions are exact strings
    ],
)
def test_not_same_value(a, b):
    assert not same_value(find_values(a)[0], find_values(b)[0])


def test_same_value_tolerance():
    v = Value("price", 100.0, "USD", "$100", 0, 4)
    assert same_value(v, Value("price", 100.4, "USD", "$100.4", 0, 6))
    assert not same_value(v, Value("price", 101.0, "USD", "$101", 0, 4))


@pytest.mark.parametrize(
    "text, number",
    [
        ("410", 410),
        ("4.1", 4.1),
        ("1,200", 1200),
        ("twenty-five", 25),
        ("three hundred", 300),
        ("4.1bn", 4.1e9),
        ("2.5 million", 2.5e6),
        ("a dozen", 12),
        ("half a million", 5e5),
        ("three hundred and forty two", 342),
        ("five-and-a-half", 5.5),
        ("two and a half million", 2.5e6),
        ("Nine Hundred", 900),
        ("$410m"[1:], 410e6),
        ("½", 0.5),
    ],
)
def test_parse_number(text, number):
    assert parse_number(text) == pytest.approx(number)


@pytest.mark.parametrize("text", ["", "three four", "thousand", "million", "hello", "4.1 bananas", "1,2,3"])
def test_parse_number_rejects(text):
    assert parse_number(text) is None
