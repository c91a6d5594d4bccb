"""A small web of scripted sites, each on its own loopback address, all on one port.

Linux routes all of 127.0.0.0/8 to `lo`, so the server listens on 127.0.0.1 and on 127.0.0.2…
127.0.0.(1+n_sites) with the same port. Every site is then a distinct host (and, for tldextract, a
distinct registrable domain) with no DNS: `web.site("news-a.test").url` is "http://127.0.0.2:PORT".
A site also answers to its name through the Host header, so "http://news-a.test:PORT/x" works through
the forward proxy (simulators/proxy.py maps *.test to 127.0.0.1) or any resolver doing the same.

Pages are scripted per test on a site (the default site is 127.0.0.1 = `web.url`):
    a = web.site("news-a.test")
    url = a.add_article("/a", "Title", ["para", ...], published=date(2025, 1, 2))
    web.add_redirect("/old", url, status=301)
Every request is recorded (web.requests) with its site, Host header, path and headers.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any

from ._record import Recorder
from ._threaded import ThreadedUvicorn, bind_socket
from .web_site import Page, Site

__all__ = ["WebServer", "WebRequest", "Site", "Page"]


@dataclass
class WebRequest:
    site: str  # name of the site that answered
    host: str  # Host header as sent
    method: str
    path: str
    query: str
    headers: dict[str, str]  # lower-cased names
    client: str = ""
    at: float = field(default_factory=time.time)


def _bind_same_port(ips: list[str], attempts: int = 30) -> list:
    for _ in range(attempts):
        first = bind_socket(ips[0], 0)
        port = first.getsockname()[1]
        socks = [first]
        try:
            for ip in ips[1:]:
                socks.append(bind_socket(ip, port))
            return socks
        except OSError:  # that port is taken on one of the other addresses: try another
            for s in socks:
                s.close()
    raise OSError(f"could not bind one port on all of {ips}")


class WebServer(ThreadedUvicorn):
    def __init__(self, n_sites: int = 12) -> None:
        self._ips = ["127.0.0.1"] + [f"127.0.0.{i}" for i in range(2, 2 + n_sites)]
        self._lock = threading.Lock()
        self.requests: Recorder[WebRequest] = Recorder()
        socks = _bind_same_port(self._ips)
        super().__init__(self._asgi, socks, name="web")
        self.reset()

    # --- sites ---------------------------------------------------------------------------------

    def reset(self) -> None:
        with self._lock:
            self.default_site = Site("127.0.0.1", "127.0.0.1", self.port)
            self._by_ip: dict[str, Site] = {"127.0.0.1": self.default_site}
            self._by_name: dict[str, Site] = {"127.0.0.1": self.default_site, "localhost": self.default_site}
            self.latency_s = 0.0
        self.requests.clear()

    def site(self, name: str | None = None) -> Site:
        """The site called `name` (created on first use on the next free loopback address);
        no name = a new anonymous site known by its address."""
        name = name.lower() if name else None  # Host headers are matched case-insensitively
        with self._lock:
            if name is not None and name in self._by_name:
                return self._by_name[name]
            free = [ip for ip in self._ips if ip not in self._by_ip]
            if not free:
                raise RuntimeError(f"all {len(self._ips)} site addresses are in use; raise n_sites")
            site = Site(name or free[0], free[0], self.port)
            self._by_ip[site.ip] = site
            self._by_name[site.name] = site
            self._by_name[site.ip] = site
            return site

    def sites(self) -> list[Site]:
        with self._lock:
            return list(self._by_ip.values())

    def __getattr__(self, attr: str) -> Any:
        # web.add_page(...), web.add_article(...) etc. act on the default site.
        if attr.startswith(("add_", "set_", "not_modified", "url_for", "named_url")):
            return getattr(self.__dict__["default_site"], attr)
        raise AttributeError(attr)

    def settings_overrides(self) -> dict[str, Any]:
        """Settings overrides that let the service's fetcher reach these sites."""
        return {"fetch_allow_private": ["127.0.0.0/8"], "fetch_allowed_ports": [str(self.port)]}

    def paths_requested(self, site: Site | str | None = None) -> list[str]:
        name = site.name if isinstance(site, Site) else site
        return [r.path for r in self.requests.all() if name is None or r.site == name]

    # --- ASGI ----------------------------------------------------------------------------------

    def _site_for(self, scope: dict, host_header: str) -> Site:
        hostname = host_header.rsplit(":", 1)[0] if not host_header.startswith("[") else host_header
        with self._lock:
            site = self._by_name.get(hostname.lower())
            if site is None:  # unknown name: the site owning the address the request came in on
                site = self._by_ip.get((scope.get("server") or ("",))[0], self.default_site)
            return site

    async def _asgi(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        site = self._site_for(scope, host)
        path, query = scope["path"], scope["query_string"].decode("latin-1")
        client = scope.get("client") or ("", 0)
        self.requests.append(WebRequest(site.name, host, scope["method"], path, query, headers, client[0]))
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        page = site.lookup(path, query)
        await self._respond(page, site, path, scope["method"], headers, receive, send)

    async def _respond(
        self, page: Page, site: Site, path: str, method: str, req_headers: dict[str, str], receive: Any, send: Any
    ) -> None:
        if page.delay_s:
            await asyncio.sleep(page.delay_s)
        if self._not_modified(page, req_headers):
            site.count_not_modified(path)
            keep = {k: v for k, v in page.headers.items() if k in ("etag", "last-modified", "cache-control")}
            await send(
                {
                    "type": "http.response.start",
                    "status": 304,
                    "headers": [(k.encode(), v.encode()) for k, v in keep.items()],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        body = page.body
        headers = dict(page.headers)
        if page.declared_length is not None:
            headers["content-length"] = str(page.declared_length)
        elif not page.stream_bytes:
            headers["content-length"] = str(len(body))
        await send(
            {
                "type": "http.response.start",
                "status": page.status,
                "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
            }
        )
        if method == "HEAD":
            await send({"type": "http.response.body", "body": b""})
            return
        if page.trickle_interval_s is None and not page.stream_bytes and page.declared_length is None:
            await send({"type": "http.response.body", "body": body})
            return
        await self._stream(page, receive, send)

    @staticmethod
    async def _stream(page: Page, receive: Any, send: Any) -> None:
        """Trickle, endless and lying bodies: stop as soon as the client goes away."""
        gone = asyncio.Event()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.create_task(watch())
        try:
            if page.trickle_interval_s is not None:
                step = max(1, page.trickle_chunk)
                for i in range(0, len(page.body), step):
                    if gone.is_set():
                        return
                    await send({"type": "http.response.body", "body": page.body[i : i + step], "more_body": True})
                    await asyncio.sleep(page.trickle_interval_s)
            elif page.stream_bytes:
                sent, chunk = 0, b"<p>" + b"x" * 65_530 + b"</p>"
                if page.body:
                    await send({"type": "http.response.body", "body": page.body, "more_body": True})
                while sent < page.stream_bytes and not gone.is_set():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    sent += len(chunk)
                    await asyncio.sleep(0)
            else:  # declared_length lie: send what we have, then drop the connection
                await send({"type": "http.response.body", "body": page.body, "more_body": True})
                await asyncio.sleep(0.05)
                return
            if page.declared_length is None:
                await send({"type": "http.response.body", "body": b""})
        finally:
            watcher.cancel()

    @staticmethod
    def _not_modified(page: Page, req: dict[str, str]) -> bool:
        if page.status != 200:
            return False
        etag = page.headers.get("etag")
        inm = req.get("if-none-match")
        if inm is not None and etag:
            tags = [t.strip().removeprefix("W/") for t in inm.split(",")]
            return "*" in tags or etag.removeprefix("W/") in tags
        ims, lm = req.get("if-modified-since"), page.headers.get("last-modified")
        if ims and lm:
            try:
                return parsedate_to_datetime(lm) <= parsedate_to_datetime(ims)
            except (TypeError, ValueError):
                return False
        return False


def http_date(ts: float | None = None) -> str:
    """An HTTP-date (for Last-Modified / If-Modified-Since headers); now when `ts` is None."""
    return format_datetime(datetime.fromtimestamp(ts or time.time(), tz=UTC), usegmt=True)
