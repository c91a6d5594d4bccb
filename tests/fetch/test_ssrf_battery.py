"""The SSRF battery (issue 12): at least 40 payloads aimed at a canary server on 127.0.0.1, in
direct mode and through redirects and DNS names; the canary counts connections, and must count 0.

The canary listens on the loopback interface at a port the fetcher is allowed to use, so the only
thing between a payload and a connection is the address rule (plus scheme and credential checks).
"""

from __future__ import annotations

import asyncio

import pytest

from app.domain.types import FetchReason
from tests.fetch.conftest import FakeResolver, respond

REFUSED = {FetchReason.blocked_address, FetchReason.blocked_scheme, FetchReason.blocked_port}


class Canary:
    """A TCP listener that counts every accepted connection (no HTTP needed to prove a dial)."""

    def __init__(self) -> None:
        self.connections = 0
        self.server: asyncio.base_events.Server | None = None
        self.port = 0

    async def start(self) -> Canary:
        async def on_connect(reader, writer):
            self.connections += 1
            writer.close()

        self.server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()


@pytest.fixture
async def canary():
    c = await Canary().start()
    yield c
    await c.stop()


# Literal spellings of the canary's own address (and of other internal targets on its port).
LITERALS = [
    "http://127.0.0.1:{p}/",
    "http://127.0.0.1.:{p}/",
    "http://127.1:{p}/",
    "http://127.0.1:{p}/",
    "http://2130706433:{p}/",
    "http://0x7f000001:{p}/",
    "http://0x7f.0x0.0x0.0x1:{p}/",
    "http://0177.0.0.1:{p}/",
    "http://017700000001:{p}/",
    "http://0:{p}/",
    "http://0.0.0.0:{p}/",
    "http://[::1]:{p}/",
    "http://[0:0:0:0:0:0:0:1]:{p}/",
    "http://[::ffff:127.0.0.1]:{p}/",
    "http://[::ffff:7f00:1]:{p}/",
    "http://[::127.0.0.1]:{p}/",
    "http://[64:ff9b::127.0.0.1]:{p}/",
    "http://[2002:7f00:1::]:{p}/",
    "http://[fe80::1]:{p}/",
    "http://[fc00::1]:{p}/",
    "http://10.0.0.1:{p}/",
    "http://172.16.0.1:{p}/",
    "http://192.168.0.1:{p}/",
    "http://100.64.0.1:{p}/",
    "http://169.254.169.254:{p}/latest/meta-data/",
    "http://[fd00:ec2::254]:{p}/",
    "http://100.100.100.200:{p}/",
    "http://198.18.0.1:{p}/",
    "http://224.0.0.1:{p}/",
    "http://255.255.255.255:{p}/",
    "http://localhost:{p}/",
    "http://LOCALHOST:{p}/",
    "http://user:pass@127.0.0.1:{p}/",
    "http://example.com@127.0.0.1:{p}/",
    "file:///etc/passwd",
    "gopher://127.0.0.1:{p}/_GET",
    "ftp://127.0.0.1:{p}/",
    "dict://127.0.0.1:{p}/",
    "http://127.0.0.1:{p}\\@example.com/",
    "http://①②⑦.0.0.1:{p}/",
]
# Names whose (fake) DNS answers are internal: resolved once, checked, never dialled.
NAMES = {
    "loop.test": ["127.0.0.1"],
    "loop6.test": ["::1"],
    "mapped.test": ["::ffff:127.0.0.1"],
    "mixed.test": ["93.184.215.14", "127.0.0.1"],
    "meta.test": ["169.254.169.254"],
    "private.test": ["10.1.2.3"],
    "zero.test": ["0.0.0.0"],
    "cgnat.test": ["100.64.1.1"],
}


@pytest.mark.parametrize("template", LITERALS)
async def test_direct_payloads_never_connect(canary, make_fetcher, template):
    fetcher = make_fetcher(ports=[canary.port], allow_private=[], resolver=FakeResolver({}))
    result = await fetcher.fetch(template.format(p=canary.port))
    assert result.reason in REFUSED | {FetchReason.network_error}, (result.reason, result.detail)
    assert canary.connections == 0


@pytest.mark.parametrize("name", sorted(NAMES))
async def test_names_resolving_inside_never_connect(canary, make_fetcher, name):
    resolver = FakeResolver({name: [NAMES[name]]})
    fetcher = make_fetcher(ports=[canary.port], allow_private=[], resolver=resolver)
    result = await fetcher.fetch(f"http://{name}:{canary.port}/")
    assert result.reason is FetchReason.blocked_address, result.detail
    assert canary.connections == 0


@pytest.mark.parametrize("template", LITERALS[:24] + [f"http://{n}:{{p}}/" for n in sorted(NAMES)])
async def test_redirects_to_payloads_never_connect(canary, server, make_fetcher, template):
    target = template.format(p=canary.port)

    async def redirect(request, writer):
        await respond(writer, 302, b"", headers={"Location": target})

    server.routes["/start"] = redirect
    # The redirecting site is exempt by name; nothing it points at is.
    resolver = FakeResolver({"site.test": [["127.0.0.1"]], **{n: [a] for n, a in NAMES.items()}})
    fetcher = make_fetcher(ports=[server.port, canary.port], allow_private=["site.test"], resolver=resolver)
    result = await fetcher.fetch(server.url("/start", host="site.test"))
    assert result.reason in REFUSED | {FetchReason.network_error}, (result.reason, result.detail)
    assert server.hits("/start") == 1
    assert canary.connections == 0


def test_the_battery_is_at_least_forty_payloads():
    assert len(LITERALS) + len(NAMES) >= 40
