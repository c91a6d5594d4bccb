"""Top-level fixtures: real local upstreams (started once per session, reset per test), Redis,
and a factory that runs the real service. The servers live in tests/servers/ (see its README)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # `app` and `tests.servers` importable under any pytest entry point
    sys.path.insert(0, str(REPO_ROOT))

from tests.servers import (ForwardProxy, OpenAIChatServer, RedisForTests,  # noqa: E402
                           RedisUnavailable, SearxngServer, ServiceServer, WebServer,
                           make_openai_client)


# --- upstream servers: one per session, fresh script state per test ---------------------------

@pytest.fixture(scope="session")
def _searxng_server():
    with SearxngServer() as server:
        yield server


@pytest.fixture(scope="session")
def _web_server():
    with WebServer() as server:
        yield server


@pytest.fixture(scope="session")
def _proxy_server():
    with ForwardProxy() as server:
        yield server


@pytest.fixture(scope="session")
def _llm_server():
    with OpenAIChatServer() as server:
        yield server


@pytest.fixture
def searxng(_searxng_server: SearxngServer) -> SearxngServer:
    _searxng_server.reset()
    return _searxng_server


@pytest.fixture
def web(_web_server: WebServer) -> WebServer:
    _web_server.reset()
    return _web_server


@pytest.fixture
def proxy(_proxy_server: ForwardProxy) -> ForwardProxy:
    _proxy_server.reset()
    return _proxy_server


@pytest.fixture
def llm(_llm_server: OpenAIChatServer) -> OpenAIChatServer:
    _llm_server.reset()
    return _llm_server


# --- Redis ---------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def _redis_for_tests():
    try:
        instance = RedisForTests().start()
    except RedisUnavailable as exc:
        if os.environ.get("CI"):  # CI must run the Redis tests, never skip them
            pytest.fail(f"Redis is required on CI: {exc}", pytrace=False)
        pytest.skip(f"no Redis for the tests: {exc}")
    try:
        yield instance
    finally:
        instance.stop()


@pytest.fixture
def redis_url(_redis_for_tests: RedisForTests) -> str:
    """A Redis URL on an emptied test DB (DB 15 of the machine's Redis, or a throwaway server)."""
    _redis_for_tests.flush()
    return _redis_for_tests.url


# --- the service under test ----------------------------------------------------------------------

@pytest.fixture
def service_factory():
    """service_factory(**settings_overrides) -> a running ServiceServer (.url, .settings); every
    service started in the test is stopped (lifespan shutdown included) at its end."""
    started: list[ServiceServer] = []

    def start(settings=None, *, app_factory="app.main:create_app", **overrides) -> ServiceServer:
        svc = ServiceServer(settings, app_factory=app_factory, **overrides).start()
        started.append(svc)
        return svc

    yield start
    for svc in reversed(started):
        svc.stop()


@pytest.fixture
async def openai_client():
    """openai_client(svc, **kw) -> openai.AsyncOpenAI(base_url=svc.url + "/v1", api_key="test");
    closed at the end of the test. Retries are off unless asked for, so errors surface at once."""
    clients = []

    def make(service_or_url, **kw):
        kw.setdefault("max_retries", 0)
        client = make_openai_client(service_or_url, **kw)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()
