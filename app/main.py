"""ASGI entry point: `uvicorn app.main:app`."""

from __future__ import annotations

import asyncio
import gc
import logging
import re
import secrets
from contextlib import asynccontextmanager

import orjson
from fastapi import FastAPI
from starlette.requests import ClientDisconnect

from app import metrics
from app.api.admission import Admission, AdmissionMiddleware
from app.api.disconnect import CancelOnDisconnect
from app.api.errors import install_error_handlers
from app.api.hit_path import AnswerHitPath
from app.api.inspect import router as inspect_router
from app.api.keys import KeyRing
from app.api.limits import BodyGuard
from app.api.openapi import install_openapi
from app.api.quota import QuotaHeaders, Quotas
from app.api.routes import router
from app.corpus.vectors import INSTRUCTION_FREE_NAME, vectors_dir
from app.errors import GroundingError
from app.language import time as language_time
from app.language.question import use_time_model
from app.logs import client_request_id_var, configure_logging, request_id_var
from app.metrics_export import install_http_metrics, mark_worker_dead
from app.pipeline import injection, injection_encoder, injection_multilingual
from app.providers.rerank import minilm_shallow
from app.settings import Settings, get_settings
from app.state import ServiceState

log = logging.getLogger(__name__)
# The routes whose POSTs cause answer work (and so are admitted, app/api/admission.py).
ANSWER_PATHS = ("/v1/grounded-answers", "/v1/chat/completions", "/v1/responses", "/v1/context")
_CLIENT_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    configure_logging(settings.log_level)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        app.state.keyring = KeyRing(settings)  # before anything else: no keys and auth required = no start
        app.state.service = await ServiceState.build(settings)
        # Before the verdicts below: which detector reads evidence decides whether they still hold.
        injection.use_encoder(
            await asyncio.to_thread(injection_encoder.from_settings, settings),
            await asyncio.to_thread(injection_multilingual.from_settings, settings),
        )
        # In a thread: the encoder's weights are hashed and the time model's weights read here.
        await asyncio.to_thread(
            lambda: use_time_model(
                settings.time_classifier != "keywords",
                minilm_shallow.optional_encoder(settings.sentence_model_path)
                if settings.time_classifier == "model"
                else None,
            )
        )
        if settings.warm_up:
            await asyncio.to_thread(injection.warm_up)
            await asyncio.to_thread(language_time.warm_up)
        # The corpus's evidence passages the injection detector already passed, offline (the select
        # stage skips scanning them); nothing when the file is missing or from another detector.
        vouched = injection.preload_verified(vectors_dir(settings.corpus_dir) / INSTRUCTION_FREE_NAME)
        if vouched:
            log.info("injection: %d corpus passages checked offline", vouched)
        app.state.quotas = Quotas(app.state.service.cache, settings.rate_limit_rpm, settings.daily_budget_usd)
        # What start-up built (weights, indexes, models: millions of objects) lives as long as the
        # process: out of the collector's sight, a full collection scans only what requests made since,
        # instead of pausing every request in flight for ~100 ms (`python -m bench.gc_pauses`).
        metrics.watch_gc()
        if settings.gc_freeze:
            gc.collect()
            gc.freeze()
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
    app.include_router(inspect_router)  # GET /inspect: the answer inspector (docs/INSPECTOR.md)
    install_openapi(app)

    # A repeated request answered from the answer cache before routing. Added first, so innermost:
    # the middlewares added after it wrap it and apply to it as to any request.
    app.add_middleware(AnswerHitPath, max_bytes=settings.hit_path_memo_bytes)
    # An oversized or trickling body is refused before anything else reads it (auth included).
    app.add_middleware(BodyGuard, max_bytes=settings.max_body_bytes, timeout_s=settings.body_read_timeout_s)
    app.add_middleware(QuotaHeaders)
    app.add_middleware(CancelOnDisconnect, paths=ANSWER_PATHS)  # a client gone = its upstream work stopped
    # Overload: past GA_MAX_IN_FLIGHT answers a bounded, timed queue, then a 503 (before any work).
    admission = Admission(settings.max_in_flight, settings.admission_queue, settings.admission_wait_s)
    app.add_middleware(
        AdmissionMiddleware,
        admission=admission,
        paths=ANSWER_PATHS,
        keepalive_max_in_flight=settings.keepalive_max_in_flight,
    )
    app.add_middleware(RequestIdMiddleware)
    install_http_metrics(app)

    return app


class RequestIdMiddleware:
    """Pure ASGI (no BaseHTTPMiddleware task hop). Every request gets an id made here (X-Request-Id,
    the trace's key); a client's own id (X-Client-Request-Id, or X-Request-Id as older clients send)
    is echoed as X-Client-Request-Id and logged, never used as a key. An error that escapes every
    handler is logged with the request's id and answered in the OpenAI shape."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        client_id = (headers.get(b"x-client-request-id") or headers.get(b"x-request-id") or b"").decode("latin-1")
        client_id = client_id if _CLIENT_ID.match(client_id) else ""
        rid = "req_" + secrets.token_hex(12)
        scope.setdefault("state", {})["request_id"] = rid
        started = False

        async def send_with_id(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                out = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"]
                out.append((b"x-request-id", rid.encode("latin-1")))
                if client_id:
                    out.append((b"x-client-request-id", client_id.encode("latin-1")))
                message = {**message, "headers": out}
            await send(message)

        token = request_id_var.set(rid)
        client_token = client_request_id_var.set(client_id)
        try:
            await self.app(scope, receive, send_with_id)
        except ClientDisconnect:
            # The client left before its body arrived (e.g. it gave up while queued for admission):
            # nobody to answer, nothing broken.
            metrics.CLIENT_DISCONNECTS.inc()
            log.info("client disconnected before its request body was read")
        except Exception:
            log.exception("unhandled error")
            if not started:
                body = orjson.dumps(
                    GroundingError("internal error; the X-Request-Id identifies it in the logs").to_body()
                )
                await send_with_id(
                    {
                        "type": "http.response.start",
                        "status": 500,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))],
                    }
                )
                await send_with_id({"type": "http.response.body", "body": body})
        finally:
            request_id_var.reset(token)
            client_request_id_var.reset(client_token)


def _app() -> FastAPI:
    return create_app()


app = _app()
