"""Thread-safe request log: the server thread appends, the test thread reads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Recorder(Generic[T]):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[T] = []

    def append(self, item: T) -> None:
        with self._lock:
            self._items.append(item)

    def all(self) -> list[T]:
        with self._lock:
            return list(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def last(self) -> T:
        with self._lock:
            if not self._items:
                raise LookupError("no request recorded")
            return self._items[-1]

    def wait_for(self, count: int, timeout_s: float = 5.0, where: Callable[[T], bool] | None = None) -> list[T]:
        """Block until `count` matching items were recorded (requests may still be in flight)."""
        deadline = time.monotonic() + timeout_s
        while True:
            items = [i for i in self.all() if where is None or where(i)]
            if len(items) >= count or time.monotonic() > deadline:
                return items
            time.sleep(0.005)
