"""What start-up built is frozen out of the garbage collector's sight (GA_GC_FREEZE, app/main.py),
and every collection's pause is a metric (app/metrics.py)."""

from __future__ import annotations

import gc

import httpx


def _full_collections(metrics_text: str) -> float:
    for line in metrics_text.splitlines():
        if line.startswith('grounded_gc_pause_seconds_count{generation="2"}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


async def test_start_up_objects_are_frozen_and_collections_are_timed(service_factory):
    gc.unfreeze()
    try:
        svc = service_factory(gc_freeze=True)
        assert gc.get_freeze_count() > 10_000  # the app, its settings, providers and models
        async with httpx.AsyncClient(base_url=svc.url) as client:
            before = _full_collections((await client.get("/metrics")).text)
            gc.collect()
            after = _full_collections((await client.get("/metrics")).text)
        assert after == before + 1
    finally:
        gc.unfreeze()


async def test_without_the_setting_nothing_is_frozen(service_factory):
    gc.unfreeze()
    service_factory(gc_freeze=False)
    assert gc.get_freeze_count() == 0
