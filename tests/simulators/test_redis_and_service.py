"""The Redis fixture gives a working, emptied DB; the service runner runs an app's lifespan."""

from __future__ import annotations

import contextlib
from pathlib import Path

import httpx
import pytest
import redis
import redis.asyncio as aioredis
from fastapi import FastAPI

from simulators import RedisForTests, RedisUnavailable, ServiceServer


async def test_redis_url_is_usable_and_empty(redis_url):
    client = aioredis.from_url(redis_url)
    try:
        assert await client.dbsize() == 0
        await client.set("selftest:key", "v", ex=30)
        assert await client.get("selftest:key") == b"v"
    finally:
        await client.aclose()


def test_throwaway_redis_server_starts_and_stops():
    with RedisForTests(use_machine=False) as instance:
        assert instance.source == "throwaway" and instance.url.endswith("/15")
        client = redis.Redis.from_url(instance.url)
        assert client.ping() and client.dbsize() == 0
        client.close()
        proc = instance.process
    assert proc is not None and proc.poll() is not None  # stopped


def test_no_redis_at_all_says_why(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RedisUnavailable, match="redis-server is not installed"):
        RedisForTests(machine_url="redis://127.0.0.1:1").start()


def _stand_in_factory(events: list[str]):
    def create_app(settings):
        @contextlib.asynccontextmanager
        async def lifespan(app):
            events.append("startup")
            yield
            events.append("shutdown")

        app = FastAPI(lifespan=lifespan)

        @app.get("/settings")
        async def show():
            return {"searxng_url": settings.searxng_url, "port": settings.port}

        return app

    return create_app


def test_service_factory_runs_lifespan_and_applies_settings(service_factory):
    events: list[str] = []
    svc = service_factory(app_factory=_stand_in_factory(events), searxng_url="http://127.0.0.1:9")
    assert events == ["startup"]
    got = httpx.get(svc.url + "/settings").json()
    assert got == {"searxng_url": "http://127.0.0.1:9", "port": svc.port}
    assert svc.settings.searxng_url == "http://127.0.0.1:9"
    svc.stop()
    assert events == ["startup", "shutdown"]
    with pytest.raises(httpx.ConnectError):
        httpx.get(svc.url + "/settings")


def test_service_start_failure_is_reported():
    def broken(settings):
        @contextlib.asynccontextmanager
        async def lifespan(app):
            raise RuntimeError("cannot start")
            yield

        return FastAPI(lifespan=lifespan)

    with pytest.raises(RuntimeError, match="failed to start"):
        ServiceServer(app_factory=broken).start()


async def test_real_app_serves_and_stops(searxng, service_factory, openai_client):
    if not (Path(__file__).resolve().parents[2] / "app" / "main.py").exists():
        pytest.skip("app/main.py is not written yet")
    # SearXNG instead of the default local corpus: no corpus indexing at start-up (~2 s).
    svc = service_factory(**searxng.settings_overrides())
    assert svc.settings.searxng_url == searxng.url and svc.settings.port == svc.port
    models = await openai_client(svc).models.list()
    assert svc.settings.public_model_name in [m.id for m in models.data]
    svc.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(svc.url + "/healthz")
