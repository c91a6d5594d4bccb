"""Request traces: stored per request id for the trace TTL; a cached answer's trace points at the
run that produced it."""

from __future__ import annotations

from typing import Any

import orjson

from app.state import ServiceState


async def link_trace(original_id: str, request_id: str, state: ServiceState) -> None:
    """A cached answer's trace is the trace of the run that produced it: store a pointer (cheap on
    the hit path); GET /v1/traces follows it."""
    pointer = {"request_id": request_id, "served_from": "answer_cache", "original_request_id": original_id}
    await state.cache.set(f"trace:{request_id}", orjson.dumps(pointer), state.settings.trace_ttl_s)


async def load_trace(request_id: str, state: ServiceState) -> dict[str, Any] | None:
    raw = await state.cache.get(f"trace:{request_id}")
    if raw is None:
        return None
    trace: dict[str, Any] = orjson.loads(raw)
    if trace.get("served_from") == "answer_cache":
        original = await state.cache.get(f"trace:{trace['original_request_id']}")
        trace = {**(orjson.loads(original) if original else {}), **trace}
    return trace
