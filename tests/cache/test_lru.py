"""The byte-bounded LRU behind the per-process memos, and each memo's cost model checked against a
deep size walk of what it really keeps (a character-count estimate undercounted about 2x on
non-ASCII pages, which let the soak's memory grow past the documented budgets)."""

from __future__ import annotations

import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app import metrics
from app.cache.extraction_memo import document_bytes
from app.cache.lru import ENTRY_OVERHEAD_BYTES, ByteLRU, str_bytes
from app.domain.types import FetchedPage, FetchReason
from app.pipeline.extract import extract_page
from app.pipeline.passages import _split, skeleton_bytes
from app.pipeline.select import shingle_set_bytes, shingles
from tests.pipeline.helpers import make_doc

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "sample"
# Text in scripts CPython stores at 1, 2 and 4 bytes a character.
WORLD = [
    "Die Regierung hat am Dienstag neue Regeln für Mieten beschlossen, die ab März gelten. " * 12,
    "Η κυβέρνηση ανακοίνωσε νέα μέτρα για τα ενοίκια που ισχύουν από τον Μάρτιο του επόμενου έτους. " * 10,
    "政府は火曜日に家賃に関する新しい規則を決定し、三月から適用される。" * 20,
    "Emoji in a caption 🎉🚀 still count four bytes a character in CPython strings. " * 10,
]


def deep_size(obj: object, seen: set[int] | None = None) -> int:
    """Bytes of obj and everything it references, each object once."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        size += sum(deep_size(k, seen) + deep_size(v, seen) for k, v in obj.items())
    elif isinstance(obj, list | tuple | set | frozenset):
        size += sum(deep_size(x, seen) for x in obj)
    elif hasattr(obj, "__slots__"):
        size += sum(deep_size(getattr(obj, a), seen) for a in obj.__slots__ if hasattr(obj, a))
    elif hasattr(obj, "__dict__"):
        size += deep_size(vars(obj), seen)
    return size


def _documents():
    docs = []
    for path in sorted(CORPUS.rglob("*.html"))[:25]:
        page = FetchedPage(
            url=f"https://docs.python.org/3/{path.name}",
            requested_url="",
            reason=FetchReason.ok,
            status=200,
            content_type="text/html",
            body=path.read_bytes(),
            fetched_at=datetime.now(UTC),
        )
        doc = extract_page(page, None, 0, fallback=False)
        if doc is not None:
            docs.append(doc)
    docs += [make_doc(f"https://news.example/{i}", [text, text[::-1]]) for i, text in enumerate(WORLD)]
    assert len(docs) >= 20
    return docs


@pytest.fixture(scope="module")
def documents():
    return _documents()


def _within(measured: int, estimated: int) -> bool:
    """Never undercount by more than a little (the budget must hold), never overcount much."""
    return 0.9 * measured <= estimated <= 1.2 * measured


def test_document_cost_is_what_the_document_holds(documents):
    off = [(d.url, deep_size(d), document_bytes(d)) for d in documents if not _within(deep_size(d), document_bytes(d))]
    assert not off, off


def test_passage_skeleton_cost_is_what_the_skeletons_hold(documents):
    for doc in documents:
        skeletons = [(p.heading, p.text, p.index, p.kind, p.terms) for p in _split(doc)]
        assert _within(deep_size(skeletons), skeleton_bytes(skeletons)), doc.url


def test_shingle_set_cost_is_what_the_set_holds(documents):
    for doc in documents:
        sh = shingles(doc.text)
        assert _within(deep_size(sh), shingle_set_bytes(sh)), doc.url


def test_str_bytes_counts_wide_characters():
    assert str_bytes(["ab"]) < str_bytes(["αβ"]) < str_bytes(["🎉🚀"])


def test_lru_evicts_least_recently_used_past_the_budget():
    one = ENTRY_OVERHEAD_BYTES + sys.getsizeof("a") + 100
    lru: ByteLRU[str, int] = ByteLRU(2 * one, "test")
    assert lru.put("a", 1, 100) and lru.put("b", 2, 100)
    assert lru.get("a") == 1  # a is now the most recently used
    lru.put("c", 3, 100)
    assert "a" in lru and "c" in lru and "b" not in lru
    assert lru.size_bytes == 2 * one and len(lru) == 2
    assert lru.peek("a") == 1 and lru.pop("a") == 1 and lru.size_bytes == one


def test_lru_keeps_no_entry_bigger_than_its_share_and_flushes_nothing_for_it():
    lru: ByteLRU[str, str] = ByteLRU(10_000, "test", max_entry_share=8)
    assert lru.put("small", "s", 10)
    assert not lru.put("huge", "x", 5_000)
    assert "huge" not in lru and lru.get("small") == "s"


def test_replacing_an_entry_keeps_the_total_exact():
    lru: ByteLRU[str, str] = ByteLRU(1_000_000, "test")
    lru.put("a", "x", 500)
    lru.put("a", "y", 10)
    assert lru.size_bytes == ENTRY_OVERHEAD_BYTES + sys.getsizeof("a") + 10
    lru.clear()
    assert lru.size_bytes == 0 and len(lru) == 0


def test_the_store_gauge_follows_the_total():
    lru: ByteLRU[str, str] = ByteLRU(1_000_000, "test")
    lru.put("a", "x", 500)
    gauge = metrics.labelled(metrics.MEMO_BYTES, "test")
    assert gauge._value.get() == lru.size_bytes
    lru.pop("a")
    assert gauge._value.get() == 0


def test_hit_recipe_cost_is_what_the_recipe_holds():
    from app.api.chat import HitRecipe
    from app.api.hit_path import _recipe_bytes

    recipe = HitRecipe("answer:" + "0" * 64, "grounded-answers-1 ünïcode", ("logprobs", "store"), ("temperature",))
    assert _within(deep_size(recipe), _recipe_bytes(recipe))


def test_lru_is_safe_across_threads():
    """Stages with a sentence model run in worker threads and share the memos: concurrent puts,
    gets and pops keep the byte total exact and within the budget."""
    lru: ByteLRU[int, str] = ByteLRU(20_000, "test_threads")
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            for i in range(3_000):
                key = (seed * 7919 + i) % 400
                lru.put(key, "x" * (key % 50), 100 + key % 50)
                lru.get((key * 31) % 400)
                if i % 13 == 0:
                    lru.pop((key * 17) % 400)
                list(lru.items())
        except BaseException as exc:  # noqa: BLE001 - any error in a thread fails the test
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    kept = sum(100 + k % 50 + ENTRY_OVERHEAD_BYTES + sys.getsizeof(k) for k, _ in lru.items())
    assert lru.size_bytes == kept <= 20_000
