"""grounded_request_duration_seconds ends when the last body byte is sent, as its help text says:
work the app does after that (a background task, the spend charged to a key, the admission slot's
release on a busy event loop) is not latency a client waits for. Before, the clock ran until the app
returned, and under the 2026-12-08 soak the service counted 58 answers over the 20 s deadline where
the clients saw 4."""

from __future__ import annotations

import asyncio

import httpx
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from app import metrics
from app.metrics_export import HttpMetricsMiddleware

AFTER_THE_RESPONSE_S = 0.5


async def answered_then_busy(request):
    return PlainTextResponse("done", background=BackgroundTask(asyncio.sleep, AFTER_THE_RESPONSE_S))


async def test_the_duration_stops_at_the_last_body_byte():
    route = "/test/answered-then-busy"
    app = HttpMetricsMiddleware(Starlette(routes=[Route(route, answered_then_busy)]))
    histogram = metrics.labelled(metrics.REQUEST_SECONDS, route)
    before = histogram._sum.get()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        response = await client.get(route)
    assert response.text == "done"
    observed = histogram._sum.get() - before
    assert 0 < observed < AFTER_THE_RESPONSE_S / 2
