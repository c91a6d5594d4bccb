"""One running service for the client tests: the embedded sample corpus and the extractive
composer (deterministic answers, no upstreams), two API keys."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from simulators import ServiceServer

KEY = "sk-client-one"
OTHER_KEY = "sk-client-two"
QUESTION = "What is asyncio.TaskGroup?"
# Three sentences from one page, about 40 tokens each: max_tokens 80 keeps the first.
LONG_QUESTION = "How do I create a virtual environment with venv?"
GROUNDING = {"freshness_days": 3650, "min_sources": 1}

# LiteLLM fetches a model price list from the internet at import; the tests run offline.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(scope="module")
def service() -> Iterator[ServiceServer]:
    svc = ServiceServer(api_keys=[KEY, OTHER_KEY])
    svc.start()
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture(scope="module")
def base_url(service: ServiceServer) -> str:
    return service.url + "/v1"
