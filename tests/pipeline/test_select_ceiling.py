"""The evidence span ceiling (GA_DEFAULT_MAX_EVIDENCE) is a ceiling: on reference pages of short entries
a span count of 30 no longer ends the evidence while the token budget has room (docs/EVALUATION.md,
"120 more docs-corpus questions")."""

from dataclasses import replace

from app.domain.types import TextBlock
from app.pipeline.select import MAX_PASSAGES_PER_DOC, select_evidence
from app.settings import Settings
from tests.pipeline.helpers import make_ctx, make_doc


def _reference_page(k: int):
    """A primary-domain page of 14 short API entries, each its own passage."""
    doc = make_doc(f"https://docs.example.org/p{k}.html", [], primary=True, title=f"Widgets {k}")
    entries = [
        block
        for i in range(14)
        for block in (
            TextBlock("heading", f"f{k}_{i}(x)", 2),
            TextBlock("paragraph", f"Return the widget count of x for table {k}.{i}."),
        )
    ]
    return replace(doc, blocks=doc.blocks + entries, content_hash=f"reference-page-{k}")


def test_short_entries_fill_past_thirty_spans_while_the_budget_has_room():
    ctx = make_ctx()
    assert ctx.options.max_evidence == Settings().default_max_evidence == 40
    sel = select_evidence([_reference_page(k) for k in range(3)], "How do I count widgets?", 3650, ctx)
    # Three pages of a primary domain, each lending at most MAX_PASSAGES_PER_DOC spans: the per-page cap
    # ends it here, not the old ceiling of 30, and the budget is far from full.
    assert len(sel.evidence) == 3 * MAX_PASSAGES_PER_DOC > 30
    assert sel.prompt_tokens < ctx.options.token_budget


def test_a_request_may_still_lower_the_ceiling():
    sel = select_evidence(
        [_reference_page(k) for k in range(3)], "How do I count widgets?", 3650, make_ctx(max_evidence=5)
    )
    assert len(sel.evidence) == 5
