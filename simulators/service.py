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
        self.settings = settings
        self.app = load_factory(app_factory)(settings)
        # The same protocol and loop choices as `uvicorn app.main:app` in production.
        super().__init__(
            self.app,
            [sock],
            lifespan="on",
            name="service",
            graceful_timeout_s=graceful_timeout_s,
            http="auto",
            loop="auto",
        )
