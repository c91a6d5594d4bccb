from app.pipeline.cite import parse_draft
from app.pipeline.verify import support_of, verify_claims
from tests.pipeline.helpers import make_evidence

EV = [
    make_evidence(
        "S1", "Python 3.11 was released on October 24, 2022. It is between 10 and 60 percent faster than 3.10."
    ),
    make_evidence("S2", "The tomllib module parses TOML documents. It does not support writing TOML."),
]


def test_supported_sentence_scores_high():
    support, quote = support_of("Python 3.11 was released on October 24, 2022.", [EV[0]])
    assert support >= 0.9
    assert "October 24, 2022" in quote


def test_wrong_number_is_never_supported():
    support, _ = support_of("Python 3.11 was released on October 24, 2021.", [EV[0]])
    assert support < 0.5


def test_drop_removes_unsupported_and_uncited_sentences():
    answer = parse_draft(
        "Python 3.11 was released on October 24, 2022 [S1]. The moon is made of green cheese [S2]. "
        "Rust is a systems programming language.",
        EV,
    )
    score = verify_claims(answer, EV, mode="drop", threshold=0.5)
    assert [c.text for c in answer.claims] == ["Python 3.11 was released on October 24, 2022."]
    assert len(answer.dropped_claims) == 2
    assert score == round(1 / 3, 3)


def test_flag_keeps_sentences_but_marks_them():
    answer = parse_draft("The moon is made of green cheese [S2]. tomllib parses TOML documents [S2].", EV)
    verify_claims(answer, EV, mode="flag", threshold=0.5)
    assert [c.supported for c in answer.claims] == [False, True]
    assert not answer.dropped_claims


def test_off_skips_verification():
    answer = parse_draft("The moon is made of green cheese [S2].", EV)
    assert verify_claims(answer, EV, mode="off", threshold=0.5) is None
    assert len(answer.claims) == 1


def test_a_negated_claim_is_never_supported():
    ev = [
        make_evidence(
            "S1", "The Zephyr X2 does not support wireless charging, the company confirmed.", url="https://a.example/p"
        )
    ]
    support, _ = support_of("The Zephyr X2 supports wireless charging.", ev)
    assert support < 0.6
    support, _ = support_of("The Zephyr X2 does not support wireless charging.", ev)
    assert support >= 0.6


def test_a_reversed_claim_is_never_supported():
    ev = [
        make_evidence("S1", "Shares of Acme fell 12% on Tuesday after the earnings report.", url="https://a.example/p")
    ]
    support, _ = support_of("Shares of Acme rose 12% on Tuesday after the earnings report.", ev)
    assert support < 0.6


def test_a_sentence_quoted_under_its_api_entry_is_judged_as_the_sentence():
    # The extractive composer quotes "entry: sentence" (answerability_features.quote); the entry's default
    # (maxsize=0) is not a number the sentence states, so it must not hold the sentence back.
    text = (
        "class asyncio.Queue(maxsize=0)¶\nA first in, first out (FIFO) queue.\n"
        "If maxsize is less than or equal to zero, the queue size is infinite."
    )
    ev = [make_evidence("S1", text, url="https://docs.example/asyncio-queue")]
    assert support_of("asyncio.Queue(maxsize=0): A first in, first out (FIFO) queue.", ev)[0] >= 0.9
    # an entry the span does not hold is judged with the sentence, and its number is missing
    assert support_of("asyncio.Queue(maxsize=5): A first in, first out (FIFO) queue.", ev)[0] < 0.6
    # the sentence itself must still be supported
    assert support_of("asyncio.Queue(maxsize=0): A last in, first out (LIFO) queue.", ev)[0] < 0.6

    # a sentence of another entry of the same span, put under this entry, is judged whole
    two = (
        "class asyncio.Queue(maxsize=0)¶\nA first in, first out (FIFO) queue.\n"
        "class asyncio.LifoQueue(maxsize=0)¶\nA variant of Queue that retrieves most recently added entries first."
    )
    ev2 = [make_evidence("S1", two, url="https://docs.example/asyncio-queue")]
    assert support_of("asyncio.LifoQueue(maxsize=0): A first in, first out (FIFO) queue.", ev2)[0] < 0.6
    assert support_of("asyncio.Queue(maxsize=0): A first in, first out (FIFO) queue.", ev2)[0] >= 0.9
