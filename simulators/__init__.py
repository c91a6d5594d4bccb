"""Real local upstream servers for integration tests and benchmarks (no pytest imports here).

Every server listens on 127.0.0.1 (the web also on 127.0.0.2…) with an ephemeral port, runs in a
background thread with its own event loop, and is a sync and async context manager. See README.md.
"""

from __future__ import annotations

from typing import Any

from ._threaded import ThreadedUvicorn, free_port
from .fault_proxy import FaultProxy as FaultProxy
from .hostile_pages import add_hidden_text_page as add_hidden_text_page
from .openai_chat import ChatRequest, OpenAIChatServer, error_body
from .proxy import ForwardProxy, ProxiedRequest
from .redis_server import RedisForTests, RedisUnavailable
from .searxng import ScriptedSearch, SearchRequest, SearxngServer, searx_result
from .service import ServiceServer
from .web import WebRequest, WebServer
from .web_pages import CANARY, HOSTILE_INSTRUCTION, article_html
from .web_site import Page, Site, add_near_duplicates_across


def make_openai_client(service_or_url: Any, *, api_key: str = "test", sync: bool = False, **kw: Any):
    """An openai SDK client pointed at a running service (or any base URL without /v1)."""
    import openai

    base = getattr(service_or_url, "url", service_or_url).rstrip("/") + "/v1"
    cls = openai.OpenAI if sync else openai.AsyncOpenAI
    return cls(base_url=base, api_key=api_key, **kw)


__all__ = [
    "CANARY",
    "HOSTILE_INSTRUCTION",
    "ChatRequest",
    "ForwardProxy",
    "OpenAIChatServer",
    "Page",
    "ProxiedRequest",
    "RedisForTests",
    "RedisUnavailable",
    "ScriptedSearch",
    "SearchRequest",
    "SearxngServer",
    "ServiceServer",
    "Site",
    "ThreadedUvicorn",
    "WebRequest",
    "WebServer",
    "add_near_duplicates_across",
    "article_html",
    "error_body",
    "free_port",
    "make_openai_client",
    "searx_result",
]
