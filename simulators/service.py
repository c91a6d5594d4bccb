"""The service under test, started for real: `app.main:create_app(settings)` under uvicorn.

    with ServiceServer(search_providers=["searxng"], searxng_url=searxng.url) as svc:
        httpx.post(svc.url + "/v1/chat/completions", json={...})

Keyword arguments become `Settings(**overrides)` fields (host/port are set to the real listening
address). The lifespan runs: start-up before the first request, shutdown on stop().
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ._threaded import ThreadedUvicorn, bind_socket

AppFactory = Callable[[Any], Any]


def load_factory(spec: str | AppFactory) -> AppFactory:
    if callable(spec):
        return spec
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr or "create_app")


def _protocol_for(settings: Any) -> Any:
    """The production protocol (app/server.py), with this service's header deadline."""
    from app.server import HttpProtocol

    return type("HttpProtocol", (HttpProtocol,), {"header_timeout_s": settings.header_read_timeout_s})


class ServiceServer(ThreadedUvicorn):
    def __init__(
        self,
        settings: Any | None = None,
        *,
        app_factory: str | AppFactory = "app.main:create_app",
        graceful_timeout_s: int = 3,
        **overrides: Any,
    ) -> None:
        sock = bind_socket()
        port = sock.getsockname()[1]
        if settings is None:
            from app.settings import Settings

            settings = Settings(**{"host": "127.0.0.1", "port": port, **overrides})
        elif overrides:
            settings = settings.model_copy(update=overrides)
        if "auth" not in settings.model_fields_set and not (settings.api_keys or settings.api_key_hashes):
            # A test service with no keys is a private trial: say so explicitly, as a user must.
            settings = settings.model_copy(update={"auth": "disabled"})
        if "gc_freeze" not in settings.model_fields_set:
            # The service shares the test process: freezing would keep every earlier test's objects
            # for good, and cost a full collection at each of the suite's service starts.
            settings = settings.model_copy(update={"gc_freeze": False})
        self.settings = settings
        self.app = load_factory(app_factory)(settings)
        # The same protocol and loop choices as production (`uvicorn app.main:app --http app.server:HttpProtocol`).
        super().__init__(
            self.app,
            [sock],
            lifespan="on",
            name="service",
            graceful_timeout_s=graceful_timeout_s,
            http=_protocol_for(settings),
            loop="auto",
        )
