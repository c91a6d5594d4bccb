"""A least-recently-used map bounded by the bytes its entries take, for the per-process memos.

One implementation for every in-process store that remembers derived data (extracted pages, passage
skeletons, shingle sets): each caller says what an entry costs, the map evicts the oldest entries
until the total fits. Costs are measured sizes (`sys.getsizeof` of the strings and containers held,
which is exact for them), not character counts: text in most of the world's scripts takes 2 or 4
bytes a character in CPython, and a character-count estimate undercounted real memory about 2x
(tests/cache/test_lru.py checks each cost model against a deep size walk).
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Iterator
from typing import Generic, TypeVar

from app import metrics

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

# The OrderedDict slot, its linked-list node and the key's hash entry, per entry (CPython 3.11).
ENTRY_OVERHEAD_BYTES = 104


def str_bytes(strings: Iterable[str]) -> int:
    """Exact bytes of these str objects (header plus 1, 2 or 4 bytes a character)."""
    return sum(map(sys.getsizeof, strings))


class ByteLRU(Generic[K, V]):
    """LRU map whose entries' stated costs stay within `max_bytes`; `store` names it in metrics.
    Safe across threads (stages that run a sentence model go to worker threads): one lock per map,
    ~0.1 µs uncontended."""

    def __init__(self, max_bytes: int, store: str, *, max_entry_share: int = 1):
        self.max_bytes = max_bytes
        # An entry over max_bytes // max_entry_share is not kept: one huge value must not flush the rest.
        self.max_entry_bytes = max_bytes // max(1, max_entry_share)
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._gauge = metrics.labelled(metrics.MEMO_BYTES, store)
        self._lock = threading.RLock()  # put() calls pop()

    def __contains__(self, key: K) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def items(self) -> Iterator[tuple[K, V]]:
        """Entries from least to most recently used (for inspection: does not touch recency), as
        they were when called."""
        with self._lock:
            snapshot = list(self._entries.items())
        return ((k, v) for k, (v, _) in snapshot)

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
            return found[0]

    def peek(self, key: K) -> V | None:
        """The value without touching its recency (for expiry checks that may drop it)."""
        found = self._entries.get(key)
        return None if found is None else found[0]

    def put(self, key: K, value: V, cost: int) -> bool:
        """Keep `value` at `cost` bytes (plus the entry overhead); False when it is too big to keep."""
        cost += ENTRY_OVERHEAD_BYTES + sys.getsizeof(key)
        with self._lock:
            self.pop(key)
            if cost > self.max_entry_bytes:
                return False
            self._entries[key] = (value, cost)
            self._bytes += cost
            while self._bytes > self.max_bytes and self._entries:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted
            self._gauge.set(self._bytes)
            return True

    def pop(self, key: K) -> V | None:
        with self._lock:
            found = self._entries.pop(key, None)
            if found is None:
                return None
            self._bytes -= found[1]
            self._gauge.set(self._bytes)
            return found[0]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
            self._gauge.set(0)
