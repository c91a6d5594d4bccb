"""The lean path for answer-cache hits: a repeated request is answered before routing.

An answer-cache hit through the full route spends most of its CPU on what a repeat does not need:
FastAPI's routing and request objects, validating the body, resolving the options and computing
the cache key (measured in-process, `python -m bench.hit_inproc`). The same request body always
resolves to the same cache key and the same request fields of the answer (settings are fixed per
process), so when the chat route serves a JSON answer it leaves a `HitRecipe` in the scope; this
middleware keeps it under a digest of the path and the raw body, in a byte-bounded LRU memo.

Every chat POST is authorized here first, as the route would (app/api/deps.authorize: key check,
rate limit, budget), before its body is read; the route then finds it authorized and counted. A
request with the same path and body bytes as a recipe's is answered from the answer cache with the
recipe, through the same function the route uses for a hit (app/api/chat.serve_cached). When
the cached answer is gone, expired or its evidence pages changed, the request continues to the
route with its body replayed, and is not counted twice against its quota. Streams, other paths and
bodies not seen before take the route as always.

It sits innermost among the middlewares: request ids, HTTP metrics, admission, quota headers,
disconnect handling and the body-size guard apply to a hit here as they do to any request.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import metrics
from app.api.chat import CHAT_ROUTES, HitRecipe, serve_cached
from app.api.deps import authorize
from app.api.errors import error_response
from app.cache.lru import ByteLRU, str_bytes
from app.errors import GroundingError

STATE_RECIPE = "hit_recipe"  # scope state: left by the chat route, read here after the response


class AnswerHitPath:
    """Pure ASGI. `max_bytes` = 0 turns it off (every request takes the route)."""

    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app = app
        self.memo: ByteLRU[bytes, HitRecipe] | None = ByteLRU(max_bytes, "hit_recipes") if max_bytes > 0 else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            self.memo is None
            or scope["type"] != "http"
            or scope["method"] != "POST"
            or scope["path"] not in CHAT_ROUTES
        ):
            return await self.app(scope, receive, send)
        # What the route does first, in the route's order: the key (and quota) before the body is
        # read, so a client without a key cannot hold a slot by sending its body slowly.
        try:
            await authorize(scope)
            messages = await _read_body(receive)
        except GroundingError as exc:  # 401, 429, or a body too large or too slow (BodyGuard)
            self._label(scope)
            return await error_response(exc, scope["state"].get("request_id"))(scope, receive, send)
        complete = messages[-1]["type"] == "http.request"
        digest = _digest(scope["path"], messages) if complete else b""
        if complete and await self._serve_hit(digest, scope, receive, send):
            return
        await self.app(scope, _replay(messages, receive), send)
        recipe = scope.get("state", {}).get(STATE_RECIPE)
        if complete and recipe is not None:
            self.memo.put(digest, recipe, _recipe_bytes(recipe))

    async def _serve_hit(self, digest: bytes, scope: Scope, receive: Receive, send: Send) -> bool:
        assert self.memo is not None
        recipe = self.memo.get(digest)
        if recipe is None:
            return False
        state = scope["app"].state.service
        result = await serve_cached(recipe, CHAT_ROUTES[scope["path"]], state, scope["state"]["request_id"])
        if result is None:
            metrics.labelled(metrics.HIT_PATH, "fell_through").inc()
            return False
        metrics.labelled(metrics.HIT_PATH, "served").inc()
        self._label(scope)
        await result.response()(scope, receive, send)
        return True

    @staticmethod
    def _label(scope: Scope) -> None:
        """The route in the scope, as the router would put it: the HTTP metrics label a response
        sent from here by its route template (these paths have no parameters), not as unmatched."""
        scope["route"] = _ROUTE_LABELS[scope["path"]]


@dataclass(frozen=True, slots=True)
class _RouteLabel:
    path: str  # what the HTTP metrics read of a matched route (app/metrics_export.py)


_ROUTE_LABELS = {path: _RouteLabel(path) for path in CHAT_ROUTES}


async def _read_body(receive: Receive) -> list[Message]:
    """The request's messages up to the end of its body (or a disconnect)."""
    messages = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            return messages


def _recipe_bytes(recipe: HitRecipe) -> int:
    """Measured size of a recipe: its slots object, strings and tuples (the digest key and the
    entry's slot are counted by ByteLRU)."""
    return (
        sys.getsizeof(recipe)
        + str_bytes((recipe.key, recipe.model, *recipe.ignored, *recipe.sampling))
        + sys.getsizeof(recipe.ignored)
        + sys.getsizeof(recipe.sampling)
    )


def _digest(path: str, messages: list[Message]) -> bytes:
    h = hashlib.blake2b(path.encode(), digest_size=16)
    for m in messages:
        h.update(m.get("body", b""))
    return h.digest()


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A receive that gives the messages already read, then reads on."""
    pending = list(messages)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay
