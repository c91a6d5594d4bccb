"""Prometheus metrics: prefixed module constants, bounded label values only.

Works unchanged with several uvicorn workers: when PROMETHEUS_MULTIPROC_DIR is set (read by
prometheus_client itself, before this module is imported) every value lives in a per-process mmap
file and app/metrics_export.py sums them at scrape time. Gauges therefore say how to combine workers.
"""

from __future__ import annotations

import gc
import time
from functools import lru_cache

from prometheus_client import Counter, Gauge, Histogram

PREFIX = "grounded_"

# --- answers (app/api/chat.py, app/pipeline/*)
REQUESTS = Counter(PREFIX + "requests_total", "Answer requests", ["route", "status", "grounding_status"])
ABSTENTIONS = Counter(PREFIX + "abstentions_total", "Abstentions by reason", ["reason"])
STAGE_SECONDS = Histogram(
    PREFIX + "stage_duration_seconds",
    "Pipeline stage latency",
    ["stage"],
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
UPSTREAM_CALLS = Counter(
    PREFIX + "upstream_calls_total", "Calls to upstream providers", ["kind", "provider", "outcome"]
)
FETCHES = Counter(PREFIX + "fetches_total", "Page fetch outcomes", ["reason"])
CACHE_LOOKUPS = Counter(PREFIX + "cache_lookups_total", "Cache lookups", ["layer", "result"])
CACHE_ERRORS = Counter(PREFIX + "cache_errors_total", "Cache backend failures", ["layer"])
# Last write wins across workers: each one sets it on every Redis call it makes.
REDIS_UP = Gauge(PREFIX + "redis_up", "1 when the last Redis call succeeded", multiprocess_mode="mostrecent")
TOKENS = Counter(PREFIX + "tokens_total", "Tokens by model and kind", ["model", "kind"])
COST_USD = Counter(PREFIX + "cost_usd_total", "Spend in USD by kind", ["kind"])
CITATIONS_DROPPED = Counter(PREFIX + "citations_dropped_total", "Citations removed in code", ["reason"])
UNSUPPORTED_SENTENCES = Counter(PREFIX + "unsupported_sentences_total", "Sentences failing verification", ["action"])
# verdict: entailed / contradicted (the sentence settled) / unsure (left to the judge) / error
ENTAILMENT_VERDICTS = Counter(
    PREFIX + "entailment_verdicts_total",
    "Entailment model verdicts on sentences lexical support left open",
    ["verdict"],
)
# Summed over live workers only: a dead worker's requests are no longer in flight.
IN_FLIGHT = Gauge(PREFIX + "requests_in_flight", "Requests being answered", multiprocess_mode="livesum")
ROUTING_FAULTS = Counter(PREFIX + "routing_faults_total", "Planner asked for search but gave no usable query")

# --- HTTP, every route (app/metrics_export.py HttpMetricsMiddleware). `route` is the route
# template (e.g. /v1/traces/{trace_id}) or "unmatched": never the raw path.
HTTP_REQUESTS = Counter(
    PREFIX + "http_requests_total",
    "HTTP requests by route template, method and status class",
    ["route", "method", "status_class"],
)
REQUEST_SECONDS = Histogram(
    PREFIX + "request_duration_seconds",
    "HTTP request latency, until the last body byte is sent",
    ["route"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 8, 12, 16, 20, 30, 60),
)

# --- spend by model (app/pipeline/context.py Cost.add_tokens, next to COST_USD kind="llm")
LLM_COST_USD = Counter(PREFIX + "llm_cost_usd_total", "LLM spend in USD by model", ["model"])

# --- upstream resilience (app/providers/retry.py, app/providers/breaker.py). `provider` is a
# configured search provider or model name; `kind` is search | llm.
CIRCUIT_STATE = Gauge(
    PREFIX + "circuit_state",
    "Circuit breaker state per upstream: 0 closed, 1 half-open, 2 open",
    ["kind", "provider"],
    multiprocess_mode="livemax",
)
CIRCUIT_REJECTIONS = Counter(
    PREFIX + "circuit_rejections_total", "Calls failed fast by an open circuit", ["kind", "provider"]
)
UPSTREAM_RETRIES = Counter(
    PREFIX + "upstream_retries_total",
    "Upstream calls retried, by reason (timeout, connection, rate_limited, retry_after, server_error, bad_response)",
    ["kind", "provider", "reason"],
)
FALLBACKS = Counter(PREFIX + "fallbacks_total", "Fallbacks used (search provider, model, extractive)", ["stage", "to"])


@lru_cache(maxsize=4096)
def labelled(metric, *values: str):
    """A metric's child for these label values (in labelnames order), built once: `labels()` checks
    and locks on every call, which shows on the answer-cache hit path. Label values are bounded, so
    the cache is too."""
    return metric.labels(*values)


# --- admission control (app/api/admission.py)
ADMISSION_QUEUED = Gauge(PREFIX + "admission_queued", "Answer requests waiting for a slot", multiprocess_mode="livesum")
ADMISSION_REFUSED = Counter(
    PREFIX + "admission_refused_total", "Answer requests refused with 503 (overload)", ["reason"]
)
CLIENT_DISCONNECTS = Counter(
    PREFIX + "client_disconnects_total", "Answers cancelled because the client went away before the response"
)
EXTRACTION_MEMO = Counter(
    PREFIX + "extraction_memo_total", "Provider-held pages looked up in the extraction memo", ["outcome"]
)  # outcome: hit | miss
HIT_PATH = Counter(
    PREFIX + "hit_path_total", "Repeated requests answered before routing (app/api/hit_path.py)", ["outcome"]
)  # outcome: served | fell_through (the cached answer was gone or its evidence changed)
# Per-process memos (app/cache/lru.py ByteLRU) and the in-process cache, by store: what they hold
# against their byte budgets, summed over live workers (compare with process RSS).
MEMO_BYTES = Gauge(
    PREFIX + "memory_store_bytes", "Bytes held by an in-process store, by store", ["store"], multiprocess_mode="livesum"
)  # store: extraction | passages | shingles | cache | quota | token_counts | hit_recipes


# --- the garbage collector's pauses (watch_gc): every request in flight in the process waits them out
GC_PAUSE_SECONDS = Histogram(
    PREFIX + "gc_pause_seconds",
    "Garbage collections by generation: how long each held the interpreter",
    ["generation"],
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1),
)
_gc_started = [0.0]


def _time_gc(phase: str, info: dict) -> None:
    if phase == "start":
        _gc_started[0] = time.perf_counter()
    else:
        GC_PAUSE_SECONDS.labels(generation=str(info["generation"])).observe(time.perf_counter() - _gc_started[0])


def watch_gc() -> None:
    """Time every collection of this process (idempotent)."""
    if _time_gc not in gc.callbacks:
        gc.callbacks.append(_time_gc)


# --- CPU-bound calls in worker processes (app/cpu_processes.py, GA_EXTRACT_PROCESSES)
CPU_PROCESS_DEATHS = Counter(
    PREFIX + "cpu_process_deaths_total", "Worker processes that died during a call (their pool was rebuilt)"
)
