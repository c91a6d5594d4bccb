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


def test_each_passage_a_page_lends_lowers_its_next_by_the_discount():
    # Scores set through the features: the page's search rank and the passage's position.
    # Page A (rank 0): 1.0, 0.85, 0.8; page B (rank 1): 0.9, 0.75. Discount 0.3: A0, then B0 (0.9 beats
    # A1's 0.85 - 0.3), A1 (0.55 beats B1's 0.45), B1 (0.45 beats A2's 0.8 - 0.6); without a discount
    # the plain order A0, B0, A1, A2.
    class ByPosition(HandSetScorer):
        def __init__(self, discount: float):
            super().__init__()
            self.same_doc_discount = discount

        def score(self, features):
            return 0.5 + 0.3 * features[FEATURES.index("lead")] + 0.2 * features[FEATURES.index("search_rank")]

    para = [f"{PROSE} Paragraph {i} of the page. " + "Filler words about nesting levels. " * 6 for i in range(3)]
    a = make_doc("https://a.example/json", para)
    other = [
        f"Paragraph {i}: to pretty-print JSON output, call json.dumps with indent. " + "Words on sorting keys. " * 16
        for i in range(2)
    ]
    b = make_doc("https://b.example/json", other, rank=1)  # not a near-duplicate of A
    ctx = make_ctx(max_evidence=4)
    cand = rank_candidates([a, b], QUESTION, 3650, ctx)
    assert sorted((p.doc.url, p.index) for p in cand.passages) == sorted(
        [(a.url, 0), (a.url, 1), (a.url, 2), (b.url, 0), (b.url, 1)]
    ), "one passage per paragraph"

    def chosen(discount: float) -> list[tuple[str, str]]:
        sel = select_evidence([a, b], QUESTION, 3650, make_ctx(max_evidence=4), scorer=ByPosition(discount))
        return sorted((e.url, e.text.split("Paragraph ")[1][0]) for e in sel.evidence)

    assert chosen(0.3) == [(a.url, "0"), (a.url, "1"), (b.url, "0"), (b.url, "1")]
    assert chosen(0.0) == [(a.url, "0"), (a.url, "1"), (a.url, "2"), (b.url, "0")]
