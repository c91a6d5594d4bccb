"""Passage features and the hand-set scorer (app/pipeline/passage_rank.py), through rank_candidates."""

from app.pipeline.passage_rank import FEATURES, HANDSET_WEIGHTS, HandSetScorer
from app.pipeline.passages import Passage, bm25
from app.pipeline.select import rank_candidates, select_evidence
from tests.pipeline.helpers import TODAY, make_ctx, make_doc

QUESTION = "How do I pretty-print JSON output?"
PROSE = (
    "Pass indent=4 to json.dumps to pretty-print JSON output with four spaces per level of nesting. "
    "A negative indent or zero inserts only newlines, and None, the default, selects the most compact form."
)


def test_every_passage_gets_one_value_per_feature_and_a_scrap_is_marked_down():
    docs = [
        make_doc("https://docs.example/json", [PROSE]),
        make_doc("https://other.example/json", ["Pretty-print JSON output."]),  # a scrap under 200 characters
    ]
    cand = rank_candidates(docs, QUESTION, 3650, make_ctx())
    lexical = FEATURES.index("lexical")
    by_url = {p.doc.url: f for p, f in zip(cand.passages, cand.features)}
    assert all(len(f) == len(FEATURES) for f in cand.features)
    bm25_best = max(cand.passages, key=lambda p: p.score)
    assert bm25_best.doc.url == "https://other.example/json"  # BM25's length normalisation favours the scrap
    assert by_url["https://docs.example/json"][lexical] > by_url["https://other.example/json"][lexical]


def test_a_primary_page_outranks_the_same_text_elsewhere_by_the_primary_weight():
    vendor = make_doc("https://vendor.example/json", [PROSE], primary=True)
    mirror = make_doc(
        "https://mirror.example/json", [PROSE.replace("four spaces", "4 spaces").replace("compact", "dense")]
    )
    cand = rank_candidates([vendor, mirror], QUESTION, 3650, make_ctx())
    scorer = HandSetScorer()
    score = {p.doc.url: scorer.score(f) for p, f in zip(cand.passages, cand.features)}
    gap = score[vendor.url] - score[mirror.url]
    assert gap > HANDSET_WEIGHTS["primary"] / 2  # the text differs slightly; the weight dominates the gap


def test_bm25_gives_a_term_no_passage_holds_the_largest_idf():
    doc = make_doc("https://docs.example/a", ["alpha beta gamma " * 80, "alpha delta " * 90])
    passages = [Passage(doc, "", "alpha beta", 0, ["alpha", "beta"]), Passage(doc, "", "alpha", 1, ["alpha"])]
    idf = bm25(passages, ["alpha", "beta", "zeta"])
    assert idf["zeta"] > idf["beta"] > idf["alpha"]
    assert passages[0].score > passages[1].score


def test_a_custom_scorer_decides_the_evidence_order():
    class Reverse(HandSetScorer):
        def score(self, features):  # the worst lexical match first
            return 2.0 - features[FEATURES.index("lexical")]

    docs = [
        make_doc("https://a.example/json", [PROSE], published=TODAY),
        make_doc("https://b.example/other", ["JSON output can be long; some tools print it on one line."]),
    ]
    default = select_evidence(docs, QUESTION, 3650, make_ctx())
    custom = select_evidence(docs, QUESTION, 3650, make_ctx(), scorer=Reverse())
    assert default.evidence[0].url == "https://a.example/json"
    assert custom.evidence[0].url == "https://b.example/other"
