"""Answerability features: what the scorers of app/pipeline/answerability.py weigh per candidate
sentence. Whether a sentence is of the asked kind (typed_match), whether it states something on its
own (quotable), the passage's sentences under their API entries (sentences_with_leads), and the
FEATURES vector of one sentence (sentence_features) the lexical score and the learned model read.
"""

from __future__ import annotations

import re

from app.domain.types import Evidence
from app.language.anchors import covered
from app.language.question import AskedKind, QuestionAnalysis
from app.language.text import split_sentences, terms
from app.language.values import find_values
from app.language.values.units import of_dimension

# Feature scales and sentence checks. The learned scorer's weights (answerability_weights.json) were
# fitted on the dev split over features computed with these values: change one, refit the weights
# (python -m eval.train_answerability) and re-run the evaluation.
PASSAGE_SCORE_CAP = 2.0  # the "passage_score" feature saturates here (scaled to 0..1)
LENGTH_NORM_CHARS = 300  # the "length" feature saturates at a sentence this long
QUESTION_TERMS_NORM = 10  # the "question_terms" feature saturates at a question with this many terms
DEFINITION_HEAD_WORDS = 10  # a defining sentence names its subject within its first this-many words
MIN_QUOTABLE_CHARS = 25  # shorter: a fragment or label, not a statement
MAX_QUOTABLE_CHARS = 600  # longer: a run-on block, not one statement to quote
MAX_CAPS_SHARE = 0.6  # letters at least this share upper-case: an ALL-CAPS heading
FOCUS_WINDOW_CHARS = 40  # a count's or measure's counted noun sits this close to it ("82 moons", "moons: 82")

# Value kinds a parser checks, and the Value kinds that satisfy each.
_VALUE_KINDS: dict[AskedKind, tuple[str, ...]] = {
    AskedKind.price: ("price",),
    AskedKind.count: ("count", "number"),
    AskedKind.measure: ("measure", "percent", "price", "count", "number"),
    AskedKind.percent: ("percent",),
    AskedKind.date: ("date", "year", "version"),  # "When were dataclasses added?" — "New in version 3.7."
    AskedKind.version: ("version",),
}
# An age written without a unit: "aged 43", "Smith, 55, of Addison", "Jones (61)".
_AGE = re.compile(r"\baged?\s+(?:of\s+)?\d{1,3}\b|,\s*\d{1,3}\s*,|\(\d{1,3}\)")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z'’.-]+(?:\s+(?:[A-Z]\.\s*)?[A-Z][a-z'’-]+)+")
_PLACE = re.compile(r"\b(?:in|at|from|near|to|based in|headquartered in|outside)\s+(?:the\s+)?[A-Z][a-z]+")
_ORG = re.compile(r"\b[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*)*|\b[A-Z]{2,}\b")
_DATE_WORDS = re.compile(
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|today|tomorrow|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|last (?:week|month|year)|next (?:week|month|year)|"
    r"(?:this|last) (?:spring|summer|fall|autumn|winter))\b",
    re.I,
)
_CODE = re.compile(
    r"\w\(|\w=\w|--?[a-z][\w-]+|`[^`]+`|\b\w+\.\w+\b|^\s*(?:use|call|pass|run|set|create|import|install|"
    r"add|write|open|return|define|wrap|iterate|catch|raise)\b|\b(?:keyword argument|argument|parameter|"
    r"option|method|function|statement|command|flag|attribute)\b",
    re.I,
)
_DEFINES = re.compile(
    r"\b(?:is|are|was|were|returns?|provides?|represents?|means?|refers? to|creates?|allows?|lets?|"
    r"makes?|describes?|contains?|holds?|runs?|converts?|acts? as|stands? for)\b",
    re.I,
)
_BECAUSE = re.compile(
    r"\b(?:because|due to|as a result|since|so that|in order to|caused by|led to|blamed|after|amid|"
    r"following|thanks to|reason|citing|cited|owing to|on account of|in response to)\b",
    re.I,
)


def typed_match(question: QuestionAnalysis, sentence: str, *, beside_focus: bool = True) -> bool:
    """Does the sentence state something of the kind the question asks for? With `beside_focus`, a
    count or measure must also name what it counts or measures (the extractive composer's guard; a
    model that chose the sentence may have read "450 Dreamers" as the answer to "how many immigrants")."""
    kind = question.kind
    if kind is AskedKind.measure and question.dimensions:
        # "How tall?" wants a length: a fee or a year count beside the subject does not answer it.
        return any(of_dimension(v.unit, question.dimensions) for v in find_values(sentence, ("measure",))) or (
            "age" in question.dimensions and bool(_AGE.search(sentence))
        )
    if kind in _VALUE_KINDS:
        found = find_values(sentence, _VALUE_KINDS[kind])
        if kind is AskedKind.date:
            return bool(found) or bool(_DATE_WORDS.search(sentence))
        if beside_focus and kind in (AskedKind.count, AskedKind.measure) and question.focus and found:
            # "how many employees" is answered by a number next to "employees", not any number.
            windows = (
                set(terms(sentence[max(0, v.start - FOCUS_WINDOW_CHARS) : v.end + FOCUS_WINDOW_CHARS])) for v in found
            )
            return any(any(covered(f, window) for f in question.focus) for window in windows)
        return bool(found)
    if kind is AskedKind.person:
        return bool(_NAME.search(sentence))
    if kind is AskedKind.place:
        return bool(_PLACE.search(sentence))
    if kind is AskedKind.organisation:
        return bool(_ORG.search(sentence[1:]))
    if kind is AskedKind.how_to:
        return bool(_CODE.search(sentence))
    if kind is AskedKind.definition:
        head = set(terms(" ".join(sentence.split()[:DEFINITION_HEAD_WORDS])))
        return bool(_DEFINES.search(sentence)) and (
            not question.subject or any(covered(s, head) for s in question.subject)
        )
    if kind is AskedKind.reason:
        return bool(_BECAUSE.search(sentence))
    if kind is AskedKind.attribute:
        # The attribute's head noun ("timeout" of "default timeout") names it; an answer may drop the rest.
        return bool(question.focus) and covered(question.focus[-1], set(terms(sentence)))
    return True  # yes/no and open questions: relevance decides


_UNQUOTABLE = re.compile(
    r"[?:]\s*$|^(?:[\w ]{1,20}:\s*){2,}|¶|^(?:new|changed|added|deprecated|removed)\s+(?:in|since)\s+version\b"
    r"|^[\w.]+\([^)]*\)\s*$|^(?:click|subscribe|sign up|read more|share|advertisement|related)\b",
    re.I,
)


def as_definition(sentence: str) -> str:
    """An API entry's first sentence as a statement: its closing colon introduced the entry's example
    ("PurePath.suffix¶ / The file extension of the final component, if any:"), the answer ends it."""
    s = sentence.strip()
    return s[:-1].rstrip() + "." if s.endswith(":") else s


_ASCII_LETTER = re.compile(r"[A-Za-z]")
_ASCII_UPPER = re.compile(r"[A-Z]")
_ASCII_DIGIT = re.compile(r"[0-9]")


def _has_digit(text: str) -> bool:
    return bool(_ASCII_DIGIT.search(text)) if text.isascii() else any(c.isdigit() for c in text)


def quotable(sentence: str, *, defines_entry: bool = False) -> bool:
    """A sentence that states something on its own: not a heading, question, lead-in, signature,
    margin note or page furniture. `defines_entry`: the first sentence under an API entry, which is
    the entry's definition even when a colon ends it (see as_definition), not a lead-in."""
    s = as_definition(sentence) if defines_entry else sentence.strip()
    if len(s) < MIN_QUOTABLE_CHARS or len(s) > MAX_QUOTABLE_CHARS or _UNQUOTABLE.search(s):
        return False
    if s.startswith("(") and s.rstrip(".").endswith(")"):
        return False
    if s.isascii():  # the common case, counted by C loops: the same counts as the general one below
        letters, upper = len(_ASCII_LETTER.findall(s)), len(_ASCII_UPPER.findall(s))
    else:
        alpha = [c for c in s if c.isalpha()]
        letters, upper = len(alpha), sum(c.isupper() for c in alpha)
    return not letters or upper / letters < MAX_CAPS_SHARE


# What the learned scorer weighs, per candidate sentence (see answerability.LearnedAnswerability).
FEATURES = (
    "relevance",
    "sentence_coverage",
    "context_coverage",
    "typed",
    "anchors_ok",
    "first_sentences",
    "passage_score",
    "has_number",
    "has_lead",
    "length",
    "typed_value_question",
    "typed_how_to",
    "question_terms",
    "lexical_score",
    "novel",
    "subject_in_lead",
    "subject_in_title",
    "first_after_lead",
    "tracker_entry",
    "relevance_ratio",
    "similarity",
)


LEXICAL = FEATURES.index("lexical_score")
_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]+")
_DIGITS = re.compile(r"\d[\d,.]*")


_TRACKER = re.compile(r"^(?:gh|bpo|issue|pr)-?\s?#?\d+\s*:", re.I)  # an issue-tracker line of a changelog


def _share(wanted: set[str], have: set[str]) -> float:
    return sum(covered(t, have) for t in wanted) / len(wanted) if wanted else 0.0


def _novelty(question: QuestionAnalysis, sentence: str) -> float:
    """Share of the sentence's names and numbers the question does not already hold: an answer
    adds something ("Hazel Hen", "$410m") to what was asked."""
    q = question.text.lower()
    found = _CAPITALISED.findall(sentence[1:]) + _DIGITS.findall(sentence)
    if not found:
        return 0.0
    return sum(f.lower() not in q for f in found) / len(found)


def sentence_features(
    question: QuestionAnalysis,
    q: set[str],
    subject: set[str],
    ev: Evidence,
    pos: int,
    sentence: str,
    lead: str,
    since: int,
    title_terms: set[str],
    *,
    relevance: float,
    in_sentence: float,
    in_context: float,
    total: float,
    typed: bool,
    anchors_ok: bool,
    score: float,
) -> tuple[float, ...]:
    """FEATURES of one candidate sentence (q: the question's terms; subject: what it is about). The
    last two, relevance_ratio and similarity, need every candidate: 0.0 here, set by the scorer."""
    return (
        relevance,
        in_sentence / total,
        in_context / total,
        float(typed),
        float(anchors_ok),
        1 / (1 + pos),
        min(PASSAGE_SCORE_CAP, max(0.0, ev.answer_score)) / PASSAGE_SCORE_CAP,
        float(_has_digit(sentence)),
        float(bool(lead)),
        min(1.0, len(sentence) / LENGTH_NORM_CHARS),
        float(typed) * float(question.asks_value),
        float(typed) * float(question.kind is AskedKind.how_to),
        min(1.0, len(q) / QUESTION_TERMS_NORM),
        max(0.0, score),
        _novelty(question, sentence),
        _share(subject, set(terms(lead))) if lead else 0.0,
        _share(subject, title_terms),
        float(bool(lead) and since == 0),
        float(bool(_TRACKER.match(sentence))),
        0.0,
        0.0,
    )


# An API entry line of reference documentation: "re.IGNORECASE¶", "Path.rglob(pattern)¶",
# "coroutine asyncio.sleep(delay, result=None)".
_SIGNATURE = re.compile(
    r"^(?:(?:class|coroutine|exception|awaitable|async|classmethod|staticmethod|abstractmethod)\s+)?"
    r"([\w.]+(?:\([^)]*\))?)\s*¶?\s*$"
)


# A glossary term of a few words, marked as an entry by its pilcrow ("global interpreter lock¶",
# "coroutine function¶"): no dotted name (that is an API entry), no question (an FAQ heading).
_TERM_ENTRY = re.compile(r"^([A-Za-z][\w'-]*(?: [A-Za-z0-9][\w'-]*){1,3})\s*¶$")


def api_entry(line: str) -> str:
    """The API name (or glossary term) a reference-documentation entry line introduces, or ""
    ("Path.rglob(pattern)", "global interpreter lock")."""
    stripped = line.strip()
    if term := _TERM_ENTRY.match(stripped):
        return term.group(1)
    m = _SIGNATURE.match(stripped)
    # A dotted name ("re.IGNORECASE"), a call or a pilcrow: not "Note." or "1." (a word and its full stop).
    if m and (_DOTTED_NAME.search(m.group(1)) or "(" in m.group(1) or stripped.endswith("¶")):
        return m.group(1)
    return ""


_DOTTED_NAME = re.compile(r"\w\.\w")


def sentences_with_leads(text: str) -> list[tuple[str, str, int]]:
    """The passage's sentences, each with the API entry line it sits under (or "") and how many
    sentences of that entry precede it (0: the entry's defining sentence)."""
    out: list[tuple[str, str, int]] = []
    lead, since = "", 0
    for line in text.split("\n"):
        stripped = line.strip()
        entry = api_entry(stripped)
        if entry:
            lead, since = entry, 0
            continue
        for sentence in split_sentences(stripped):
            out.append((sentence, lead, since))
            since += 1
    return out


def names_entry(sentence: str, lead: str) -> bool:
    """Does the sentence name its API entry as code ("home()", "Path.home", "IGNORECASE", "as_completed")?
    An entry named by an everyday word is not named by that word in prose: "Return a new path object
    representing the user's home directory" does not say `Path.home()`."""
    name = lead.split("(")[0].rsplit(".", 1)[-1]
    if not name:
        return True
    escaped = re.escape(name)
    if re.search(rf"(?<![\w.]){escaped}\s*\(|\.{escaped}\b", sentence):
        return True
    # an identifier no prose word spells (an upper-case letter, a digit or an underscore) names it as it is
    return not (name.isalpha() and name.islower()) and bool(re.search(rf"(?<![\w.]){escaped}\b", sentence))


def quote(sentence: str, lead: str) -> str:
    """The sentence as an answer quotes it: under its API entry when it does not name it."""
    # under an entry, only its definition may end in a colon (quotable): quoted as a statement
    sentence = as_definition(sentence) if lead else sentence
    if lead and not names_entry(sentence, lead):
        return f"{lead}: {sentence}"
    return sentence


def quoted_sentences(text: str) -> list[str]:
    """Every candidate answer sentence of a passage, as quoted: the texts a sentence ranker compares
    with the question (app/pipeline/answerability.py; the corpus's stored sentence vectors,
    app/pipeline/evidence_vectors.py)."""
    return [
        quote(sentence, lead)
        for sentence, lead, since in sentences_with_leads(text)
        if quotable(sentence, defines_entry=bool(lead) and since == 0)
    ]
