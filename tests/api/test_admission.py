"""Overload (issue 13): a bounded number of answers in flight, a bounded queue, then a JSON 503
with Retry-After — counted, not timed."""

from __future__ import annotations

import asyncio

import httpx

from tests.api.helpers import chat, planner_or


def _refusals(metrics: str) -> dict[str, float]:
    out = {}
    for line in metrics.splitlines():
        if line.startswith("grounded_admission_refused_total{"):
            reason = line.split('reason="')[1].split('"')[0]
            out[reason] = float(line.rsplit(" ", 1)[1])
    return out


async def test_past_the_slots_and_the_queue_requests_are_refused_with_503(llm, service_factory):
    # Every composing call takes 1.5 s, so requests pile up behind the single slot.
    llm.default = planner_or({"content": "Tomllib parses TOML [S1].", "delay_s": 1.5})
    svc = service_factory(
        **llm.settings_overrides(), max_in_flight=1, admission_queue=2, admission_wait_s=0.3, deadline_ms=10_000
    )
    async with httpx.AsyncClient(base_url=svc.url, timeout=30) as client:
        before = _refusals((await client.get("/metrics")).text)
        replies = await asyncio.gather(
            *(client.post("/v1/chat/completions", json=chat(f"What is tomllib? ({i})", mode="never")) for i in range(8))
        )
        statuses = sorted(r.status_code for r in replies)
        refused = [r for r in replies if r.status_code == 503]
        # One slot: at most one answer at a time can be in progress; the rest wait 0.3 s (at most two
        # of them) or are refused at once, and none waits for the full 1.5 s of the one in flight.
        assert statuses.count(200) == 1, statuses
        assert len(refused) == 7
        for r in refused:
            err = r.json()["error"]
            assert err["code"] == "overloaded" and err["type"] == "server_error"
            assert int(r.headers["Retry-After"]) >= 1
        # Health and metrics never queue behind answers.
        assert (await client.get("/healthz")).status_code == 200
        after = _refusals((await client.get("/metrics")).text)
        assert {k: after[k] - before.get(k, 0) for k in after} == {"queue_full": 5, "wait_timeout": 2}
        # Once the slot is free, a request goes through again.
        assert (
            await client.post("/v1/chat/completions", json=chat("What is tomllib?", mode="never"))
        ).status_code == 200


async def test_a_client_that_disconnects_stops_the_upstream_work(llm, service_factory):
    """The composing call takes 3 s; the client gives up after 0.5 s. The answer's work is cancelled
    at once (counted), and the slot it held is free for the next request."""
    calls: list[str] = []

    def reply(body):
        system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
        calls.append("planner" if "You plan web searches" in system else "other")
        return {"content": "Tomllib parses TOML [S1].", "delay_s": 3.0}

    llm.default = reply
    svc = service_factory(**llm.settings_overrides(), max_in_flight=1, admission_queue=0, deadline_ms=20_000)
    async with httpx.AsyncClient(base_url=svc.url) as client:
        before = (await client.get("/metrics")).text
        try:
            await client.post("/v1/chat/completions", json=chat("What is tomllib?", mode="never"), timeout=0.5)
        except httpx.TimeoutException:
            pass
        await asyncio.sleep(1.0)
        after = (await client.get("/metrics")).text
        assert (
            _counter(after, "grounded_client_disconnects_total") - _counter(before, "grounded_client_disconnects_total")
            == 1
        )
        # The single slot was released by the cancellation (not after the 3 s reply): no 503.
        llm.default = planner_or("Tomllib parses TOML.")
        again = await client.post("/v1/chat/completions", json=chat("What is tomllib?", mode="never"), timeout=30)
        assert again.status_code == 200
    assert len(calls) == 1  # the one call in flight when the client left; nothing started after it


def _counter(metrics: str, name: str) -> float:
    for line in metrics.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


def _slow_or_fast(body: dict) -> dict:
    slow = any("slowly" in str(m.get("content", "")) for m in body["messages"])
    return {"content": "Tomllib parses TOML [S1].", "delay_s": 1.0 if slow else 0.2}


async def _two_overlapping_answers(client: httpx.AsyncClient) -> tuple[httpx.Response, httpx.Response]:
    slow = asyncio.ensure_future(
        client.post("/v1/chat/completions", json=chat("What is tomllib, slowly?", mode="never"))
    )
    await asyncio.sleep(0.1)  # the slow answer is in flight before the fast one starts
    fast = await client.post("/v1/chat/completions", json=chat("What is tomllib?", mode="never"))
    return await slow, fast


async def test_a_busy_process_closes_kept_alive_connections_so_clients_spread_over_workers(llm, service_factory):
    """The fast answer finishes while the slow one is still in flight (two in the process, above
    GA_KEEPALIVE_MAX_IN_FLIGHT=1): its response closes the connection. The slow one finishes alone
    and keeps its connection; so does an answer when the setting is 0."""
    llm.default = planner_or(_slow_or_fast)
    svc = service_factory(**llm.settings_overrides(), keepalive_max_in_flight=1, deadline_ms=10_000)
    async with httpx.AsyncClient(base_url=svc.url, timeout=30) as client:
        slow, fast = await _two_overlapping_answers(client)
        assert slow.status_code == fast.status_code == 200
        assert fast.headers.get("connection") == "close"
        assert slow.headers.get("connection") != "close"
        # Health checks are not answers: never closed for load.
        assert (await client.get("/healthz")).headers.get("connection") != "close"

    off = service_factory(**llm.settings_overrides(), keepalive_max_in_flight=0, deadline_ms=10_000)
    async with httpx.AsyncClient(base_url=off.url, timeout=30) as client:
        slow, fast = await _two_overlapping_answers(client)
        assert slow.status_code == fast.status_code == 200
        assert "close" not in (slow.headers.get("connection"), fast.headers.get("connection"))
