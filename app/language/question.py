"""Question analysis, once per request: what kind of value is asked, the anchors an answer cannot
do without, the subject of a definition, and how time-sensitive the question is. The router,
planner, gate, answerability, composer and verifier all read this one analysis, so each concept
has one definition.

The kind is read from the question's grammar (wh-word and its head), the way classic QA systems
type questions: "how many" asks a count, "who" a person, "how do I" a how-to.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from functools import lru_cache

from app.language.text import STOP_WORDS, YEAR, split_sentences, terms
from app.language.time import QuestionEncoder, TimeClass, time_class, use_model, use_vectors


class AskedKind(str, enum.Enum):
    price = "price"
    count = "count"  # type: ignore[assignment]  # the member shadows str.count; the wire value needs this name
    measure = "measure"  # a number with a unit, or a percentage ("how much more powerful")
    percent = "percent"
    date = "date"
    version = "version"
    person = "person"
    place = "place"
    organisation = "organisation"
    yes_no = "yes_no"
    how_to = "how_to"
    definition = "definition"
    reason = "reason"
    attribute = "attribute"  # "What is the wingspan of the Corvid 9?": a named attribute of an entity
    other = "other"


# Which kinds a value parser can check in a passage ("is there a number of the asked kind?").
VALUE_KINDS = frozenset(
    {AskedKind.price, AskedKind.count, AskedKind.measure, AskedKind.percent, AskedKind.date, AskedKind.version}
)

_AUX = r"(?:is|are|was|were|do|does|did|can|could|will|would|has|have|had|should|may|might|must|shall)"
_YES_NO = re.compile(rf"^\s*{_AUX}\b(?!.*\bor\b)", re.I)  # "Is X ...?" but not "Is it X or Y?"
_COMPARATIVE = re.compile(
    r"\bhow much of\b|\bhow much (?:more|less|higher|lower|bigger|smaller|faster|slower|\w+er)\b|\bby how much\b", re.I
)
# "How much does it weigh?" measures; "how much did they pay?" prices: the verb decides.
_HOW_MUCH_MEASURE = re.compile(
    r"\bhow much\b.*\b(?:weigh\w*|hold|holds|last|lasts|take|takes|measure\w*|consume\w*|"
    r"use|uses|produce\w*|generate\w*|store|stores|carry|carries|grow|grew|fall|fell|rise|rose|"
    r"drop\w*|increase\w*|decrease\w*|shrink\w*|cover\w*|emit\w*|travel\w*)\b",
    re.I,
)
_MASS = re.compile(
    r"\bhow much (?:time|water|memory|storage|space|ram|power|energy|data|fuel|weight|traffic|"
    r"electricity|rain|snow|land|oil|gas|sleep)\b",
    re.I,
)
# How-to leads, shared by the kind pattern and the subject's strip so the two cannot drift apart.
_HOW_MODAL = r"how\s+(?:do|can|could|should|would)"
_THE_WAY = r"what(?:'s| is) the (?:[\w-]+ )?way"
_OTHER_HOW_TO = r"(?:is there a way to|can i)"
_ORDER: list[tuple[AskedKind, re.Pattern]] = [
    (
        AskedKind.how_to,
        re.compile(
            rf"^\s*(?:{_HOW_MODAL}\b|how\s+to\b|{_THE_WAY}\b|{_OTHER_HOW_TO}\b)",
            re.I,
        ),
    ),
    (
        AskedKind.percent,
        re.compile(r"\b(?:what|which) (?:percent|percentage|share|proportion|fraction)\b|\bwhat % ", re.I),
    ),
    (
        AskedKind.count,
        re.compile(r"\bhow many\b|\bnumber of\b|\b(?:population|headcount|death toll|attendance)\b", re.I),
    ),
    (
        AskedKind.measure,
        re.compile(
            r"\bhow (?:fast|far|long|big|large|tall|heavy|old|wide|high|deep|powerful|strong|hot|"
            r"cold|loud|quick|bright|efficient)\b|\bwhat(?:'s| is| was| are| were) (?:the|its|their) "
            r"(?:top )?(?:speed|weight|range|capacity|height|length|width|size|distance|temperature|"
            r"resolution|storage|memory|power|mileage|duration|horsepower|battery life|depth|area)\b",
            re.I,
        ),
    ),
    (
        AskedKind.price,
        re.compile(
            r"\bhow much\b|\bhow expensive\b|\b(?:price|pricing|cost|costs|fee|fees|fare|salary|budget|"
            r"valuation|paid|pay|spend|spent|charge|fine[ds]?)\b|\b(?:net worth|is worth|was worth|are worth|were worth|be worth)\b",
            re.I,
        ),
    ),
    (
        AskedKind.version,
        re.compile(
            r"\b(?:which|what)(?: [\w.]+)? (?:version|release)\b|\bversion (?:number|of)\b|\blatest (?:[\w.]+ ){0,3}(?:version|release)\b",
            re.I,
        ),
    ),
    (
        AskedKind.date,
        re.compile(
            r"^\s*when\b|\bwhen (?:did|was|were|is|will|does|do)\b|\b(?:what|which) (?:year|date|day|month)\b|"
            r"\bon what (?:day|date)\b|\bsince when\b|\brelease date\b",
            re.I,
        ),
    ),
    (
        AskedKind.person,
        re.compile(
            r"^\s*(?:who|whom|whose)\b|\bwho (?:is|was|were|are|will|did)\b|\b(?:which|what) (?:person|man|"
            r"woman|player|ceo|president|author|director|minister|leader|official|candidate|coach)\b",
            re.I,
        ),
    ),
    (
        AskedKind.place,
        re.compile(
            r"^\s*where\b|\bwhere (?:is|was|were|are|did|does|do|will)\b|\b(?:in|to|from) (?:what|which) "
            r"(?:city|country|state|town|region|place|county|province)\b|\b(?:what|which) (?:city|country|"
            r"state|town|region|county|province)\b",
            re.I,
        ),
    ),
    (
        AskedKind.organisation,
        re.compile(
            r"\b(?:which|what) (?:company|firm|team|organi[sz]ation|agency|party|group|bank|club|"
            r"university|network|brand|startup|manufacturer|airline|carrier)\b",
            re.I,
        ),
    ),
    (
        AskedKind.reason,
        re.compile(
            r"^\s*why\b|\bwhat (?:caused|causes|led to)\b|\bfor what reason\b|^\s*what(?:'s| is| was) the reason",
            re.I,
        ),
    ),
    (AskedKind.yes_no, re.compile(rf"^\s*{_AUX}\b", re.I)),
]
_DEFINITION = re.compile(
    r"^\s*(?:what|who)\s+(?:is|are|was|were|does|do)\s+(?:an?\s+|the\s+)?(.+?)"
    r"(?:\s+(?:do|does|mean|for|used for))?\s*\??\s*$|^\s*(?:define|explain)\s+(.+?)\s*\??\s*$",
    re.I,
)
_USED_FOR = re.compile(r"\bused for\s*\??\s*$", re.I)
# "What do I need to call?" asks what to do, not what something is.
_ASKS_WHAT_TO_DO = re.compile(r"^\s*what\s+(?:do|does|should|can)\s+(?:i|you|we|one)\b", re.I)
_ATTRIBUTE = re.compile(
    r"^\s*(?:what|which)(?:'s| is| was| are| were)\s+(?:the|its|their|his|her)\s+(?:current\s+|new\s+|latest\s+|"
    r"top\s+|total\s+|official\s+|main\s+)?([\w -]+?)\s+(?:of|on|for|in|at|from|behind)\s+\S",
    re.I,
)
_COMPOUND = re.compile(r",?\s+and\s+(?:who|what|when|where|which|how|why)\b", re.I)
_ABOUT = re.compile(r"\b(?:say|says|said|report|reports|write|writes|mention|mentions|tell us|know)\s+about\b", re.I)
# A follow-up that is only a possessive noun phrase asks for that attribute: "And its battery capacity?"
_FOLLOW_ATTRIBUTE = re.compile(
    r"^\s*(?:and|what about|how about)\s+(?:its|their|his|her|the)\s+([\w -]+?)\s*\??\s*(?:\(|$)", re.I
)
# The counted noun phrase, up to three words ("how many Indiana school systems").
_HOW_MANY = re.compile(r"\bhow many\s+((?:[\w-]+\s+){0,2}[\w-]+)|\bnumber of\s+((?:[\w-]+\s+){0,2}[\w-]+)", re.I)
# The measured dimension, when named ("what is the top speed"); "how long" names none.
_MEASURE_WORD = re.compile(r"\bwhat(?:'s| is| was| are| were) (?:the|its|their) (?:top )?(\w+(?: life)?)", re.I)
# A dotted number is a version ("3.12", "2.4.1"), unless a sign makes it a value ("'-3.14'.zfill(7)"):
# a minus at the start, after a space, quote, bracket or "=" (not a range's "3.8-3.11").
_NUMBER_ANCHOR = re.compile(r"(?<![\s'\"(\[=]-)(?<!^-)(?<![\d.])\b\d+(?:\.\d+)+\b")
# The dimension a measure question asks for, from its wh-adjective or measured noun; a question
# naming none of these ("how big", "what size") takes any measure.
_DIMENSION_WORDS: tuple[tuple[re.Pattern, frozenset[str]], ...] = tuple(
    (
        re.compile(rf"\bhow (?:{adjectives})\b|\b(?:{nouns})\b" if adjectives else rf"\b(?:{nouns})\b", re.I),
        frozenset(dims),
    )
    for adjectives, nouns, dims in (
        ("old", "age", ("age", "duration")),
        ("tall|high|deep|wide|far", "height|length|width|distance|depth|altitude", ("length",)),
        ("fast|quick", "speed|top speed", ("speed",)),
        ("heavy", "weight|weigh|weighs|weighed|mass", ("mass",)),
        ("hot|cold|warm", "temperature", ("temperature",)),
        ("long", "duration|battery life", ("length", "duration")),
        ("powerful", "horsepower|power output", ("power",)),
        ("", "torque", ("torque",)),
        ("", "area", ("area",)),
    )
)


@dataclass(frozen=True, slots=True)
class QuestionAnalysis:
    text: str
    kind: AskedKind
    terms: tuple[str, ...]  # content terms (stop words dropped, stemmed)
    anchors: tuple[str, ...]  # names, versions and years an answer cannot do without
    subject: tuple[str, ...]  # the defined term of "What is X?" / the object of "How do I X?"
    focus: tuple[str, ...]  # the counted noun or measured dimension ("employees", "speed")
    compound: bool = False  # two questions in one: "What language is it written in, and who maintains it?"
    dimensions: frozenset[str] = frozenset()  # of a measure question: "length" for "How tall?"; empty = any

    @property
    def asks_value(self) -> bool:
        return self.kind in VALUE_KINDS

    @property
    def time(self) -> TimeClass:
        """The time class, computed when first asked for: only routing and planning read it, and with
        the vector features it costs a forward pass (question_time)."""
        return question_time(self.text)

    @property
    def time_sensitive(self) -> bool:
        return self.time is not TimeClass.stable


def asked_kind(question: str) -> AskedKind:
    if _YES_NO.match(question):
        return AskedKind.yes_no
    if _ABOUT.search(question):
        return AskedKind.other  # "What does the article say about X?": an open question about a topic
    if _COMPARATIVE.search(question) or _MASS.search(question) or _HOW_MUCH_MEASURE.search(question):
        return AskedKind.measure
    for kind, rx in _ORDER:
        if rx.search(question):
            return kind
    if _USED_FOR.search(question) and _DEFINITION.match(question):
        return AskedKind.definition  # "What is the __all__ variable in a package used for?": its purpose
    if _ATTRIBUTE.match(question) or _FOLLOW_ATTRIBUTE.match(question):
        return AskedKind.attribute
    if _DEFINITION.match(question) and not _ASKS_WHAT_TO_DO.match(question):
        return AskedKind.definition
    return AskedKind.other


def anchors_of(question: str) -> list[str]:
    """Years, version numbers and names (capitalised words after the first). Evidence about Python
    3.10 does not answer a question about 3.12, nor does the 2029 final answer 2031's."""
    found = set(YEAR.findall(question)) | set(_NUMBER_ANCHOR.findall(question))
    tokens = re.findall(r"[\w.+#-]+", question)
    for tok in tokens[1:]:
        if any(c.isupper() for c in tok) and tok.lower() not in STOP_WORDS:
            found.update(terms(tok))
    return sorted(found)


def _subject(question: str, kind: AskedKind) -> tuple[str, ...]:
    if kind is AskedKind.definition:
        m = _DEFINITION.match(question)
        if m:
            return tuple(terms(m.group(1) or m.group(2) or ""))
    if kind is AskedKind.how_to:
        return tuple(
            terms(
                re.sub(
                    rf"^\s*(?:{_HOW_MODAL}\s+(?:i|you|we|one)|how to"
                    rf"|{_THE_WAY}(?: to| for)?|{_OTHER_HOW_TO})\b",
                    "",
                    question,
                    flags=re.I,
                )
            )
        )
    return ()


def _focus(question: str, kind: AskedKind) -> tuple[str, ...]:
    if kind is AskedKind.count:
        m = _HOW_MANY.search(question)
        if m:
            phrase = []
            for word in (m.group(1) or m.group(2)).split():
                if word.lower() in STOP_WORDS:
                    break  # the noun phrase ends at the verb: "how many employees | does Greywater have"
                phrase.append(word)
            return tuple(terms(" ".join(phrase)))
    if kind is AskedKind.attribute:
        m = _ATTRIBUTE.match(question) or _FOLLOW_ATTRIBUTE.match(question)
        if m:
            return tuple(terms(m.group(1)))
    if kind is AskedKind.measure:
        m = _MEASURE_WORD.search(question)
        if m:
            return tuple(terms(m.group(1)))
    return ()


# A sentence that asks: ends with "?" and opens with a question word or an inverted auxiliary.
_INTERROGATIVE = re.compile(
    rf"^(?:what|what's|which|who|whom|whose|when|where|why|how|{_AUX}|isn't|aren't|doesn't|don't|didn't|can't)\b",
    re.I,
)


# A subordinate clause set before the question ("When I load a TOML file, what object do I get?", "If the
# queue is empty, does get() block?"): the question proper follows the comma. Not "When did …, and …".
_FRONTED_CLAUSE = re.compile(
    rf"^\s*(?:when|whenever|if|once|after|before|while|since)\s+(?!{_AUX}\b)[^,?]+,\s*"
    rf"(?=(?:what|what's|which|who|whom|whose|when|where|why|how|{_AUX})\b)",
    re.I,
)


def asking_sentence(question: str) -> str:
    """The sentence of a question that asks. People set the scene first ("My logger.debug() calls print
    nothing. How do I make them show up?"), and the scene's words ("When my handler is cancelled …",
    a copied file's "permissions") are not what is asked. The last interrogative sentence, when the
    text has several; else the whole text (a "?" after an abbreviation or a quote ends no question);
    without a clause set before its question ("When I load X, what …?")."""
    sentences = split_sentences(question)
    if len(sentences) < 2:
        return _without_fronted_clause(question)
    asking = [s for s in sentences if s.rstrip().endswith("?") and _INTERROGATIVE.match(s.lstrip())]
    return _without_fronted_clause(asking[-1]) if asking else question


def _without_fronted_clause(sentence: str) -> str:
    m = _FRONTED_CLAUSE.match(sentence)
    return sentence[m.end() :] if m else sentence


@lru_cache(maxsize=4096)
def analyse(question: str) -> QuestionAnalysis:
    # What is asked (kind, subject, focus, dimension) comes from the asking sentence; the words,
    # anchors and time of the whole text (the scene names the things the answer is about).
    asking = asking_sentence(question)
    kind = asked_kind(asking)
    return QuestionAnalysis(
        text=question,
        kind=kind,
        terms=tuple(terms(question)),
        anchors=tuple(anchors_of(question)),
        subject=_subject(asking, kind),
        focus=_focus(asking, kind),
        compound=bool(_COMPOUND.search(asking)),
        dimensions=_dimensions(asking) if kind is AskedKind.measure else frozenset(),
    )


def _dimensions(question: str) -> frozenset[str]:
    """The first dimension word of the question decides ("How long is the 120-metre bridge?": length
    or duration). A relative change ("By how much did it shrink?") is answered by a share or a
    multiple, so it asks for no dimension."""
    if _COMPARATIVE.search(question):
        return frozenset()
    best: tuple[int, frozenset[str]] | None = None
    for rx, dims in _DIMENSION_WORDS:
        m = rx.search(question)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), dims)
    return best[1] if best else frozenset()


@lru_cache(maxsize=4096)
def question_time(question: str) -> TimeClass:
    """The question's time class (app/language/time.py), over its asking sentence's kind as analyse reads
    it: "How do I get the current time in UTC?" asks for a recipe, which does not age like a fact."""
    asking = asking_sentence(question)
    return time_class(question, asking, asked_kind(asking).value)


def use_time_model(enabled: bool, encoder: QuestionEncoder | None = None) -> bool:
    """Settings.time_classifier at start-up: the fitted time model (with the vector features when an
    encoder is given and matches the weights) or the keyword rules alone; time classes cached under
    another choice are dropped. True when the vector features are in use."""
    use_model(enabled)
    vectors = use_vectors(encoder if enabled else None)
    analyse.cache_clear()
    question_time.cache_clear()
    return vectors
