from datetime import timedelta

from app.domain.types import AbstentionReason
from app.pipeline.conflicts import detect_conflicts, preferred_value
from app.pipeline.gate import check_gate
from app.pipeline.select import select_evidence
from app.settings import Settings
from app.tokens import TokenCounter
from tests.pipeline.helpers import TODAY, make_ctx, make_doc, make_evidence

ARTICLE = [
    "Acme Cloud raised the price of its Pro plan to $30 per month on November 3, 2026, the company said.",
    "The Pro plan previously cost $25 per month and includes unlimited projects and priority support.",
    "Analysts expect competitors to follow with similar increases before the end of the year.",
]


def _ctx(**kw):
    ctx = make_ctx(**kw)
    ctx.tokens = TokenCounter(Settings().tiktoken_cache_dir)
    return ctx


def test_syndicated_copies_collapse_and_never_count_as_independent():
    docs = [
        make_doc(f"https://{d}/acme-price", ARTICLE, published=TODAY, rank=i)
        for i, d in enumerate(["news-a.example", "news-b.example", "news-c.example"])
    ]
    sel = select_evidence(docs, "What does the Acme Cloud Pro plan cost?", 30, _ctx())
    assert {e.domain for e in sel.evidence} == {"news-a.example"}
    assert sorted(sel.evidence[0].also_reported_by) == [
        "https://news-b.example/acme-price",
        "https://news-c.example/acme-price",
    ]
    assert sum(d.reason.startswith("near_duplicate_of") for d in sel.decisions) == 2


def test_one_document_per_registrable_domain():
    docs = [
        make_doc("https://a.example.com/one", ARTICLE, rank=0),
        make_doc(
            "https://b.example.com/two",
            [
                "Acme Cloud Pro plan pricing explained in a different text entirely, "
                "with the plan cost details for teams and other facts."
            ]
            * 2,
            rank=1,
        ),
    ]
    sel = select_evidence(docs, "What does the Acme Cloud Pro plan cost?", 30, _ctx())
    assert len({e.url for e in sel.evidence}) == 1
    assert any(d.reason.startswith("domain_quota") for d in sel.decisions)


def test_stale_beyond_three_windows_is_dropped():
    docs = [make_doc("https://old.example/p", ARTICLE, published=TODAY - timedelta(days=100))]
    sel = select_evidence(docs, "What does the Acme Cloud Pro plan cost?", 30, _ctx())
    assert not sel.evidence
    assert sel.decisions[0].reason.startswith("stale")


def test_token_budget_never_exceeded_and_packing_skips():
    long_para = ("Acme Cloud Pro plan cost details. " * 40).strip()
    shorts = [
        "Acme Cloud Pro plan cost rose this month for teams.",
        "The plan cost of Acme Cloud Pro is now higher.",
        "Reviewers say the Acme Cloud Pro plan cost is fair.",
        "Acme Cloud set the Pro plan cost in its notice.",
    ]
    docs = [
        make_doc(f"https://s{i}.example/p", [long_para if i == 0 else shorts[i - 1]], published=TODAY, rank=i)
        for i in range(5)
    ]
    ctx = _ctx(token_budget=256)
    sel = select_evidence(docs, "What does the Acme Cloud Pro plan cost?", 30, ctx)
    assert sel.prompt_tokens <= 256
    assert sum(e.tokens for e in sel.evidence) == sel.prompt_tokens
    assert len(sel.evidence) >= 2  # the big block was skipped, smaller ones still packed


def test_gate_requires_independent_sources():
    ev = [make_evidence("S1", "Acme Cloud Pro plan costs $30 per month.", url="https://one.example/a")]
    v = check_gate(ev, [], "What does the Acme Cloud Pro plan cost?", 30, False, _ctx(), candidates=3, usable_pages=1)
    assert not v.passed and v.reason is AbstentionReason.insufficient_sources


def test_gate_primary_source_alone_is_enough_by_default_but_not_when_disabled():
    ev = [make_evidence("S1", "Acme Cloud Pro plan costs $30 per month.", url="https://acme.example/p", primary=True)]
    assert check_gate(
        ev, [], "What does the Acme Cloud Pro plan cost?", 30, False, _ctx(), candidates=1, usable_pages=1
    ).passed
    ctx = _ctx()
    ctx.settings = Settings(primary_satisfies_min_sources=False)
    assert not check_gate(
        ev, [], "What does the Acme Cloud Pro plan cost?", 30, False, ctx, candidates=1, usable_pages=1
    ).passed


def test_gate_time_sensitive_needs_dated_fresh_evidence():
    ev = [
        make_evidence("S1", "Acme Cloud Pro plan price is $30.", url="https://a.example/p"),
        make_evidence("S2", "Acme Cloud Pro plan price is $30.", url="https://b.example/p"),
    ]
    v = check_gate(
        ev, [], "What is the current Acme Cloud Pro plan price?", 30, True, _ctx(), candidates=2, usable_pages=2
    )
    assert not v.passed and v.reason is AbstentionReason.stale_evidence
    ev[0].published_at = TODAY
    assert check_gate(
        ev, [], "What is the current Acme Cloud Pro plan price?", 30, True, _ctx(), candidates=2, usable_pages=2
    ).passed


def test_conflicting_prices_detected_and_abstain_policy():
    ev = [
        make_evidence("S1", "The Acme Cloud Pro plan costs $30 per month.", url="https://a.example/p", published=TODAY),
        make_evidence(
            "S2",
            "The Acme Cloud Pro plan costs $25 per month.",
            url="https://b.example/p",
            published=TODAY - timedelta(days=40),
        ),
    ]
    conflicts = detect_conflicts("How much does the Acme Cloud Pro plan cost?", ev)
    assert len(conflicts) == 1 and conflicts[0].attribute == "price"
    assert {v["value"] for v in conflicts[0].values} == {"$30/month", "$25/month"}
    assert preferred_value(conflicts[0])["value"] == "$30/month"  # the more recent
    v = check_gate(
        ev,
        conflicts,
        "How much does the Acme Cloud Pro plan cost?",
        365,
        False,
        _ctx(on_conflict="abstain"),
        candidates=2,
        usable_pages=2,
    )
    assert not v.passed and v.reason is AbstentionReason.conflicting_evidence


def test_agreeing_sources_are_not_a_conflict():
    ev = [
        make_evidence("S1", "The Acme Cloud Pro plan costs $30 per month.", url="https://a.example/p"),
        make_evidence("S2", "Acme Cloud Pro plan: it costs $30 per month now.", url="https://b.example/p"),
    ]
    assert detect_conflicts("How much does the Acme Cloud Pro plan cost?", ev) == []


def test_price_formats_are_one_value_and_history_is_not_a_conflict():
    same = [
        make_evidence("S1", "The Acme Cloud Pro plan costs $49 per month.", url="https://a.example/p"),
        make_evidence("S2", "Acme Cloud Pro plan: it costs $49.00 per month.", url="https://b.example/p"),
    ]
    assert detect_conflicts("How much does the Acme Cloud Pro plan cost?", same) == []
    history = [
        make_evidence(
            "S1",
            "The Acme Cloud Pro plan costs $9.99 per month now, it was $12.99 per month.",
            url="https://a.example/p",
        ),
        make_evidence(
            "S2",
            "The Acme Cloud Pro plan cost $12.99 per month until May; it costs $9.99 per month now.",
            url="https://b.example/p",
        ),
    ]
    assert detect_conflicts("How much does the Acme Cloud Pro plan cost?", history) == []


def test_recently_modified_old_page_is_current():
    doc = make_doc("https://a.example/p", ARTICLE, published=TODAY - timedelta(days=1095))
    doc.dates.modified = TODAY - timedelta(days=2)
    sel = select_evidence([doc], "What does the Acme Cloud Pro plan cost?", 30, _ctx())
    assert sel.evidence


def test_all_stale_is_reported_as_stale():
    v = check_gate(
        [], [], "What is the current Acme price?", 30, True, _ctx(), candidates=2, usable_pages=2, dropped_stale=2
    )
    assert not v.passed and v.reason is AbstentionReason.stale_evidence


def test_near_duplicate_is_exactly_jaccard_at_the_threshold():
    """The size bound that skips intersecting sets of very different sizes never changes the
    verdict of the Jaccard it stands for, at the boundary included."""
    import random

    from app.pipeline.select import NEAR_DUP_THRESHOLD, jaccard, near_duplicate

    def reference(a: frozenset[int], b: frozenset[int]) -> float:
        return len(a & b) / len(a | b) if a | b else 0.0

    rng = random.Random(7)
    for _ in range(5000):
        a = frozenset(rng.sample(range(40), rng.randint(0, 30)))
        b = frozenset(rng.sample(range(40), rng.randint(0, 30)))
        assert jaccard(a, b) == reference(a, b)
        assert near_duplicate(a, b) == (reference(a, b) >= NEAR_DUP_THRESHOLD)
    assert near_duplicate(frozenset(range(7)), frozenset(range(10)))  # J = 0.7 exactly: a duplicate
    assert not near_duplicate(frozenset(range(69)), frozenset(range(100)))


def test_remembered_token_counts_are_the_encoders_per_encoding_and_within_budget(tmp_path):
    from dataclasses import replace

    from app.pipeline import select

    ctx = make_ctx()
    o200k = replace(ctx, tokens=TokenCounter(tmp_path, "o200k_base"))
    cl100k = replace(ctx, tokens=TokenCounter(tmp_path, "cl100k_base"))
    texts = [f"Passage {i}: tomllib parses TOML into dictionaries ünïcode ✓ " * (i % 7 + 1) for i in range(300)]
    for run in (o200k, cl100k):
        assert run.tokens is not None
        direct = [run.tokens.count(t) for t in texts]
        assert [select.count_tokens(run, t) for t in texts] == direct
        assert [select.count_tokens(run, t) for t in texts] == direct  # remembered, per encoding
    assert select.count_tokens(ctx, "x" * 40) == 10  # no tokenizer: the estimate
    assert select._token_memo.size_bytes <= select.TOKEN_MEMO_MAX_BYTES


def test_a_short_api_entry_is_not_scored_as_a_scrap():
    """Reference documentation's entries are short by nature: "PurePath.suffix¶ / The file extension
    of the final component" must outrank long passages that merely share common words."""
    from dataclasses import replace

    from app.domain.types import TextBlock

    filler = (
        "Path objects have many methods for working with files on disk, such as reading a file, "
        "writing a file, checking whether a path exists, and listing the files of a directory. "
    )
    doc = make_doc("https://docs.example.org/pathlib", [], title="pathlib")
    doc = replace(
        doc,
        blocks=[
            TextBlock("heading", "pathlib", 1),
            TextBlock("paragraph", filler * 3),
            TextBlock("pre", ">>> Path('setup.py').exists()\nTrue"),
            TextBlock("paragraph", "PurePath.suffix¶"),
            TextBlock("paragraph", "The file extension of the final component, if any:"),
            TextBlock("pre", ">>> PurePosixPath('my/library/setup.py').suffix\n'.py'"),
            TextBlock("paragraph", filler * 3),
        ],
    )
    sel = select_evidence([doc], "How do I get the file extension of a path?", 30, _ctx())
    assert sel.evidence[0].text.startswith("PurePath.suffix"), [e.text[:40] for e in sel.evidence]


def test_an_undated_page_is_not_marked_down_for_a_question_that_is_not_time_sensitive():
    # Reference docs rarely carry a date, a changelog does: under the stable window the dated page
    # must not outrank the reference page for its date alone (it did in the docs corpus).
    from app.language.time import WINDOW_DAYS, TimeClass
    from app.pipeline.passage_rank import HANDSET_WEIGHTS

    reference = make_doc("https://docs.example/json", ["Pass indent=4 to json.dumps to pretty-print JSON output."])
    changelog = make_doc(
        "https://changes.example/log",
        ["gh-101: json.dumps now pretty-prints nested output faster."],
        published=TODAY - timedelta(days=20),
    )

    def gap(window: int) -> float:
        sel = select_evidence([reference, changelog], "How do I pretty-print JSON output?", window, _ctx())
        score = {e.url: e.score for e in sel.evidence}
        return score[changelog.url] - score[reference.url]

    stable, news = gap(WINDOW_DAYS[TimeClass.stable]), gap(WINDOW_DAYS[TimeClass.news])
    recency = HANDSET_WEIGHTS["fresh"] - HANDSET_WEIGHTS["undated"]
    assert abs((news - stable) - recency) < 1e-3  # the recency terms, and only they
    assert stable < 0  # by its text alone the reference page answers better
