"""Graceful shutdown: a stop signal stops new connections and lets answers in flight finish."""

from __future__ import annotations

import threading
import time

import httpx

from tests.api.helpers import chat, planner_or


def test_answers_in_flight_finish_when_the_service_stops(llm, service_factory):
    llm.default = planner_or({"content": "Tomllib parses TOML files.", "delay_s": 1.0})
    svc = service_factory(**llm.settings_overrides(), graceful_timeout_s=10)
    replies: list[httpx.Response] = []

    def ask():
        replies.append(
            httpx.post(svc.url + "/v1/chat/completions", json=chat("What is tomllib?", mode="never"), timeout=30)
        )

    worker = threading.Thread(target=ask)
    worker.start()
    deadline = time.monotonic() + 10
    while not llm.requests.all() and time.monotonic() < deadline:  # the answer is being composed
        time.sleep(0.02)
    svc.stop()  # SIGTERM-equivalent: uvicorn's should_exit, with the graceful timeout
    worker.join(30)
    assert replies and replies[0].status_code == 200, replies
    assert "Tomllib" in replies[0].json()["choices"][0]["message"]["content"]
    try:
        httpx.get(svc.url + "/healthz", timeout=2)
        accepted_after_stop = True
    except httpx.TransportError:
        accepted_after_stop = False
    assert not accepted_after_stop
