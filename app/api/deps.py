"""Small dependencies: the lifespan's state, auth, request id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from fastapi import Request

from app.api.keys import KeyRing, bearer_token, caller_var
from app.api.quota import Quotas
from app.errors import Unauthorized
from app.state import ServiceState


# async on purpose: FastAPI runs plain `def` dependencies in a thread pool, a hop per request.
async def get_state(request: Request) -> ServiceState:
    return cast(ServiceState, request.app.state.service)


async def require_auth(request: Request) -> str:
    """The caller's id (a key fingerprint, or "anonymous" with GA_AUTH=disabled); 401 otherwise."""
    ring: KeyRing = request.app.state.keyring
    caller = ring.verify(bearer_token(request.headers.get("authorization", "")))
    if caller is None:
        raise Unauthorized("invalid or missing API key (Authorization: Bearer <key>)")
    request.state.caller = caller.id
    caller_var.set(caller.id)
    quotas: Quotas | None = getattr(request.app.state, "quotas", None)
    if request.method == "POST" and quotas is not None and quotas.enabled:
        # Only requests that cause work count; the headers ride on the response (QuotaHeaders).
        verdict = await quotas.admit(caller.id)
        request.state.quota_headers = verdict.headers
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
