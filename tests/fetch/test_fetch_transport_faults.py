"""A page whose connection breaks inside the HTTP pool in an unusual way (the soak saw httpcore +
anyio raise a bare AttributeError on a reset right after connect) is a network error, logged without
a traceback; the same exception raised by our own code still warns with one."""

from __future__ import annotations

import logging

import pytest

from app.domain.types import FetchReason
from app.fetch.fetcher import _classify

POOL_FAULT = "'NoneType' object has no attribute 'getpeername'"


def _raised_from(filename: str) -> AttributeError:
    # A function whose code lives at `filename`, as the frame of a library raising it would.
    namespace: dict = {}
    exec(compile(f"def fail():\n    raise AttributeError({POOL_FAULT!r})\n", filename, "exec"), namespace)
    try:
        namespace["fail"]()
    except AttributeError as exc:
        return exc
    raise AssertionError("unreachable")


@pytest.mark.parametrize("package", ["anyio/_backends/_asyncio.py", "httpcore/_async/connection.py"])
def test_a_fault_raised_inside_the_http_stack_is_a_network_error_without_a_traceback(package, caplog):
    exc = _raised_from(f"/venv/lib/python3.11/site-packages/{package}")
    with caplog.at_level(logging.WARNING, logger="app.fetch.fetcher"):
        reason, detail = _classify(exc)
    assert reason is FetchReason.network_error and "getpeername" in detail
    assert not caplog.records


def test_the_same_exception_from_our_own_code_still_warns(caplog):
    exc = _raised_from("/srv/app/fetch/body.py")
    with caplog.at_level(logging.WARNING, logger="app.fetch.fetcher"):
        reason, _ = _classify(exc)
    assert reason is FetchReason.network_error
    assert [r.getMessage() for r in caplog.records] == ["unexpected fetch failure"]
    assert caplog.records[0].exc_info is not None
