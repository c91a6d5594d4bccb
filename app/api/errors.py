"""The one error handler: every error leaves in OpenAI's shape, never with a stack trace."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.errors import GroundingError, InvalidRequest

log = logging.getLogger(__name__)


def _response(exc: GroundingError, request: Request) -> JSONResponse:
    return error_response(exc, getattr(request.state, "request_id", None))


def error_response(exc: GroundingError, rid: str | None) -> JSONResponse:
    """The OpenAI-shaped error response (also sent by middleware that answers before the routes)."""
    headers = {}
    if rid:
        headers["X-Request-Id"] = rid
    retry_after = getattr(exc, "retry_after_s", None)
    if retry_after:
        headers["Retry-After"] = str(retry_after)
    return JSONResponse(exc.to_body(), status_code=exc.status_code, headers=headers)


def _param(loc: tuple[int | str, ...]) -> str | None:
    parts = [p for p in loc if p not in ("body",)]
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or None


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(GroundingError)
    async def _grounding(request: Request, exc: GroundingError) -> JSONResponse:
        if exc.status_code >= 500:
            log.error("request failed: %s", exc.message)
        return _response(exc, request)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {}
        param = _param(tuple(first.get("loc", ())))
        if first.get("type") == "json_invalid":
            message = "request body is not valid JSON"
        elif first.get("type") == "missing" and param is None:
            message = "request body is required"
        else:
            message = f"{param}: {first.get('msg', 'invalid value')}" if param else first.get("msg", "invalid request")
        return _response(InvalidRequest(message, param=param), request)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        err = GroundingError(str(exc.detail), code="not_found" if exc.status_code == 404 else "http_error")
        err.status_code = exc.status_code
        err.error_type = "invalid_request_error" if exc.status_code < 500 else "server_error"
        return _response(err, request)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return _response(
            GroundingError("internal error; the request id in X-Request-Id identifies it in the logs"), request
        )
