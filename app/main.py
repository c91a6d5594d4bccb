"""ASGI entry point: `uvicorn app.main:app`."""
from __future__ import annotations

import logging
import re
import secrets
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request

from app.api.errors import install_error_handlers
from app.api.routes import router
from app.logs import configure_logging, request_id_var
from app.metrics_export import install_http_metrics, mark_worker_dead
from app.settings import Settings, get_settings
from app.state import ServiceState

_CLIENT_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    configure_logging(settings.log_level)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        app.state.service = await ServiceState.build(settings)
        try:
            yield
        finally:
            await app.state.service.aclose()
            mark_worker_dead()

    app = FastAPI(title="Grounded-answer service", version="0.1.0", lifespan=lifespan,
                  description="OpenAI-compatible answers grounded in current web evidence, with citations "
                              "checked in code, or a structured abstention; every response says what it cost.")
    install_error_handlers(app)
    app.include_router(router)

    @app.middleware("http")
    async def request_ids(request: Request, call_next):
        # A client's own id is echoed (when sane); otherwise one is made.
        rid = request.headers.get("x-request-id", "")
        rid = rid if _CLIENT_ID.match(rid) else "req_" + secrets.token_hex(12)
        request.state.request_id = rid
        token = request_id_var.set(rid)
        try:
            response = await call_next(request)
        finally:
            request_id_var.reset(token)
        response.headers.setdefault("X-Request-Id", rid)
        return response

    install_http_metrics(app)

    return app


def _app() -> FastAPI:
    return create_app()


app = _app()
