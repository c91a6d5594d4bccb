"""ASGI entry point: `uvicorn app.main:app`."""

from __future__ import annotations

import re
import secrets
from contextlib import asynccontextmanager

from fastapi import FastAPI

from app.api.errors import install_error_handlers
from app.api.openapi import install_openapi
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

    app = FastAPI(
        title="Grounded-answer service",
        version="0.1.0",
        lifespan=lifespan,
        description="OpenAI-compatible answers grounded in current web evidence, with citations "
        "checked in code, or a structured abstention; every response says what it cost.",
    )
    install_error_handlers(app)
    app.include_router(router)
    install_openapi(app)

    app.add_middleware(RequestIdMiddleware)
    install_http_metrics(app)

    return app


class RequestIdMiddleware:
    """Pure ASGI (no BaseHTTPMiddleware task hop): a client's own X-Request-Id is echoed when sane,
    otherwise one is made; it rides in scope state for the handlers and in the logs' context."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        client_id = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"x-request-id"), "")
        rid = client_id if _CLIENT_ID.match(client_id) else "req_" + secrets.token_hex(12)
        scope.setdefault("state", {})["request_id"] = rid

        async def send_with_id(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(k.lower() == b"x-request-id" for k, _ in headers):
                    headers.append((b"x-request-id", rid.encode("latin-1")))
                message = {**message, "headers": headers}
            await send(message)

        token = request_id_var.set(rid)
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            request_id_var.reset(token)


def _app() -> FastAPI:
    return create_app()


app = _app()
