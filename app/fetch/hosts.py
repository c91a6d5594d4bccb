"""Per-host politeness: at most N requests in flight to one host, and the name resolver."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

Resolver = Callable[[str, int], Awaitable[list[str]]]


async def system_resolver(host: str, port: int) -> list[str]:
    """Resolve once through the event loop's getaddrinfo; addresses in the resolver's order."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class HostLimiter:
    """A semaphore per host, created on demand and dropped when no task uses it."""

    def __init__(self, per_host: int):
        if per_host < 1:
            raise ValueError("per_host_concurrency must be >= 1")
        self._per_host = per_host
        self._slots: dict[str, tuple[asyncio.Semaphore, list[int]]] = {}

    @contextlib.asynccontextmanager
    async def slot(self, host: str) -> AsyncIterator[None]:
        semaphore, users = self._slots.setdefault(host, (asyncio.Semaphore(self._per_host), [0]))
        users[0] += 1
        try:
            async with semaphore:
                yield
        finally:
            users[0] -= 1
            if users[0] == 0:
                del self._slots[host]
