"""PageFetcher: fetch one web page safely (SSRF rule), boundedly (deadline, bytes) and politely
(robots.txt, per-host concurrency). Every outcome is a FetchedPage with a FetchReason; page problems
never raise. The rules are documented in docs/FETCHING.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from app.domain.types import FetchedPage, FetchReason
from app.fetch.address import AddressPolicy, InvalidHost, literal_address, normalize_host
from app.fetch.body import (
    ALLOWED_TYPES,
    BadEncoding,
    BoundedDecoder,
    UnsupportedEncoding,
    media_type,
    sniff_media_type,
)
from app.fetch.hosts import HostLimiter, Resolver, system_resolver
from app.fetch.robots import (
    ALLOW_ALL,
    DISALLOW_ALL,
    ROBOTS_MAX_BYTES,
    RobotsCache,
    RobotsRules,
    agent_token,
    rules_from_response,
)
from app.fetch.transport import UnpinnedDial, build_client, pinned

log = logging.getLogger(__name__)

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_DROPPED_HEADERS = frozenset({"set-cookie", "set-cookie2"})


@dataclass(slots=True)
class _Hop:
    """One checked request target: where to connect and under which name."""

    url: httpx.URL
    host: str  # ASCII (IDNA) host as sent on the wire
    port: int
    addresses: tuple[str, ...] | None  # None = the proxy resolves the name

    @property
    def origin(self) -> str:
        return f"{self.url.scheme}://{self.host if ':' not in self.host else f'[{self.host}]'}:{self.port}"


class _Refused(Exception):
    """A hop is refused before any connection; carries the FetchReason."""

    def __init__(self, reason: FetchReason, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class PageFetcher:
    def __init__(
        self,
        *,
        user_agent: str,
        contact_url: str,
        timeout_s: float,
        connect_timeout_s: float,
        max_bytes: int,
        max_redirects: int = 5,
        allowed_ports: Sequence[int] = (80, 443),
        allow_private: Sequence[str] = (),
        proxy: str | None = None,
        per_host_concurrency: int = 2,
        respect_robots: bool = True,
        robots_ttl_s: float = 86400,
        resolver: Resolver | None = None,
        verify: ssl.SSLContext | bool | str = True,
        max_connections: int = 100,
    ):
        self.user_agent = f"{user_agent} (+{contact_url})" if contact_url else user_agent
        self._agent_token = agent_token(user_agent)
        self._timeout_s = timeout_s
        self._max_bytes = max_bytes
        self._max_redirects = max_redirects
        self._allowed_ports = frozenset(int(p) for p in allowed_ports)
        self._policy = AddressPolicy(allow_private)
        self._proxy = proxy or None
        self._respect_robots = respect_robots
        self._resolver: Resolver = resolver or system_resolver
        self._hosts = HostLimiter(per_host_concurrency)
        self._robots = RobotsCache(ttl_s=robots_ttl_s)
        self._client = build_client(
            policy=self._policy,
            proxy=self._proxy,
            verify=verify,
            user_agent=self.user_agent,
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
            max_connections=max_connections,
        )
        self._abandoned: set[asyncio.Task] = set()

    @classmethod
    def from_settings(cls, settings: Any, **overrides: Any) -> PageFetcher:
        kwargs: dict[str, Any] = {
            "user_agent": settings.user_agent,
            "contact_url": settings.contact_url,
            "timeout_s": settings.fetch_timeout_s,
            "connect_timeout_s": settings.fetch_connect_timeout_s,
            "max_bytes": settings.fetch_max_bytes,
            "max_redirects": settings.fetch_max_redirects,
            "allowed_ports": [int(p) for p in settings.fetch_allowed_ports],
            "allow_private": list(settings.fetch_allow_private),
            "proxy": settings.fetch_proxy,
            "per_host_concurrency": settings.fetch_per_host_concurrency,
            "max_connections": settings.fetch_max_connections,
            "respect_robots": settings.respect_robots,
        }
        kwargs.update(overrides)
        return cls(**kwargs)

    async def aclose(self) -> None:
        for task in list(self._abandoned):
            task.cancel()
        await self._client.aclose()

    # --- public entry point ---------------------------------------------------------------

    async def fetch(
        self, url: str, *, deadline_s: float | None = None, etag: str | None = None, last_modified: str | None = None
    ) -> FetchedPage:
        started = time.monotonic()
        budget = self._timeout_s if deadline_s is None else min(self._timeout_s, deadline_s)
        state = {"url": url}
        resolved: dict[str, tuple[str, ...]] = {}  # one resolution per host per fetch (robots too)
        conditional = {}
        if etag:
            conditional["If-None-Match"] = etag
        if last_modified:
            conditional["If-Modified-Since"] = last_modified
        try:
            if budget <= 0:
                raise TimeoutError
            # One deadline over robots, every hop, connect, headers and body: a server that
            # trickles a byte a second cannot stretch it.
            async with asyncio.timeout(budget):
                page = await self._follow(
                    url,
                    state,
                    resolved,
                    headers=conditional,
                    max_bytes=self._max_bytes,
                    check_robots=self._respect_robots,
                    check_type=True,
                    truncate=False,
                    max_redirects=self._max_redirects,
                )
        except TimeoutError:
            page = self._page(url, state, FetchReason.timeout, detail=f"deadline {budget:g}s")
        except Exception as exc:  # noqa: BLE001 — the contract: page problems never raise
            page = self._page(url, state, *_classify(exc))
        page.elapsed_ms = (time.monotonic() - started) * 1000
        return page

    # --- hops -------------------------------------------------------------------------------

    async def _follow(
        self,
        url: str,
        state: dict[str, str],
        resolved: dict[str, tuple[str, ...]],
        *,
        headers: dict[str, str],
        max_bytes: int,
        check_robots: bool,
        check_type: bool,
        truncate: bool,
        max_redirects: int,
    ) -> FetchedPage:
        current = url
        for _ in range(max_redirects + 1):
            state["url"] = current
            try:
                hop = await self._admit(current, resolved)
            except _Refused as refused:
                return self._page(url, state, refused.reason, detail=refused.detail)
            if check_robots and not await self._robots_allow(hop, resolved):
                return self._page(url, state, FetchReason.robots, detail=f"robots.txt disallows {self._agent_token}")
            async with self._hosts.slot(hop.host):
                with self._pinned(hop):
                    request = self._client.build_request("GET", hop.url, headers=headers)
                    response = await self._send(request)
                    try:
                        location = response.headers.get("location")
                        if response.status_code in _REDIRECTS and location:
                            current = str(hop.url.join(location.strip()))
                            continue
                        return await self._read(
                            response,
                            url,
                            state,
                            conditional=bool(headers),
                            max_bytes=max_bytes,
                            check_type=check_type,
                            truncate=truncate,
                        )
                    finally:
                        await response.aclose()
        return self._page(url, state, FetchReason.too_many_redirects, detail=f"more than {max_redirects} redirects")

    async def _send(self, request: httpx.Request) -> httpx.Response:
        """Send with the pool shielded from our deadline. httpcore 1.0.9 loses a connection slot for
        good when a request is cancelled while the pool assigns it a connection (encode/httpcore#1093);
        a burst of deadlines then jams every later fetch. So the request runs in its own task, bounded
        by httpx's timeouts, and only our wait for it is cancelled; a response that arrives after we
        gave up is closed at once. The task copies this context, pins included."""
        task = asyncio.ensure_future(self._client.send(request, stream=True))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            self._abandoned.add(task)
            task.add_done_callback(self._close_abandoned)
            raise

    def _close_abandoned(self, task: asyncio.Task) -> None:
        self._abandoned.discard(task)
        if task.cancelled() or task.exception() is not None:
            return
        closing = asyncio.ensure_future(task.result().aclose())
        self._abandoned.add(closing)
        closing.add_done_callback(self._abandoned.discard)

    def _pinned(self, hop: _Hop) -> contextlib.AbstractContextManager[None]:
        if hop.addresses is None:
            return contextlib.nullcontext()
        return pinned(hop.host, hop.addresses)

    async def _admit(self, url: str, resolved: dict[str, tuple[str, ...]]) -> _Hop:
        """Scheme, port and address checks for one hop; resolves the name once (direct mode)."""
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            # httpx rejects some numeric hosts (0177.0.0.1, 999.1.1.1): report them as addresses.
            reason = FetchReason.blocked_address if _numeric_host(url) else FetchReason.blocked_scheme
            raise _Refused(reason, f"not a valid URL: {exc}") from exc
        if parsed.scheme not in _DEFAULT_PORTS:
            raise _Refused(FetchReason.blocked_scheme, f"scheme {parsed.scheme or '(none)'!r}")
        host = parsed.raw_host.decode("ascii")
        if not host:
            raise _Refused(FetchReason.blocked_scheme, "URL has no host")
        if parsed.userinfo:
            # httpx would send them as Basic auth (to the proxy's target too): a page from a search
            # result has no business carrying credentials.
            raise _Refused(FetchReason.blocked_scheme, "URL carries credentials (user:password@)")
        port = parsed.port or _DEFAULT_PORTS[parsed.scheme]
        if port not in self._allowed_ports:
            raise _Refused(FetchReason.blocked_port, f"port {port}")
        try:
            literal = literal_address(host)
        except InvalidHost as exc:
            raise _Refused(FetchReason.blocked_address, str(exc)) from exc
        if literal is not None:
            if literal.version == 4 and str(literal) != normalize_host(host):
                # 2130706433, 0x7f000001, 127.1 ...: no page uses these; refusing them all removes
                # any disagreement between this parser, the proxy and the resolver.
                raise _Refused(FetchReason.blocked_address, f"non-canonical IPv4 literal {host!r} (= {literal})")
            verdict = self._policy.check_address(literal, host=host)
            if not verdict.allowed:
                raise _Refused(FetchReason.blocked_address, verdict.detail)
            return _Hop(parsed, host, port, None if self._proxy else (str(literal),))
        if self._proxy:
            verdict = self._policy.check_name(host)
            if not verdict.allowed:
                raise _Refused(FetchReason.blocked_address, verdict.detail)
            return _Hop(parsed, host, port, None)  # name resolution is the proxy's job
        if normalize_host(host) in resolved:
            return _Hop(parsed, host, port, resolved[normalize_host(host)])
        try:
            answers = await self._resolver(normalize_host(host), port)
        except OSError as exc:
            raise _Refused(FetchReason.network_error, f"cannot resolve {host}: {exc}") from exc
        ips = []
        for answer in answers:
            try:
                ips.append(literal_address(answer))
            except InvalidHost:
                ips.append(None)
        if any(ip is None for ip in ips):
            raise _Refused(FetchReason.blocked_address, f"{host} resolved to a non-address")
        verdict = self._policy.check_all(host, ips)  # type: ignore[arg-type]
        if not verdict.allowed:
            raise _Refused(FetchReason.blocked_address, f"{host}: {verdict.detail}")
        resolved[normalize_host(host)] = tuple(str(ip) for ip in ips)
        return _Hop(parsed, host, port, resolved[normalize_host(host)])

    # --- bodies -----------------------------------------------------------------------------

    async def _read(
        self,
        response: httpx.Response,
        url: str,
        state: dict[str, str],
        *,
        conditional: bool,
        max_bytes: int,
        check_type: bool,
        truncate: bool,
    ) -> FetchedPage:
        status = response.status_code
        headers = {k.lower(): v for k, v in response.headers.items() if k.lower() not in _DROPPED_HEADERS}
        declared = media_type(headers.get("content-type", ""))

        def page(reason: FetchReason, detail: str = "", body: bytes = b"", content_type: str = declared) -> FetchedPage:
            return self._page(
                url, state, reason, status=status, headers=headers, body=body, content_type=content_type, detail=detail
            )

        if status == 304 and conditional:
            return page(FetchReason.not_modified)
        if status >= 300:
            return page(FetchReason.http_error, detail=f"HTTP {status}")
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > max_bytes and not truncate:
            return page(FetchReason.too_large, detail=f"content-length {length} > {max_bytes}")
        if check_type and declared and declared not in ALLOWED_TYPES:
            return page(FetchReason.unsupported_type, detail=f"content-type {declared}")
        try:
            decoder = BoundedDecoder(headers.get("content-encoding", ""))
        except UnsupportedEncoding as exc:
            return page(FetchReason.unsupported_type, detail=str(exc))
        parts: list[bytes] = []
        total = 0
        try:
            async for chunk in response.aiter_raw():
                for piece in decoder.feed(chunk):
                    total += len(piece)
                    if total > max_bytes:
                        if not truncate:
                            return page(FetchReason.too_large, detail=f"body > {max_bytes} bytes")
                        parts.append(piece[: len(piece) - (total - max_bytes)])
                        return page(FetchReason.ok, body=b"".join(parts), detail="truncated")
                    parts.append(piece)
            for piece in decoder.flush():
                total += len(piece)
                if total > max_bytes and not truncate:
                    return page(FetchReason.too_large, detail=f"body > {max_bytes} bytes")
                parts.append(piece)
        except BadEncoding as exc:
            return page(FetchReason.network_error, detail=f"bad content-encoding: {exc}")
        body = b"".join(parts)[:max_bytes]
        content_type = declared or sniff_media_type(body)
        if check_type and content_type not in ALLOWED_TYPES:
            return page(FetchReason.unsupported_type, detail=f"sniffed {content_type}", content_type=content_type)
        return page(FetchReason.ok, body=body, content_type=content_type)

    # --- robots -----------------------------------------------------------------------------

    async def _robots_allow(self, hop: _Hop, resolved: dict[str, tuple[str, ...]]) -> bool:
        if hop.url.raw_path.split(b"?", 1)[0] == b"/robots.txt":
            return True

        async def load(origin: str) -> RobotsRules:
            return await self._load_robots(origin, resolved)

        rules = await self._robots.rules_for(hop.origin, load)
        return rules.allows(str(hop.url), self._agent_token)

    async def _load_robots(self, origin: str, resolved: dict[str, tuple[str, ...]]) -> RobotsRules:
        robots_url = f"{origin}/robots.txt"
        state = {"url": robots_url}
        try:
            page = await self._follow(
                robots_url,
                state,
                resolved,
                headers={},
                max_bytes=ROBOTS_MAX_BYTES,
                check_robots=False,
                check_type=False,
                truncate=True,
                max_redirects=5,
            )
        except Exception as exc:  # noqa: BLE001 — unreachable = disallow; cancellation propagates
            log.info("robots.txt unreachable for %s: %r", origin, exc)
            return DISALLOW_ALL
        if page.reason is FetchReason.ok or page.reason is FetchReason.http_error:
            return rules_from_response(page.status, page.body)
        if page.reason is FetchReason.too_many_redirects:
            return ALLOW_ALL  # RFC 9309 §2.3.1.2: may be treated as unavailable
        return DISALLOW_ALL

    # --- results ----------------------------------------------------------------------------

    def _page(
        self, url: str, state: dict[str, str], reason: FetchReason, detail: str = "", **fields: Any
    ) -> FetchedPage:
        return FetchedPage(
            url=state.get("url", url),
            requested_url=url,
            reason=reason,
            detail=detail,
            fetched_at=datetime.now(UTC),
            **fields,
        )


def _numeric_host(url: str) -> bool:
    try:
        host = urlsplit(url).hostname or ""
        return literal_address(host) is not None
    except (InvalidHost, ValueError):
        return True


def _classify(exc: Exception) -> tuple[FetchReason, str]:
    if isinstance(exc, UnpinnedDial):
        return FetchReason.blocked_address, str(exc)
    if isinstance(exc, httpx.TimeoutException):
        return FetchReason.timeout, f"{type(exc).__name__}"
    if isinstance(exc, (httpx.TransportError, OSError, ssl.SSLError, BadEncoding)):
        return FetchReason.network_error, f"{type(exc).__name__}: {exc}"
    if isinstance(exc, httpx.HTTPError):
        return FetchReason.http_error, f"{type(exc).__name__}: {exc}"
    if _raised_in_transport(exc):
        # A connection reset right after connect can surface from inside the pool as a bare
        # AttributeError (httpcore + anyio: "'NoneType' object has no attribute 'getpeername'"; 14 in
        # the 2026-12-08 soak): the network's fault, not ours, so no traceback in the log.
        return FetchReason.network_error, f"connection failed: {type(exc).__name__}: {exc}"
    log.warning("unexpected fetch failure", exc_info=exc)
    return FetchReason.network_error, f"unexpected {type(exc).__name__}: {exc}"


# The HTTP stack under httpx: an exception whose innermost frame is in one of these is a transport
# fault whatever its type. One raised in our own code still warns with its traceback (a bug to see).
_TRANSPORT_PACKAGES = frozenset({"httpcore", "anyio", "h11", "h2", "httpx"})


def _raised_in_transport(exc: BaseException) -> bool:
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return not _TRANSPORT_PACKAGES.isdisjoint(Path(tb.tb_frame.f_code.co_filename).parts)
