"""Top-level fixtures: real local upstreams (started once per session, reset per test), Redis,
and a factory that runs the real service. The servers live in simulators/ (see its README)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # `app` and `simulators` importable under any pytest entry point
    sys.path.insert(0, str(REPO_ROOT))

from simulators import (  # noqa: E402
    ForwardProxy,
    OpenAIChatServer,
    RedisForTests,
    RedisUnavailable,
    SearxngServer,
    ServiceServer,
    WebServer,
    make_openai_client,
)
from simulators.search_apis import BraveServer, SerperServer, TavilyServer  # noqa: E402

# --- upstream servers: one per session, fresh script state per test ---------------------------


def upstream(server_cls, name: str):
    """A session-scoped server (started once) and a per-test fixture `name` that resets it."""
    session_name = f"_{name}_server"

    @pytest.fixture(scope="session", name=session_name)
    def session_server():
        with server_cls() as server:
            yield server

    @pytest.fixture(name=name)
    def per_test(request):
        server = request.getfixturevalue(session_name)
        server.reset()
        return server

    return session_server, per_test


_searxng_session, searxng = upstream(SearxngServer, "searxng")
_web_session, web = upstream(WebServer, "web")
_proxy_session, proxy = upstream(ForwardProxy, "proxy")
_llm_session, llm = upstream(OpenAIChatServer, "llm")
_brave_session, brave = upstream(BraveServer, "brave")
_tavily_session, tavily = upstream(TavilyServer, "tavily")
_serper_session, serper = upstream(SerperServer, "serper")


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


@pytest.fixture(scope="session", autouse=True)
def _injection_detector_as_served():
    """The service's lifespan sets the injection detector's readers for the process
    (GA_INJECTION_ENCODER, GA_INJECTION_MULTILINGUAL, app/main.py); set here the same way once, so a
    test that calls strip_instructions reads text as the default service does, whichever test ran
    before it."""
    from app.pipeline import injection, injection_encoder, injection_multilingual
    from app.settings import Settings

    injection.use_encoder(injection_encoder.from_settings(Settings()), injection_multilingual.from_settings(Settings()))


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
