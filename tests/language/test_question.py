"""Question analysis: the asked kind is read from the question's grammar, once."""

import pytest

from app.language.question import AskedKind, analyse, anchors_of
from app.language.time import TimeClass, default_window, time_class


@pytest.mark.parametrize(
    "question, kind",
    [
        ("How much did the city pay to settle the lawsuit?", AskedKind.price),
        ("How much does the Pro plan cost?", AskedKind.price),
        ("How much more powerful is the new engine than the old one?", AskedKind.measure),
        ("How much memory does the model need?", AskedKind.measure),
        ("How much does it weigh?", AskedKind.measure),
        ("How much is the Pro plan?", AskedKind.price),
        ("How many employees does Greywater have?", AskedKind.count),
        ("What is the top speed of the Vanta S3 scooter?", AskedKind.measure),
        ("How fast can the scooter go?", AskedKind.measure),
        ("What percentage of voters backed the measure?", AskedKind.percent),
        ("When was Quill 1.0 released?", AskedKind.date),
        ("In what year did the company go public?", AskedKind.date),
        ("What is the latest version of Zephyr DB?", AskedKind.version),
        ("Who won the 2022 final?", AskedKind.person),
        ("Where is Nimbus Devices headquartered?", AskedKind.place),
        ("In which city is the company that makes the Zephyr X2 headquartered?", AskedKind.place),
        ("Which company makes the Zephyr X2?", AskedKind.organisation),
        ("How do I run a subprocess and capture its output?", AskedKind.how_to),
        ("What's the best way to read a TOML file?", AskedKind.how_to),
        ("What does functools.cache do?", AskedKind.definition),
        ("What is a coroutine?", AskedKind.definition),
        ("What is the wingspan of the Corvid 9 glider?", AskedKind.attribute),
        # "used for" asks the purpose of the thing named, not an attribute of it
        ("What is the __all__ variable in a package's __init__.py used for?", AskedKind.definition),
        ("What is the battery of the Zephyr X2 made of?", AskedKind.attribute),
        ("And its battery capacity? (Zephyr X2)", AskedKind.attribute),
        ("What does the article say about Stadia pricing?", AskedKind.other),
        ("What is the current interest rate on the Northbank Easy Saver account?", AskedKind.attribute),
        ("Why did the merger collapse?", AskedKind.reason),
        ("Did the senator vote for the bill?", AskedKind.yes_no),
        ("Is the museum open on Mondays?", AskedKind.yes_no),
        ("Has a release date been announced for the next film?", AskedKind.yes_no),
        ("How much of its surface is covered by dunes?", AskedKind.measure),
        ("What's the cleanest way to retry a request?", AskedKind.how_to),
        ("What's the reasoning behind that rule?", AskedKind.reason),
        ("What do I need to call after inserting rows?", AskedKind.other),
        # The scene comes first; the asking sentence says what is asked.
        ("When my handler is cancelled the save still has to finish. How do I protect it?", AskedKind.how_to),
        ("The copy lost its permissions and its price tag. Which function keeps them?", AskedKind.other),
        ("My script hangs when the program never ends. How do I stop waiting?", AskedKind.how_to),
        ("I wrote def add(item, bucket=[]) and the list keeps growing. Why?", AskedKind.reason),
        # A "?" after an abbreviation or a quote does not end the question.
        ("When is the sentencing of the man who threatened Rep. Ilhan Omar?", AskedKind.date),
        ("What was the budget of the 'Meth. We're on it.' campaign?", AskedKind.price),
    ],
)
def test_asked_kind(question, kind):
    assert analyse(question).kind is kind


def test_subject_and_focus():
    assert analyse("What does asyncio.gather do?").subject
    assert "gather" in analyse("What does asyncio.gather do?").subject
    assert analyse("How many employees does Greywater have?").focus == ("employ",)  # stemmed as passages are
    assert "speed" in analyse("What is the top speed of the Vanta S3 scooter?").focus
    assert "subprocess" in analyse("How do I run a subprocess and capture its output?").subject
    # A scene before the question: the subject is the asking sentence's, the terms are the whole text's.
    scened = analyse("My REPL still runs the old module code. How do I reload the module?")
    assert set(scened.subject) == {"reload", "modul"}
    assert "repl" in scened.terms
    # Whatever "What's the X way" is a how-to for, the same words are stripped from its subject.
    assert analyse("What's the cleanest way on 3.11?").subject == ("3.11",)
    assert analyse("What's the best way to read a TOML file?").subject == ("read", "toml", "file")


def test_anchors_keep_names_versions_and_years():
    assert {"vanta", "s3"} <= set(anchors_of("What is the top speed of the Vanta S3 scooter?"))
    assert "3.11" in anchors_of("When was Python 3.11 released?")
    assert "2031" in anchors_of("Who won the 2031 final?")
    # A signed number is a value, not a version; a range's second version is still one.
    assert anchors_of("How do I left-pad a numeric string like '-3.14' with zeros?") == []
    assert anchors_of("Why is x=-2.5 rounded down?") == []
    assert {"3.8", "3.11"} <= set(anchors_of("Which features need Python 3.8-3.11?"))


@pytest.mark.parametrize(
    "question, cls",
    [
        ("What is the price of Bitcoin today?", TimeClass.live),
        ("What is the latest version of Zephyr DB?", TimeClass.news),
        ("Who is the current CEO of Acme?", TimeClass.dated),
        ("What is a coroutine?", TimeClass.stable),
    ],
)
def test_time_class_is_one_definition(question, cls):
    assert time_class(question) is cls
    assert analyse(question).time is cls


def test_windows_follow_the_class():
    assert default_window(time_class("What is the price of Bitcoin today?"), 365) == 30
    assert default_window(time_class("Any news on the merger?"), 365) == 90
    assert default_window(time_class("Who is the current CEO of Acme?"), 365) == 365
    assert default_window(time_class("What is a coroutine?"), 365) == 3650


def test_a_recipe_is_not_time_sensitive():
    assert not analyse("How do I get the current time in UTC as a timezone-aware datetime?").time_sensitive
    assert analyse("Which Python version added the tomllib module?").kind is AskedKind.version


def test_compound_questions_are_seen():
    assert analyse("What language is the Zephyr DB query planner written in, and who maintains Zephyr DB?").compound
    assert not analyse("Who makes the Zephyr X2 and the Zephyr X3?").compound


@pytest.mark.parametrize(
    ("question", "dimensions"),
    [
        ("How tall is the Starship lunar lander?", {"length"}),
        ("How old is the new chief executive?", {"age", "duration"}),
        ("What is the top speed of the Vanta S3?", {"speed"}),
        ("How much does the 16-inch laptop weigh?", {"mass"}),
        ("How long is the contract?", {"length", "duration"}),
        ("How far can it travel on battery power alone?", {"length"}),
        ("By how much could torpor shrink the weight of the spacecraft?", set()),  # a relative change
        ("How big was the fee?", set()),  # no dimension named: any measure
        ("How many employees does it have?", set()),  # not a measure question
    ],
)
def test_a_measure_question_names_its_dimension(question, dimensions):
    assert analyse(question).dimensions == frozenset(dimensions)


@pytest.mark.parametrize(
    "question, kind",
    [
        ("When I parse a TOML date-time with the standard library, what object do I get back?", AskedKind.other),
        ("If the queue is empty, does get() block?", AskedKind.yes_no),
        ("After a failed login, how do I reset the counter?", AskedKind.how_to),
        ("When did the ferry terminal open, and who built it?", AskedKind.date),  # "When" asks here
    ],
)
def test_a_clause_set_before_the_question_does_not_decide_its_kind(question, kind):
    assert analyse(question).kind is kind
