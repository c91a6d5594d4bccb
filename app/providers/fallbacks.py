"""Which fallbacks a request used, for `grounding.fallbacks` (app/api/render.py).

Stages record as they fall back — the search chain (app/pipeline/search.py) when a provider fails,
is failing fast or finds nothing and the next one is asked; the model composer
(app/pipeline/composers/llm.py) when the composer model fails and the fallback model, then the
extractive composer, takes over. Entries are keyed by the request id (not a context variable, so
work done in child tasks is seen by the renderer) in a bounded map: a request that is never
rendered (/v1/context) leaves at most a few small entries behind until they are evicted.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from app import metrics

MAX_REQUESTS = 1024  # requests with recorded fallbacks kept until rendered
MAX_ENTRIES = 8  # distinct fallbacks per request
MAX_REASON_CHARS = 200

_lock = threading.Lock()
_by_request: OrderedDict[str, list[dict]] = OrderedDict()


def record(request_id: str, stage: str, origin: str, to: str, reason: str) -> None:
    """One use of a fallback: `origin` failed (or had nothing), `to` was asked instead. The same
    (stage, origin, to) is counted, not repeated."""
    metrics.labelled(metrics.FALLBACKS, stage, to).inc()  # configured provider / model names: bounded
    with _lock:
        entries = _by_request.get(request_id)
        if entries is None:
            entries = _by_request[request_id] = []
            while len(_by_request) > MAX_REQUESTS:
                _by_request.popitem(last=False)
        for entry in entries:
            if (entry["stage"], entry["from"], entry["to"]) == (stage, origin, to):
                entry["count"] += 1
                return
        if len(entries) < MAX_ENTRIES:
            entries.append({"stage": stage, "from": origin, "to": to, "reason": reason[:MAX_REASON_CHARS], "count": 1})


def take(request_id: str) -> list[dict]:
    """The request's fallbacks, in the order first used; forgets them."""
    with _lock:
        return _by_request.pop(request_id, [])


def peek(request_id: str) -> list[dict]:
    with _lock:
        return [dict(e) for e in _by_request.get(request_id, [])]
