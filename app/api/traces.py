"""Request traces: stored per request id for the trace TTL, readable only by the caller (API key)
that made the request; a cached answer's trace points at the run that produced it.

Request ids are made by the service (a client's X-Request-Id is echoed as X-Client-Request-Id and
logged, never used as a storage key), so one caller can neither guess nor overwrite another's trace.
"""

from __future__ import annotations

from typing import Any

import orjson

from app.api.keys import caller_var
from app.state import ServiceState

# Free text in a stored trace is cut to GA_TRACE_TEXT_CHARS: a trace explains a decision, it is not
# an archive of what users asked (and a 1 MB question must not become a 1 MB cache entry).
_TEXT_FIELDS = ("question", "answer", "content")


def _key(request_id: str) -> str:
    return f"trace:{request_id}"


def _cut(value: Any, limit: int) -> Any:
    return value[:limit] + "…" if isinstance(value, str) and len(value) > limit else value


def _bounded(trace: dict[str, Any], limit: int) -> dict[str, Any]:
    out = {k: _cut(v, limit) if k in _TEXT_FIELDS else v for k, v in trace.items()}
    if isinstance(out.get("plan"), dict):
        plan = out["plan"]
        out["plan"] = {**plan, "question": _cut(plan.get("question"), limit)}
        if isinstance(plan.get("queries"), list):
            out["plan"]["queries"] = [_cut(q, limit) for q in plan["queries"]]
    return out


async def store_trace(request_id: str, trace: dict[str, Any], state: ServiceState) -> None:
    record = {**_bounded(trace, state.settings.trace_text_chars), "owner": caller_var.get()}
    await state.cache.set(_key(request_id), orjson.dumps(record), state.settings.trace_ttl_s)


async def link_trace(original_id: str, request_id: str, state: ServiceState) -> None:
    """A cached answer's trace is the trace of the run that produced it: store a pointer (cheap on
    the hit path); GET /v1/traces follows it."""
    pointer = {
        "request_id": request_id,
        "served_from": "answer_cache",
        "original_request_id": original_id,
        "owner": caller_var.get(),
    }
    await state.cache.set(_key(request_id), orjson.dumps(pointer), state.settings.trace_ttl_s)


async def load_trace(request_id: str, state: ServiceState, caller: str) -> dict[str, Any] | None:
    """The trace, or None when it is missing, expired or another caller's (indistinguishable on
    purpose: a 404 does not confirm that someone else's request id exists)."""
    raw = await state.cache.get(_key(request_id))
    if raw is None:
        return None
    trace: dict[str, Any] = orjson.loads(raw)
    if trace.pop("owner", None) != caller:
        return None
    if trace.get("served_from") == "answer_cache":
        # The run that produced a shared cached answer may be another caller's: its decisions are
        # shown (they explain this answer), its question text is not.
        original = await state.cache.get(_key(trace["original_request_id"]))
        base: dict[str, Any] = orjson.loads(original) if original else {}
        if base.pop("owner", None) != caller:
            for name in _TEXT_FIELDS:
                base.pop(name, None)
            if isinstance(base.get("plan"), dict):
                base["plan"] = {**base["plan"], "question": None}
        trace = {**base, **trace}
    return trace
