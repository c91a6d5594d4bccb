"""robots.txt rules (RFC 9309), cached per origin.

Status mapping (RFC 9309 §2.3.1): 2xx parse; 4xx "unavailable" = allow all; 5xx, 429 and network
errors "unreachable" = disallow all. Successful and 4xx answers are cached for `ttl_s` (at most 24 h
per the RFC); unreachable answers for a shorter `error_ttl_s` so a blip does not block a site all day.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from protego import Protego

ROBOTS_MAX_BYTES = 512 * 1024  # RFC 9309: parse at least 500 KiB


@dataclass(frozen=True, slots=True)
class RobotsRules:
    parser: Protego | None = None
    allow_all: bool = False
    source: str = ""  # "parsed" | "unavailable" | "unreachable" — for logs and tests

    def allows(self, url: str, agent_token: str) -> bool:
        if self.parser is None:
            return self.allow_all
        return self.parser.can_fetch(url, agent_token)


ALLOW_ALL = RobotsRules(allow_all=True, source="unavailable")
DISALLOW_ALL = RobotsRules(allow_all=False, source="unreachable")


def rules_from_response(status: int, body: bytes) -> RobotsRules:
    if 200 <= status < 300:
        text = body[:ROBOTS_MAX_BYTES].decode("utf-8", errors="replace")
        return RobotsRules(parser=Protego.parse(text), source="parsed")
    if status == 429 or status >= 500:
        return DISALLOW_ALL
    if 400 <= status < 500:
        return ALLOW_ALL
    return DISALLOW_ALL  # 1xx/3xx left after redirects: treat as unreachable


def agent_token(user_agent: str) -> str:
    """The product token robots.txt groups match: "GroundedAnswerBot/0.1 (...)" -> "GroundedAnswerBot"."""
    return user_agent.split()[0].split("/")[0] if user_agent.strip() else "*"


RobotsLoader = Callable[[str], Awaitable[RobotsRules]]


class RobotsCache:
    """Origin -> rules. One load per origin at a time; concurrent callers wait for it."""

    def __init__(
        self,
        *,
        ttl_s: float,
        error_ttl_s: float = 600.0,
        max_entries: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._ttl = ttl_s
        self._error_ttl = min(error_ttl_s, ttl_s)
        self._max = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, RobotsRules]] = OrderedDict()
        self._locks: dict[str, _Slot] = {}

    def _cached(self, origin: str) -> RobotsRules | None:
        entry = self._entries.get(origin)
        if entry is None:
            return None
        expires, rules = entry
        if self._clock() >= expires:
            del self._entries[origin]
            return None
        self._entries.move_to_end(origin)
        return rules

    async def rules_for(self, origin: str, load: RobotsLoader) -> RobotsRules:
        rules = self._cached(origin)
        if rules is not None:
            return rules
        slot = self._locks.setdefault(origin, _Slot())
        slot.users += 1
        try:
            async with slot.lock:
                rules = self._cached(origin)
                if rules is None:
                    # A cancelled load (the page deadline) propagates and caches nothing.
                    rules = await load(origin)
                    ttl = self._error_ttl if rules.source == "unreachable" else self._ttl
                    self._entries[origin] = (self._clock() + ttl, rules)
                    while len(self._entries) > self._max:
                        self._entries.popitem(last=False)
                return rules
        finally:
            slot.users -= 1
            if slot.users == 0:
                del self._locks[origin]  # the lock table stays as small as the in-flight set


class _Slot:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0
