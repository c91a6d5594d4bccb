"""Memos of pure functions of one string, bounded in bytes as well as in count.

`functools.lru_cache` bounds entries, not bytes: a memo of stems, class-name hints or sentence scores
would keep whatever strings hostile pages send (a 100 KB class attribute, a 10 KB "word"). Remembering
only inputs up to `max_chars` bounds it at about maxsize × max_chars bytes (1 byte a character; 4 for
the widest scripts); a longer input is computed each time and never kept.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import _CacheInfo, lru_cache, wraps
from typing import Generic, TypeVar

R = TypeVar("R")


class ShortInputCache(Generic[R]):
    """`fn` remembered (LRU, `maxsize` entries) for inputs of at most `max_chars` characters."""

    def __init__(self, fn: Callable[[str], R], maxsize: int, max_chars: int):
        self.__wrapped__ = fn
        self.max_chars = max_chars
        self._cached = lru_cache(maxsize=maxsize)(fn)
        wraps(fn)(self)

    def __call__(self, text: str) -> R:
        return self._cached(text) if len(text) <= self.max_chars else self.__wrapped__(text)

    def cache_info(self) -> _CacheInfo:
        return self._cached.cache_info()

    def cache_clear(self) -> None:
        self._cached.cache_clear()


def short_input_cache(maxsize: int, max_chars: int) -> Callable[[Callable[[str], R]], ShortInputCache[R]]:
    def decorate(fn: Callable[[str], R]) -> ShortInputCache[R]:
        return ShortInputCache(fn, maxsize, max_chars)

    return decorate
