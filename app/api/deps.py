"""Small dependencies: the lifespan's state, auth, request id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from fastapi import Request
from starlette.types import Scope

from app.api.keys import KeyRing, bearer_token, caller_var
from app.api.quota import STATE_CALLER, STATE_HEADERS, Quotas
from app.errors import Unauthorized
from app.state import ServiceState

STATE_AUTHORIZED = "authorized_caller"  # scope state: set once the caller is verified and counted


# async on purpose: FastAPI runs plain `def` dependencies in a thread pool, a hop per request.
async def get_state(request: Request) -> ServiceState:
    return cast(ServiceState, request.app.state.service)


async def require_auth(request: Request) -> str:
    """The caller's id (a key fingerprint, or "anonymous" with GA_AUTH=disabled); 401 otherwise."""
    return await authorize(request.scope)


async def authorize(scope: Scope) -> str:
    """require_auth on the ASGI scope, for the routes and the answer-cache hit path alike. Once per
    request: a second call (the hit path fell through to the route) neither verifies nor counts again."""
    state = scope.setdefault("state", {})
    if (done := state.get(STATE_AUTHORIZED)) is not None:
        caller_var.set(done)
        return cast(str, done)
    app = scope["app"]
    ring: KeyRing = app.state.keyring
    header = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
    caller = ring.verify(bearer_token(header.decode("latin-1")))
    if caller is None:
        raise Unauthorized("invalid or missing API key (Authorization: Bearer <key>)")
    state[STATE_CALLER] = caller.id
    caller_var.set(caller.id)
    quotas: Quotas | None = getattr(app.state, "quotas", None)
    if scope["method"] == "POST" and quotas is not None and quotas.enabled:
        # Only requests that cause work count; the headers ride on the response (QuotaHeaders).
        verdict = await quotas.admit(caller.id)
        state[STATE_HEADERS] = verdict.headers
    state[STATE_AUTHORIZED] = caller.id
    return caller.id


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
