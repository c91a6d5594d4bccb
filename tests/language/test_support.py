"""LexicalSupport: overlap, attribution, negation, antonyms, numbers, calibration of the verdict."""

from __future__ import annotations

import types

import pytest

from app.language import support_numbers, support_passages
from app.language.support import LexicalSupport, SupportScore, SupportScorer, strip_attribution

S = LexicalSupport()
HI = S.threshold + S.band  # decisive-supported at or above
LO = S.threshold - S.band  # decisive-unsupported below


def supported(s: SupportScore) -> bool:
    return s.score >= S.threshold


def decisive_yes(s: SupportScore) -> bool:
    return s.decisive and s.score >= HI


def decisive_no(s: SupportScore) -> bool:
    return s.decisive and s.score <= 0.3


def test_protocol_and_shape():
    assert isinstance(S, SupportScorer) and S.name == "lexical"
    s = S.score("The Wild beat the Sabres 4-1 on Tuesday.", ["The Wild beat the Sabres 4-1 on Tuesday in Buffalo."])
    assert isinstance(s, SupportScore) and 0.0 <= s.score <= 1.0 and isinstance(s.reasons, list)


def test_empty_inputs_are_decisive_unsupported():
    assert decisive_no(S.score("Anything at all.", []))
    assert decisive_no(S.score("Anything at all.", ["", "   "]))
    assert decisive_no(S.score("It is.", ["It is what it is."]))


# --- overlap, windows, quote ---------------------------------------------------------------------

PASSAGE = (
    "Walt Disney Co. launched Disney+ last week. The company struggled to contend with the more than "
    "10 million users who activated their accounts last Tuesday. Disney's $6.99-a-month service is "
    "stocked with movies from Pixar and Marvel. Some consumers reported telephone wait times that "
    "exceeded two hours."
)


def test_verbatim_is_decisive_supported_with_its_sentence_as_quote():
    s = S.score("Some consumers reported telephone wait times that exceeded two hours.", [PASSAGE])
    assert decisive_yes(s), s
    assert s.quote == "Some consumers reported telephone wait times that exceeded two hours."


def test_claim_spanning_two_adjacent_sentences_quotes_both():
    claim = "Disney launched Disney+ last week, and more than 10 million users activated their accounts."
    s = S.score(claim, [PASSAGE])
    assert "launched Disney+ last week" in s.quote and "10 million users" in s.quote
    assert supported(s)


def test_paraphrase_lands_in_the_gray_band():
    s = S.score("Over 10 million people signed up for Disney+ on its first day, overwhelming the company.", [PASSAGE])
    assert not s.decisive and LO <= s.score < HI, s


def test_unrelated_claim_is_decisive_unsupported():
    s = S.score("Emirates finalised a deal to purchase Boeing Dreamliner jets.", [PASSAGE])
    assert s.decisive and s.score < LO and any(r.startswith("low_overlap") for r in s.reasons), s


def test_quote_is_capped_at_500_chars():
    long_sentence = "The council approved the budget " + " ".join(f"item{i}" for i in range(150)) + "."
    s = S.score("The council approved the budget.", [long_sentence])
    assert len(s.quote) <= 500 and s.quote.startswith("The council approved the budget")


def test_a_name_missing_from_the_passages_keeps_the_claim_under_the_threshold():
    passage = "Emirates Airline finalized a deal to purchase 30 of Boeing's 787-9 Dreamliner jets on Wednesday."
    assert decisive_yes(
        S.score("Emirates Airline finalized a deal to purchase 30 of Boeing's 787-9 Dreamliner jets.", [passage])
    )
    s = S.score("Qatar Airways finalized a deal to purchase 30 of Boeing's 787-9 Dreamliner jets.", [passage])
    assert not supported(s) and not s.decisive and any(r.startswith("entity_missing") for r in s.reasons), s


def test_acronym_and_demonym_count_as_present():
    passage = "The company shelved its plans for an initial public offering on September 30."
    s = S.score("The company shelved its IPO plans on September 30.", [passage])
    assert not any(r.startswith("entity_missing") for r in s.reasons), s


# --- attribution -------------------------------------------------------------------------------


def test_attribution_is_stripped():
    assert strip_attribution("According to reuters.com (2019-11-19), oil fell.") == "oil fell."
    passage = "Oil prices fell sharply on Tuesday on oversupply concerns."
    s = S.score(
        "According to reuters.com (2019-11-19), oil prices fell sharply on Tuesday on oversupply concerns.", [passage]
    )
    assert decisive_yes(s), s  # no "2019"/"11"/"19" number to find, no "reuters" term missing


# --- negation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "passage,claim",
    [
        (
            "The New York attorney general is investigating WeWork.",
            "The New York attorney general is not investigating WeWork.",
        ),
        (
            "The regulator supports the merger of the two airlines.",
            "The regulator does not support the merger of the two airlines.",
        ),
        (
            "Mayer said Disney had seen that level of demand before.",
            "Mayer said Disney had never seen that level of demand.",
        ),
        (
            "The station has seen measurable rain since mid-September.",
            "The station hasn't seen measurable rain since mid-September.",
        ),
        (
            "With medical intervention, the disease is inevitably fatal.",
            "Without medical intervention, the disease is inevitably fatal.",
        ),
        (
            "Apple offers free keyboard repairs to affected customers.",
            "Apple no longer offers free keyboard repairs to affected customers.",
        ),
        (
            "Russia fulfilled its agreed oil output cuts in November.",
            "Russia failed to fulfill its agreed oil output cuts in November.",
        ),
        (
            "A spokesperson for the attorney general commented on the inquiry.",
            "A spokesperson for the attorney general declined to comment on the inquiry.",
        ),
        (
            "JLL agreed to accept close to 1,000 maintenance workers.",
            "JLL refused to accept close to 1,000 maintenance workers.",
        ),
        ("Assange has admitted both allegations.", "Assange has denied both allegations."),
        (
            "Both sides were hopeful the swap could lead to a breakthrough.",
            "Neither side was hopeful the swap could lead to a breakthrough.",
        ),
        (
            "Sources said Russia is likely to agree to further output cuts.",
            "Sources said Russia is unlikely to agree to further output cuts.",
        ),
    ],
)
def test_polarity_mismatch_is_decisive_unsupported_both_ways(passage, claim):
    for c, p in ((claim, passage), (passage, claim)):
        s = S.score(c, [p])
        assert decisive_no(s), (c, p, s)
        assert any(r.startswith("negation_mismatch") for r in s.reasons), s


def test_matching_negation_is_supported():
    p = "Sonya Zoghlin said her client did not intend to cause harm to Omar and did not make plans to do so."
    s = S.score("Zoghlin said her client did not intend to cause harm to Omar.", [p])
    assert decisive_yes(s), s
    p = "No details were provided on how the industrial and technological targets would be achieved."
    s = S.score("The ministry gave no details on how the targets would be achieved.", [p])
    assert supported(s) and not any(r.startswith("negation") for r in s.reasons), s


def test_negation_in_another_clause_does_not_flip_the_claim():
    p = "Job cuts will be announced later this week in areas that do not support WeWork's core business goals, said Marcelo Claure."
    assert decisive_yes(S.score("Job cuts will be announced later this week, said Marcelo Claure.", [p]))
    p = "More than a third of WeWork's 12,000 employees will likely receive notice this week that they no longer have a job."
    assert decisive_yes(
        S.score("More than a third of WeWork's 12,000 employees will likely receive notice this week.", [p])
    )


def test_negation_attaches_to_the_predicate_not_to_every_word_after_it():
    p = (
        "The cause of the crash is under investigation, however preliminary reports do not indicate it was "
        "caused by enemy fire, the statement said."
    )
    s = S.score("Preliminary reports do not indicate the crash was caused by enemy fire.", [p])
    assert supported(s) and not any(r.startswith("negation") for r in s.reasons), s


def test_not_only_is_not_a_negation():
    p = "The tool not only speeds up builds but also cuts memory use."
    s = S.score("The tool speeds up builds.", [p])
    assert not any(r.startswith("negation") for r in s.reasons), s


# --- antonyms ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "passage,claim",
    [
        (
            "Oil prices rose sharply on Tuesday on oversupply concerns.",
            "Oil prices fell sharply on Tuesday on oversupply concerns.",
        ),
        (
            "The Federal Reserve decided to cut its benchmark interest rate last month.",
            "The Federal Reserve decided to increase its benchmark interest rate last month.",
        ),
        ("Russia beat Croatia on Monday in Madrid.", "Russia lost to Croatia on Monday in Madrid."),
        (
            "Spain earned a 2-1 win over Russia in the Davis Cup Finals.",
            "Spain suffered a 2-1 loss to Russia in the Davis Cup Finals.",
        ),
        (
            "The board approved the proposal to expand the plant.",
            "The board rejected the proposal to expand the plant.",
        ),
        (
            "Swedish prosecutors decided to reopen the investigation in May.",
            "Swedish prosecutors decided to close the investigation in May.",
        ),
        (
            "Their release came hours after the government freed three prisoners.",
            "Their release came hours before the government freed three prisoners.",
        ),
        (
            "Pochettino was sacked less than six months after the final.",
            "Pochettino was sacked more than six months after the final.",
        ),
        (
            "The outgassing occurs at lower levels than previously estimated.",
            "The outgassing occurs at higher levels than previously estimated.",
        ),
        (
            "Alibaba shares closed in New York at $185.25, up 0.35%.",
            "Alibaba shares closed in New York at $185.25, down 0.35%.",
        ),
        (
            "Since 2008 there has been a year of revenue gain in the newspaper industry.",
            "Since 2008 there has been a year of revenue loss in the newspaper industry.",
        ),
        (
            "Marijuana for recreational use has been legalized in 11 states.",
            "Marijuana for recreational use has been banned in 11 states.",
        ),
        (
            "The United States firmly opposes intimidation by any claimant.",
            "The United States firmly supports intimidation by any claimant.",
        ),
        ("Small investors in Hong Kong have welcomed the deal.", "Small investors in Hong Kong have refused the deal."),
    ],
)
def test_opposite_predicate_is_decisive_unsupported(passage, claim):
    for c, p in ((claim, passage), (passage, claim)):
        s = S.score(c, [p])
        assert decisive_no(s), (c, p, s)
        assert any(r.startswith("antonym:") or r.startswith("negation") for r in s.reasons), s


@pytest.mark.parametrize(
    "passage,claim",
    [
        (
            "Shares of Home Depot are dropping in premarket trading.",
            "Shares of Home Depot are rising in premarket trading.",
        ),
        ("Coty shares have been climbing all year.", "Coty shares have been falling all year."),
        ("The Wild are winning games on the road.", "The Wild are losing games on the road."),
    ],
)
def test_inflected_forms_of_short_words_are_met(passage, claim):
    s = S.score(claim, [passage])
    assert decisive_no(s) and any(r.startswith("antonym:") for r in s.reasons), s


def test_antonym_is_judged_against_the_clause_about_the_same_things():
    p = "Oil prices fell sharply on Tuesday, while a gauge of stocks across the globe rose for a seventh session."
    assert decisive_yes(S.score("Oil prices fell sharply on Tuesday.", [p]))
    assert decisive_yes(S.score("A gauge of stocks across the globe rose for a seventh session.", [p]))
    s = S.score("A gauge of stocks across the globe fell for a seventh session.", [p])
    assert decisive_no(s) and "antonym:fell/rose" in s.reasons, s


def test_negated_antonym_agrees():
    s = S.score("Sales did not rise in October.", ["Sales fell in October."])
    assert not any(r.startswith("antonym") for r in s.reasons), s


def test_phrasal_up_is_not_a_direction():
    p = "Alibaba is set to raise up to $12.9bn, while its shares were down 2% in New York."
    s = S.score("Alibaba is set to raise up to $12.9bn.", [p])
    assert not any(r.startswith("antonym") for r in s.reasons), s


# --- numbers -----------------------------------------------------------------------------------


def test_missing_number_is_decisive_unsupported():
    p = "The order is valued at $410 million at list prices."
    s = S.score("The order is valued at $420 million at list prices.", [p])
    assert decisive_no(s) and "number_missing:420" in s.reasons, s


@pytest.mark.parametrize(
    "claim,passage",
    [
        ("Local dealers sold 1200 new cars in October.", "Local dealers sold 1,200 new cars in October."),
        ("The order is worth $410m at list prices.", "The order is valued at $410 million at list prices."),
        (
            "Comparable sales growth guidance was 4% for the year.",
            "Comparable sales growth guidance was 4.0% for the year.",
        ),
        (
            "Problematic use rose by 37 percent, from 0.90% to 1.23%.",
            "Problematic use rose by 37%, from 0.9 percent to 1.23 percent.",
        ),
    ],
)
def test_the_same_number_written_another_way_is_found(claim, passage):
    s = S.score(claim, [passage])
    assert supported(s) and not any(r.startswith("number") for r in s.reasons), s


def test_scores_are_numbers_as_a_whole():
    p = "Spain earned a 2-1 win over Russia after Rublev won 3-6, 6-3, 7-6 (0)."
    s = S.score("Spain earned a 3-0 win over Russia.", [p])
    assert decisive_no(s) and "number_missing:3-0" in s.reasons, s
    assert supported(S.score("Spain earned a 2-1 win over Russia.", [p]))


def test_a_number_given_to_another_noun_is_a_mismatch():
    p = "James finished with 25 points, 11 rebounds and 10 assists, and the Lakers have won 12 of 13."
    s = S.score("James finished with 25 points, 12 rebounds and 10 assists.", [p])
    assert decisive_no(s) and "number_mismatch:12 rebound" in s.reasons, s
    assert decisive_yes(S.score("James finished with 25 points, 11 rebounds and 10 assists.", [p]))


def test_number_from_another_sentence_is_not_supported():
    p = (
        "Sweden dropped an investigation into a 2010 allegation against Assange. Assange has avoided "
        "extradition after seeking refuge at the Ecuadorean embassy in London in 2012."
    )
    s = S.score("Assange sought refuge at the Ecuadorean embassy in London in 2010.", [p])
    assert not supported(s) and "number_elsewhere:2010" in s.reasons, s


def test_values_module_is_a_second_opinion(monkeypatch):
    passage = "The repair took two hours on Tuesday."
    claim = "The repair took 2 hours on Tuesday."

    class V(types.SimpleNamespace):
        pass

    def find_values(text):
        out = []
        if "two hours" in text:
            out.append(V(kind="measure", amount=2.0, unit="h"))
        if "2 hours" in text:
            out.append(V(kind="measure", amount=2.0, unit="h"))
        return out

    fake = types.SimpleNamespace(
        find_values=find_values, same_value=lambda a, b: (a.kind, a.unit, a.amount) == (b.kind, b.unit, b.amount)
    )
    support_passages.read_passage.cache_clear()
    monkeypatch.setattr(support_numbers, "_values", lambda: None)
    assert "number_missing:2" in S.score(claim, [passage]).reasons  # digits alone: missing
    support_passages.read_passage.cache_clear()
    monkeypatch.setattr(support_numbers, "_values", lambda: fake)
    s = S.score(claim, [passage])
    assert not any(r.startswith("number_missing") for r in s.reasons), s
    support_passages.read_passage.cache_clear()


def test_a_broken_values_module_never_breaks_scoring(monkeypatch):
    def boom(text):
        raise RuntimeError("broken")

    support_passages.read_passage.cache_clear()
    monkeypatch.setattr(support_numbers, "_values", lambda: types.SimpleNamespace(find_values=boom, same_value=boom))
    s = S.score("The repair took 5 hours.", ["The repair took 3 hours."])
    assert decisive_no(s) and "number_missing:5" in s.reasons
    support_passages.read_passage.cache_clear()


# --- calibration -------------------------------------------------------------------------------


def test_threshold_and_band_are_the_scorers():
    scorer = LexicalSupport(threshold=0.5, band=0.2)
    p = "Oil prices fell sharply on Tuesday on oversupply concerns."
    s = scorer.score("Oil prices fell sharply on Tuesday on oversupply concerns.", [p])
    assert s.decisive and s.score >= 0.7
    s = scorer.score("Oil prices rose sharply on Tuesday on oversupply concerns.", [p])
    assert s.decisive and s.score < 0.3


def test_versions_are_numbers_as_written():
    # "5.4.2" once crashed the number reader (a 500 for the whole request).
    s = LexicalSupport().score(
        "Brindle 5.4.2 is the latest release.", ["Brindle 5.4.2 is the latest release, out today."]
    )
    assert s.score >= 0.6
    s = LexicalSupport().score(
        "Brindle 5.4.3 is the latest release.", ["Brindle 5.4.2 is the latest release, out today."]
    )
    assert s.score < 0.6
