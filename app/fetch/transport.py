"""HTTP transport that dials only the addresses the fetcher checked (no DNS rebinding).

The fetcher resolves a hostname once, checks every address, then publishes {host: addresses} in a
context variable for the duration of that request. The network backend below connects to those
addresses instead of resolving the name again, while httpcore keeps the URL's hostname for the Host
header, TLS SNI and certificate verification. A dial for a host with no pin fails closed.
"""

from __future__ import annotations

import contextlib
import ipaddress
import ssl
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from http.cookiejar import DefaultCookiePolicy
from typing import Any

import httpcore
import httpx

from app.fetch.address import AddressPolicy, normalize_host

ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.8,*/*;q=0.1"

# host (normalized) -> addresses checked for the current request, in dialling order
_PINS: ContextVar[dict[str, tuple[str, ...]] | None] = ContextVar("fetch_pins", default=None)


class UnpinnedDial(Exception):
    """The pool tried to dial a host the fetcher did not check. Never expected; fails closed."""


@contextlib.contextmanager
def pinned(host: str, addresses: Iterable[str]) -> Iterator[None]:
    """Within this block, connections to `host` go to `addresses` (already checked)."""
    token = _PINS.set({normalize_host(host): tuple(addresses)})
    try:
        yield
    finally:
        _PINS.reset(token)


class PinnedNetworkBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, policy: AddressPolicy):
        self._policy = policy
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = (_PINS.get() or {}).get(normalize_host(host))
        if not addresses:
            raise UnpinnedDial(f"no checked address for {host!r}")
        last_error: Exception | None = None
        for address in addresses:
            # Defence in depth: the dial itself re-applies the rule to the exact address used.
            verdict = self._policy.check_address(ipaddress.ip_address(address), host=host)
            if not verdict.allowed:
                raise UnpinnedDial(f"pinned address refused at dial time: {verdict.detail}")
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc  # try the next checked address of the same host
        assert last_error is not None
        raise last_error

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.AsyncNetworkStream:
        raise UnpinnedDial("unix sockets are never dialled by the page fetcher")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class PinnedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with its connection pool swapped for one using PinnedNetworkBackend.

    httpx has no public knob for the network backend; `_pool` is the documented-by-source seam
    (AsyncHTTPTransport only forwards to it), checked at construction so an httpx change fails loudly.
    """

    def __init__(self, *, policy: AddressPolicy, ssl_context: ssl.SSLContext, limits: httpx.Limits):
        super().__init__(verify=ssl_context, trust_env=False, limits=limits)
        if not isinstance(getattr(self, "_pool", None), httpcore.AsyncConnectionPool):
            raise TypeError("httpx.AsyncHTTPTransport internals changed: no _pool to pin")
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=PinnedNetworkBackend(policy),
        )


def build_client(
    *,
    policy: AddressPolicy,
    proxy: str | None,
    verify: ssl.SSLContext | bool | str,
    timeout: httpx.Timeout,
    user_agent: str,
    max_connections: int = 100,
) -> httpx.AsyncClient:
    """One long-lived client. Direct mode dials pinned addresses; proxy mode dials only the proxy
    (operator-configured, outside the address rule) and lets it resolve page hostnames."""
    # Few idle keep-alive connections, briefly: page fetches go to many different hosts, so reuse is
    # rare, while httpcore scans (and polls the socket of) every pooled connection on every request —
    # with ~100 idle connections that scan dominated the service's CPU under the benchmark's load.
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=8, keepalive_expiry=5)
    ssl_context = httpx.create_ssl_context(verify=verify, trust_env=False)
    if proxy:
        transport: httpx.AsyncBaseTransport = httpx.AsyncHTTPTransport(
            verify=ssl_context, trust_env=False, limits=limits, proxy=proxy
        )
    else:
        transport = PinnedTransport(policy=policy, ssl_context=ssl_context, limits=limits)
    client = httpx.AsyncClient(
        transport=transport,
        trust_env=False,  # HTTP(S)_PROXY / NO_PROXY / SSL_CERT_FILE from the environment are ignored
        follow_redirects=False,  # every hop is re-checked by the fetcher
        timeout=timeout,
        headers={"User-Agent": user_agent, "Accept": ACCEPT, "Accept-Encoding": "gzip, deflate"},
    )
    # Never store cookies: one client serves every site, so a jar would leak between them.
    client.cookies.jar.set_policy(DefaultCookiePolicy(allowed_domains=[]))
    return client
