"""Small dependencies: the lifespan's state, auth, request id."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import cast

from fastapi import Request

from app.errors import Unauthorized
from app.state import ServiceState


# async on purpose: FastAPI runs plain `def` dependencies in a thread pool, a hop per request.
async def get_state(request: Request) -> ServiceState:
    return cast(ServiceState, request.app.state.service)


async def require_auth(request: Request) -> None:
    keys = request.app.state.service.settings.api_keys
    if not keys:
        return
    header = request.headers.get("authorization", "")
    token = header[7:].strip() if header.lower().startswith("bearer ") else ""
    if not any(secrets.compare_digest(token, k) for k in keys):
        raise Unauthorized("invalid or missing API key (Authorization: Bearer <key>)")


async def request_id(request: Request) -> str:
    return cast(str, request.state.request_id)


@dataclass(slots=True)
class Call:
    """What an answer route needs, resolved in one dependency (each one costs on the hot path)."""

    state: ServiceState
    request_id: str


async def api_call(request: Request) -> Call:
    await require_auth(request)
    return Call(request.app.state.service, request.state.request_id)
