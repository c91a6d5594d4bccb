"""Answerability: relevance × question type decides, not the gate (which is structural only)."""

import pytest

from app.language.question import analyse
from app.pipeline.answerability import build_scorer, quotable
from app.pipeline.answerability_features import typed_match
from app.pipeline.composers import NO_ANSWER, compose_extractive
from app.pipeline.gate import check_gate
from tests.pipeline.helpers import TODAY, make_ctx, make_evidence

SCORER = build_scorer(make_ctx().settings.answerability_scorer)
FLOOR = make_ctx().policy.answerable_at


def _assess(question, *texts):
    ev = [make_evidence(f"S{i}", t, url=f"https://site{i}.example/p") for i, t in enumerate(texts, 1)]
    return SCORER.assess(analyse(question), ev, TODAY), ev


def test_the_gate_no_longer_judges_meaning():
    ev = [
        make_evidence("S1", "The Zephyr X2 has a 6.4 inch display.", url="https://a.example/p"),
        make_evidence("S2", "The Zephyr X2 camera takes sharp photos.", url="https://b.example/p"),
    ]
    v = check_gate(
        ev,
        [],
        "What is the battery capacity of the Zephyr X2 phone?",
        3650,
        False,
        make_ctx(),
        candidates=2,
        usable_pages=2,
    )
    assert v.passed


def test_other_attribute_scores_under_the_floor():
    a, _ = _assess(
        "What is the battery capacity of the Zephyr X2 phone?",
        "The Zephyr X2 has a 6.4 inch display with a bright panel.",
        "The Zephyr X2 camera takes sharp photos in daylight.",
    )
    assert a.score < FLOOR, a


def test_amount_in_words_answers_how_much():
    a, _ = _assess(
        "How much did the city pay to settle the lawsuit?",
        "The city agreed to pay 410 million dollars to settle the lawsuit brought by the families.",
        "The mayor said the settlement would not raise taxes.",
    )
    assert a.score >= FLOOR and "410 million dollars" in a.best[0].sentence


def test_the_wrong_year_is_penalised():
    a, _ = _assess(
        "Who won the 2031 final?",
        "The 2029 final was won by the Rovers after extra time.",
        "In the 2029 final the Rovers won 2-1.",
    )
    assert a.score < FLOOR


def test_past_tense_question_about_a_future_year_is_unanswerable():
    a, _ = _assess(
        "Who won the 2031 Solaris Cup final?",
        "The next Solaris Cup final will be played in 2031 at a stadium still to be chosen.",
        "Marlow Rovers won the 2029 Solaris Cup final against Eastport.",
    )
    assert a.score == 0 and "event_in_the_future" in a.reasons[0]
    a, _ = _assess(
        "Where will the 2031 Solaris Cup final be played?",
        "The next Solaris Cup final will be played in 2031 at a stadium in Lisbon, the organisers said.",
    )
    assert a.score > 0


def test_how_to_prefers_the_sentence_naming_the_call():
    a, ev = _assess(
        "How do I run a subprocess and capture its output?",
        "Output of the child process if it was captured by run() or check_output().",
        "To capture the output, pass capture_output=True to subprocess.run() and read result.stdout.",
    )
    assert "capture_output=True" in a.best[0].sentence


def test_extractive_composer_declines_under_the_floor():
    _, ev = _assess(
        "What is the battery capacity of the Zephyr X2 phone?",
        "The Zephyr X2 has a 6.4 inch display with a bright panel.",
    )
    draft = compose_extractive("What is the battery capacity of the Zephyr X2 phone?", ev, [], make_ctx())
    assert draft.no_answer and draft.text == NO_ANSWER


def test_multi_hop_joins_two_sentences():
    q = "In which city is the company that makes the Zephyr X2 phone headquartered?"
    _, ev = _assess(
        q,
        "The Zephyr X2 phone is made by Nimbus Devices.",
        "Nimbus Devices is headquartered in Tampere, Finland, a city of 250,000.",
    )
    draft = compose_extractive(q, ev, [], make_ctx())
    assert "Tampere" in draft.text and not draft.no_answer


def test_a_question_asking_no_value_gets_the_next_best_sentences_as_context():
    q = "How do I disable the pip cache when I install packages?"
    a, ev = _assess(
        q,
        "To disable the pip cache when you install packages, pass the --no-cache-dir option.",
        "The pip cache keeps downloaded wheels, so installing the same packages again is faster.",
        "Packages you install with pip go to the site-packages directory of the interpreter.",
    )
    draft = compose_extractive(q, ev, [], make_ctx(), assessment=a)
    # The lead, then the next-best sentence as context although it adds no question term and ranks far
    # below the lead (a value question would not take it); the sentence under the share floor stays out.
    assert draft.text == (
        "To disable the pip cache when you install packages, pass the --no-cache-dir option [S1]. "
        "Packages you install with pip go to the site-packages directory of the interpreter [S3]."
    )


def test_a_value_question_takes_no_sentence_of_another_type():
    q = "How much does the Acme Cloud Pro plan cost per month?"
    a, ev = _assess(
        q,
        "The Acme Cloud Pro plan costs $30 per month.",
        "The Acme Cloud Pro plan is billed per month, and its cost covers unlimited projects.",
    )
    second = a.best[1]
    # the second sentence clears the score floor but states no price: context for a how-to, not here
    assert second.score >= make_ctx().policy.answerable_at * 0.5 and not second.typed
    draft = compose_extractive(q, ev, [], make_ctx(), assessment=a)
    assert draft.text == "The Acme Cloud Pro plan costs $30 per month [S1]."


def test_an_answer_max_tokens_shortened_is_marked_truncated():
    q = "How much does the Acme Cloud Pro plan cost per month?"
    _, ev = _assess(
        q,
        "Acme Cloud raised the price of its Pro plan to $30 per month on November 3, 2026, the company said.",
        "The Acme Cloud Pro plan previously cost $25 per month and includes unlimited projects.",
    )
    whole = compose_extractive(q, ev, [], make_ctx())
    ctx = make_ctx()
    ctx.options.max_tokens = 40  # buys one sentence (TOKENS_PER_SENTENCE)
    cut = compose_extractive(q, ev, [], ctx)
    assert whole.text.count("[S") == 2 and not whole.truncated
    assert cut.text.count("[S") == 1 and cut.truncated and whole.text.startswith(cut.text)
    ctx.options.max_tokens = 400  # room for every sentence the answer has: not cut
    assert compose_extractive(q, ev, [], ctx).truncated is False


def test_headings_questions_and_lead_ins_are_not_quoted():
    assert not quotable("NISSAN SENTRA HIGHLIGHTS FROM THE SHOW")
    assert not quotable("Want to know how much the new model costs?")
    assert not quotable("The function takes the following arguments:")
    assert quotable("The 2020 Sentra goes on sale in late January.")
    # ... but an API entry's first sentence introducing its example is the entry's definition
    assert not quotable("The file extension of the final component, if any:")
    assert quotable("The file extension of the final component, if any:", defines_entry=True)


def test_an_api_entrys_definition_answers_under_its_entry_name():
    ev = [
        make_evidence(
            "S1",
            "PurePath.suffix¶\nThe file extension of the final component, if any:\n>>> PurePosixPath('my/library/setup.py').suffix",
        )
    ]
    a = SCORER.assess(analyse("How do I get the file extension of a path with pathlib?"), ev, TODAY)
    assert a.best[0].quoted == "PurePath.suffix: The file extension of the final component, if any."


@pytest.mark.parametrize(
    ("lead", "sentence", "quoted"),
    [
        # an entry named by an everyday word: the word in prose does not name the call
        (
            "Path.home()",
            "Return a new path object representing the user's home directory.",
            "Path.home(): Return a new path object representing the user's home directory.",
        ),
        ("asyncio.sleep(delay)", "Block for delay seconds before you sleep again.", None),
        # ... named as code, it does
        (
            "Path.home()",
            "Path.home() returns the user's home directory.",
            "Path.home() returns the user's home directory.",
        ),
        ("asyncio.gather(*aws)", "If gather() itself is cancelled, the cancellation is propagated.", "same"),
        ("PurePath.suffix", "Compare with the .suffix of the final component.", "same"),
        # an identifier no prose word spells names it as it is written
        ("re.IGNORECASE", "IGNORECASE makes matching case-insensitive.", "same"),
        ("asyncio.as_completed(aws)", "Use as_completed to handle results as they arrive.", "same"),
        # a substring is not a mention ("homework" does not name home())
        ("Path.home()", "Grade the homework directory's files.", "Path.home(): Grade the homework directory's files."),
    ],
)
def test_a_sentence_is_quoted_under_its_entry_unless_it_names_the_entry_as_code(lead, sentence, quoted):
    from app.pipeline.answerability_features import quote

    expected = sentence if quoted == "same" else quoted or f"{lead}: {sentence}"
    assert quote(sentence, lead) == expected


def test_a_glossary_term_of_several_words_is_an_entry():
    from app.pipeline.answerability_features import api_entry, quoted_sentences

    assert api_entry("global interpreter lock¶") == "global interpreter lock"
    assert api_entry("coroutine function¶") == "coroutine function"  # not the keyword "coroutine" + "function"
    assert api_entry("exception asyncio.CancelledError¶") == "asyncio.CancelledError"
    assert api_entry("Is there an equivalent to C's onexit() in Python?¶") == ""  # an FAQ question
    assert api_entry("global interpreter lock") == ""  # prose, without the entry's pilcrow
    # Each definition is quoted under its own term, not under the entry before it.
    text = (
        "portion¶\nA set of files in a single directory that contribute to a namespace package.\n"
        "provisional API¶\nA provisional API is one which has been deliberately excluded from the "
        "standard library's backwards compatibility guarantees.\n"
        "global interpreter lock¶\nThe mechanism used by the CPython interpreter to assure that only one "
        "thread executes Python bytecode at a time."
    )
    assert quoted_sentences(text) == [
        "portion: A set of files in a single directory that contribute to a namespace package.",
        "A provisional API is one which has been deliberately excluded from the standard library's "
        "backwards compatibility guarantees.",
        "global interpreter lock: The mechanism used by the CPython interpreter to assure that only one "
        "thread executes Python bytecode at a time.",
    ]


def test_unrelated_evidence_is_skipped_before_any_model_call():
    a, _ = _assess(
        "Who won the 1998 chess olympiad in Elista?",
        "Acme Cloud Pro plan costs $30 per month.",
        "Acme Cloud Pro plan costs $30 per month.",
    )
    assert a.score < make_ctx().policy.skip_model_below


@pytest.mark.parametrize(
    ("question", "sentence", "typed"),
    [
        ("How tall is the lunar lander?", "The lander stands 50 metres tall on its legs.", True),
        # a count answers "how many" when its counted noun is beside it, not anywhere in the sentence
        ("How many moons does Saturn have?", "Saturn has 146 known moons, more than any other planet.", True),
        ("How many moons does Saturn have?", "The number of moons found around Saturn is now 146.", True),
        (
            "How many moons does Saturn have?",
            "The plume of Saturn's icy, ocean-harboring moon Enceladus is generated by more than 100 powerful geysers.",
            False,
        ),
        ("How tall is the lunar lander?", "NASA wants astronauts back on the moon by 2024 with the lander.", False),
        ("How tall is the lunar lander?", "The lander contract is worth $2.9 billion.", False),
        ("How old is Kevin King?", "Kevin King, 63, was freed by the Taliban on Tuesday.", True),
        ("How old is Kevin King?", "King, a 63-year-old professor, was freed on Tuesday.", True),
        ("How old is Kevin King?", "King was held for three years.", True),  # a duration may state an age
        ("How old is Kevin King?", "King was freed in a prisoner exchange with 3 Taliban members.", False),
        ("What is the top speed of the S3?", "The S3 reaches 32 km/h with its larger motor.", True),
        ("What is the top speed of the S3?", "The S3 costs $1,999 and ships in May.", False),
    ],
)
def test_a_measure_needs_a_value_of_the_asked_dimension(question, sentence, typed):
    assert typed_match(analyse(question), sentence) is typed


_SCORE_IN_A_FRESH_PROCESS = """
from app.language.question import analyse
from app.pipeline.answerability import LexicalAnswerability
from tests.pipeline.helpers import TODAY, make_evidence
q = "Which hostages held by the Taliban in Afghanistan since 2016 were released in the prisoner swap for insurgents?"
texts = [
    "Two hostages, an American and an Australian, held by the Taliban in Afghanistan since 2016 were released Tuesday in a prisoner swap.",
    "US officials said American forces had launched a rescue mission to free the hostages at one point.",
    "The insurgents released in the swap were senior Taliban figures held in Afghanistan prisons since 2016.",
]
ev = [make_evidence(f"S{i}", t, url=f"https://site{i}.example/p") for i, t in enumerate(texts, 1)]
print([repr(f) for m in LexicalAnswerability().assess(analyse(q), ev, TODAY).best for f in m.features])
"""


def test_scores_do_not_depend_on_the_processs_string_hash_seed():
    """Sums of term weights ran in set order, so their last bits (and, at a rounding or ranking tie, the
    answer's second sentence) changed with PYTHONHASHSEED; math.fsum is exact in any order."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    outputs = {
        subprocess.run(
            [sys.executable, "-c", _SCORE_IN_A_FRESH_PROCESS],
            cwd=root,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(1, 9)
    }
    assert len(outputs) == 1, outputs


class _StoredOnly:
    """A stored-vectors-only sentence ranker (GA_SENTENCE_RANKER=auto) with a fixed cosine, missing
    the texts in `unstored`; records what it was asked."""

    name = "minilm"
    stored_only = True

    def __init__(self, unstored=()):
        self.unstored, self.asked = set(unstored), []

    def score_stored(self, question, passages):
        self.asked.extend(passages)
        return [None if any(u in p for u in self.unstored) else 0.9 for p in passages]

    def score(self, question, passages):  # pragma: no cover - a stored-only ranker is never asked this
        raise AssertionError("a stored-only ranker embeds nothing")


def _pair(ranker):
    ev = [
        make_evidence("S1", "The Model 9 battery lasts two full days between charges.", url="https://a.example/p"),
        make_evidence("S2", "The Model 9 comes in three colours.", url="https://b.example/p"),
    ]
    scorer = build_scorer("learned", ranker=ranker)
    return scorer, scorer.assess(analyse("How long does the Model 9 battery last?"), ev, TODAY)


def test_a_request_whose_candidates_all_have_stored_vectors_uses_the_similarity_weights():
    ranker = _StoredOnly()
    scorer, a = _pair(ranker)
    assert scorer.similar_weights != scorer.weights  # the shipped minilm weights
    assert set(ranker.asked) == {m.quoted for m in a.best}
    top = a.best[0]
    assert top.features[-1] == 0.9 and top.score == round(scorer.sentence_score(top.features, True), 4)


def test_a_candidate_without_a_stored_vector_scores_the_request_without_the_feature():
    # One web sentence among corpus sentences: a similarity of 0 would read as "unrelated" to the
    # weights fitted with the feature, so the whole request is scored by the default weights.
    scorer, a = _pair(_StoredOnly(unstored={"three colours"}))
    _, plain = _pair(None)
    assert all(m.features[-1] == 0.0 for m in a.best)
    assert [(m.quoted, m.score) for m in a.best] == [(m.quoted, m.score) for m in plain.best]
    assert a.score == plain.score


def test_the_similarity_weights_threshold_lands_on_the_default_one():
    from app.pipeline import answerability as A

    def p(z):
        return 1 / (1 + A.math.exp(-z))

    for z in (-3.0, A._logit(0.26) - 1e-9, A._logit(0.26) + 1e-9, 0.0, 2.0):
        assert (p(z + A.SIMILARITY_BIAS_SHIFT) >= A.DEFAULT_ANSWERABLE_AT) == (p(z) >= A.SIMILARITY_ANSWERABLE_AT)
    assert make_ctx().policy.answerable_at == A.DEFAULT_ANSWERABLE_AT


def test_the_stored_sentences_are_the_texts_the_stage_compares():
    # The corpus's stored sentence vectors (app/pipeline/evidence_vectors.py) are keyed by
    # quoted_sentences(passage text): every candidate the stage asks about must be among them.
    from app.pipeline.answerability_features import quoted_sentences

    text = (
        "json.dumps(obj, indent=None)\n"
        "Serialize obj to a JSON formatted str. If indent is a non-negative integer, JSON array elements "
        "and object members will be pretty-printed with that indent level.\n"
        "The Model 9 battery lasts two full days between charges."
    )
    ranker = _StoredOnly()
    ev = [make_evidence("S1", text, url="https://a.example/p")]
    build_scorer("learned", ranker=ranker).assess(analyse("How do I pretty-print JSON with json.dumps?"), ev, TODAY)
    assert ranker.asked and set(ranker.asked) <= set(quoted_sentences(text))


def test_with_a_composing_model_the_skip_reads_the_lexical_features_only():
    # Issue 9: with a model, answerability only skips a call at near-zero relevance, at a threshold
    # calibrated on the lexical features; the sentence model is the extractive composer's.
    from types import SimpleNamespace

    from app.pipeline.orchestrator import _answerability_scorer

    ranker, ctx = _StoredOnly(), make_ctx()
    assert _answerability_scorer(ctx, SimpleNamespace(llm=object(), sentence_ranker=ranker)).ranker is None
    assert _answerability_scorer(ctx, SimpleNamespace(llm=None, sentence_ranker=ranker)).ranker is ranker


def test_a_signature_default_states_a_count_or_measure():
    from app.pipeline.answerability import answer_states_kind

    sleep = analyse("Connection.backup(): by default how long does it sleep between attempts?")
    signature = ["backup(target, *, pages=-1, progress=None, name='main', sleep=0.250)."]
    assert answer_states_kind(sleep, signature)  # the parameter names a question term
    wait = analyse("By default how long does sqlite3.connect() wait on a locked database?")
    connect = ["sqlite3.connect(database, timeout=5.0, detect_types=0)."]
    assert not answer_states_kind(wait, connect)  # the extractive guard: "timeout" is not asked about
    assert answer_states_kind(wait, connect, by_model=True)  # a model read the signature and chose it
    size = analyse("How many items can an asyncio.Queue() hold by default?")
    assert answer_states_kind(size, ["class asyncio.Queue(maxsize=0)."], by_model=True)
    # prose arithmetic and a name without a number are not defaults
    from app.pipeline.answerability import _states_code_default

    assert not _states_code_default(size, "Set x = 5 first.", by_model=True)
    assert not _states_code_default(size, "Run it with PYTHONUNBUFFERED=1 or open ?page=2.", by_model=True)
    # every default of a call is read: the asked one need not be the first
    assert _states_code_default(sleep, "backup(target, *, pages=-1, name='main', sleep=0.250).", by_model=False)
    assert not answer_states_kind(size, ["class Queue(maxsize=None)."], by_model=True)
    # a price is not stated by a default
    price = analyse("How much does the Pro plan cost?")
    assert not answer_states_kind(price, ["plan(tier='pro', seats=5)."], by_model=True)
