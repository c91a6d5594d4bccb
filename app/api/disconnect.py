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


class CancelOnDisconnect:
    def __init__(self, app: ASGIApp, paths: Iterable[str]):
        self.app = app
        self.paths = frozenset(paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in self.paths:
            return await self.app(scope, receive, send)
        body_read = asyncio.Event()
        gone = asyncio.Event()
        response_done = False

        async def app_receive() -> Message:
            if body_read.is_set():
                await gone.wait()
                return _DISCONNECT
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
            elif not message.get("more_body", False):
                body_read.set()
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal response_done
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                response_done = True
            await send(message)

        work = asyncio.ensure_future(self.app(scope, app_receive, tracked_send))

        async def watch() -> None:
            await body_read.wait()
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    gone.set()
                    if not response_done and not work.done():
                        metrics.CLIENT_DISCONNECTS.inc()
                        work.cancel()
                    return

        watcher = asyncio.ensure_future(watch())
        try:
            await work
        except asyncio.CancelledError:
            if not gone.is_set():
                raise  # cancelled from outside (shutdown): not ours to swallow
        finally:
            watcher.cancel()
