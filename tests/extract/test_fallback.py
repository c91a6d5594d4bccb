"""The trafilatura fallback on low-confidence pages (app/extract/fallback.py, issue 13): the confidence
rule, the agreement rule, that a confident page never reaches trafilatura, and that trafilatura's
text cannot bring back hidden text."""

from __future__ import annotations

import pytest

from app.domain.types import TextBlock
from app.extract import fallback
from app.extract.fallback import choose, extract_with_fallback, low_confidence, trafilatura_blocks, word_share
from app.extract.html import Extraction, extract_html, parse_html

SENTENCE = "The harbour board approved the new ferry timetable on Tuesday after a long public debate. "
OTHER = "A completely different story about a football match that ended in a dramatic penalty shootout. "
CANARY = "Ferries are free on Sundays"


def page(body: str, css: str = "") -> str:
    style = f"<style>{css}</style>" if css else ""
    return f"<!doctype html><html><head><title>Ferry timetable approved</title>{style}</head><body>{body}</body></html>"


def paras(text: str, n: int) -> str:
    return "".join(f"<p>{i} {text * 3}</p>" for i in range(n))


def extraction(text: str, *, density: float = 0.9, rival: float = 0.0, shell: bool = False) -> Extraction:
    blocks = [TextBlock("paragraph", text)] if text else []
    return Extraction(title="t", blocks=blocks, density=density, is_shell=shell, visible_chars=4000, rival_share=rival)


@pytest.mark.parametrize(
    ("density", "rival", "shell", "low"),
    [
        (0.9, 0.0, False, False),  # most of the page kept, no rival: confident
        (0.11, 0.24, False, False),  # at the thresholds' confident side
        (0.3, 0.0, False, False),  # a third of the page kept and no rival region: confident
        (0.1, 0.0, False, True),  # under a tenth of the visible text kept
        (0.9, 0.25, False, True),  # a region outside the selection weighs a quarter of the winner
        (0.9, 1.3, False, True),  # the title region overruled a heavier element
        (0.9, 0.0, True, True),  # an empty shell to us
    ],
)
def test_confidence_rule(density: float, rival: float, shell: bool, low: bool) -> None:
    assert low_confidence(extraction(SENTENCE * 10, density=density, rival=rival, shell=shell)) is low


def test_word_share_counts_words_as_a_multiset() -> None:
    assert word_share("a b c d", "d c b a x y") == 1.0
    assert word_share("a a b b", "a b") == 0.5
    assert word_share("", "a") == 0.0


def test_agreeing_texts_keep_ours() -> None:
    ours = extraction(SENTENCE * 10, density=0.3)
    other = [TextBlock("paragraph", SENTENCE * 9), TextBlock("paragraph", OTHER)]
    assert choose(ours, other) is ours


def test_disagreeing_texts_take_trafilaturas() -> None:
    ours = extraction(OTHER * 10, density=0.3)
    other = [TextBlock("heading", "Ferry timetable", 2), TextBlock("paragraph", SENTENCE * 10)]
    chosen = choose(ours, other)
    assert chosen.blocks == other and not chosen.is_shell
    assert chosen.density == pytest.approx(len("Ferry timetable") / 4000 + len(SENTENCE * 10) / 4000)


def test_our_shell_is_replaced_only_by_a_real_text() -> None:
    shell = extraction("Enable JavaScript to read this.", density=0.1, shell=True)
    assert choose(shell, [TextBlock("paragraph", SENTENCE * 10)]).text == SENTENCE * 10
    assert choose(shell, [TextBlock("paragraph", "Too short.")]) is shell
    assert choose(shell, []) is shell


# the article is a third of the visible text: the rest is a comment section
LOW_DENSITY_PAGE = page(f"<div class='post'>{paras(SENTENCE, 2)}</div><div class='comments'>{paras(OTHER, 4)}</div>")


def _forbid(*_args: object, **_kwargs: object) -> list[TextBlock]:
    raise AssertionError("trafilatura asked on a confident page")


def test_confident_page_does_not_call_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fallback, "trafilatura_blocks", _forbid)
    html = page(f"<article class='post'><h1>Ferry timetable approved</h1>{paras(SENTENCE, 6)}</article>")
    ext = extract_with_fallback(html)
    assert not low_confidence(ext)
    assert ext.text == extract_html(html).text


def test_disabled_fallback_is_never_called(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fallback, "trafilatura_blocks", _forbid)
    assert low_confidence(extract_html(LOW_DENSITY_PAGE))
    html = LOW_DENSITY_PAGE
    assert extract_with_fallback(html, enabled=False).text == extract_html(html).text


def test_low_confidence_page_asks_and_follows_the_agreement_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def fake(pruned_html: str, url: str | None = None) -> list[TextBlock]:
        asked.append(pruned_html)
        return answer

    monkeypatch.setattr(fallback, "trafilatura_blocks", fake)
    ours = extract_html(LOW_DENSITY_PAGE)
    assert low_confidence(ours) and "harbour" in ours.text and "football" not in ours.text
    answer = [TextBlock("paragraph", SENTENCE * 7)]  # the same part of the page: ours stays
    assert extract_with_fallback(LOW_DENSITY_PAGE).text == ours.text
    answer = [TextBlock("paragraph", OTHER * 12)]  # a different part: trafilatura's is taken
    assert extract_with_fallback(LOW_DENSITY_PAGE).text == OTHER * 12
    assert len(asked) == 2


def test_a_failing_fallback_leaves_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object, **_kwargs: object) -> list[TextBlock]:
        raise RuntimeError("boom")

    monkeypatch.setattr(fallback, "trafilatura_blocks", broken)
    assert extract_with_fallback(LOW_DENSITY_PAGE).text == extract_html(LOW_DENSITY_PAGE).text


def test_trafilatura_reads_the_pruned_page_without_hidden_text() -> None:
    """Hidden by a page <style> rule (trafilatura alone keeps it) and by zero-width characters."""
    pytest.importorskip("trafilatura")
    body = (
        f"<article><h2>Timetable details</h2><p>{SENTENCE * 3}</p>"
        f"<p>Ferries now leave every twenty minutes. <span class='promo-x'>{CANARY}.</span></p>"
        f"<ul><li>North pier: every twenty minutes</li><li>South pier: every half hour</li></ul>"
        f"<p>Fa\u200bres r\u200cise in May. {SENTENCE * 2}</p></article>"
    )
    html = page(body, css=".promo-x{display:none}")
    import trafilatura

    assert CANARY in (trafilatura.extract(html) or "")  # so the pruning is what removes it
    parser = parse_html(html)
    extract_html(html, parser=parser)  # prunes the tree in place
    blocks = trafilatura_blocks(parser.html or "")
    text = "\n".join(b.text for b in blocks)
    assert "Ferries now leave every twenty minutes." in text and CANARY not in text
    assert "Fares rise in May." in text
    kinds = {b.kind for b in blocks}
    assert "list" in kinds and "paragraph" in kinds
