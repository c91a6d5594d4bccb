"""A client that goes away stops the work it started.

An answer costs upstream calls (search, model) for seconds; when the client disconnects before the
response, nobody will read it, so the answer's task is cancelled at once: in-flight upstream calls
are closed and no further ones are made (counted in grounded_client_disconnects_total). Starlette
already stops a *stream* on disconnect; this covers the JSON path, where the handler would otherwise
run to the end.

After the app has read the whole body, this middleware becomes the only reader of the connection's
`receive`: the app's later `receive()` calls (Starlette's disconnect listener) are served from here,
so there is never a second consumer racing for the disconnect message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import metrics

_DISCONNECT: Message = {"type": "http.disconnect"}
WATCH_AFTER_S = 0.05  # a client gone is noticed this much later at most; quicker answers need no watcher


class CancelOnDisconnect:
    def __init__(self, app: ASGIApp, paths: Iterable[str]):
        self.app = app
        self.paths = frozenset(paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in self.paths:
            return await self.app(scope, receive, send)
        # The answer runs in this task; one watcher task, started WATCH_AFTER_S after the body is
        # read, cancels it when the client goes away. An answer done sooner (an answer-cache hit)
        # never starts one: a timer costs a fraction of a task.
        me = asyncio.current_task()
        assert me is not None
        gone = asyncio.Event()
        state = {"response_done": False, "cancelled_by_us": False}
        watcher: asyncio.Task[None] | None = None
        timer: asyncio.TimerHandle | None = None
        body_read = False

        def start_watching() -> None:
            nonlocal watcher
            if watcher is None and not state["response_done"]:
                watcher = asyncio.ensure_future(watch())

        async def watch() -> None:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    gone.set()
                    if not state["response_done"]:
                        metrics.CLIENT_DISCONNECTS.inc()
                        state["cancelled_by_us"] = True
                        me.cancel()
                    return

        async def app_receive() -> Message:
            nonlocal timer, body_read
            if body_read:  # the watcher owns `receive` now (started at once if not yet)
                if timer is not None:
                    timer.cancel()
                start_watching()
                await gone.wait()
                return _DISCONNECT
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
            elif not message.get("more_body", False):
                body_read = True
                timer = asyncio.get_running_loop().call_later(WATCH_AFTER_S, start_watching)
            return message

        async def tracked_send(message: Message) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                state["response_done"] = True
            await send(message)

        try:
            await self.app(scope, app_receive, tracked_send)
        except asyncio.CancelledError:
            if not state["cancelled_by_us"]:
                raise  # cancelled from outside (shutdown): not ours to swallow
            me.uncancel()  # the cancellation was ours and is handled here
        finally:
            if timer is not None:
                timer.cancel()
            if watcher is not None:
                watcher.cancel()
