"""Answer cache: whole responses for freshness classes that tolerate it.

Keyed by the normalised conversation and the options that change an answer; an entry also records
the versions (content hashes) of the pages its evidence came from, and is served only while the page
cache still holds those same versions — a page that changed invalidates every answer built on it.
"""

from __future__ import annotations

import hashlib
import json

import orjson

from app.cache.page_cache import version_key

# Options that cannot change an answer stay out of the key (cache policy, deadline, budgets).
_KEY_OPTIONS = (
    "mode",
    "freshness_days",
    "include_domains",
    "exclude_domains",
    "primary_domains",
    "max_queries",
    "max_results",
    "max_fetches",
    "max_evidence",
    "token_budget",
    "min_sources",
    "require_primary",
    "verification",
    "on_conflict",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "max_tokens",
)
MIN_CACHEABLE_FRESHNESS_DAYS = 3  # live data (prices, status: a window of 1-2 days) is never served from cache


def answer_key(turns: list[tuple[str, str]], options, settings) -> str:
    convo = [(r, " ".join(t.lower().split())) for r, t in turns]
    opts = {k: getattr(options, k) for k in _KEY_OPTIONS}
    # Who composes and who verifies: an answer verified by another judge or entailment model may keep or
    # drop other sentences.
    verifiers = [settings.judging_model if settings.llm_enabled else None, settings.support_model]
    if settings.support_model_enabled:
        verifiers.append(str(settings.support_model_path))
    key = [
        convo,
        opts,
        settings.composer_model if settings.llm_enabled else "extractive",
        settings.search_providers,
        *verifiers,
    ]
    try:
        material = orjson.dumps(key, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer past 64 bits in an option: the stdlib encoder takes any int
        material = json.dumps(key, sort_keys=True, default=str).encode()
    return "answer:" + hashlib.sha256(material).hexdigest()


def cacheable(freshness_days: int) -> bool:
    return freshness_days >= MIN_CACHEABLE_FRESHNESS_DAYS


def encode_answer(body: dict, versions: dict[str, str]) -> bytes:
    return orjson.dumps({"body": body, "versions": versions})


async def still_valid(versions: dict[str, str], cache) -> bool:
    """Every fetched page the answer used is still the same version in the page cache."""
    if not versions:
        return True  # evidence held by a provider (the local corpus), not the page cache
    urls = list(versions)
    current = await cache.get_many([version_key(u) for u in urls])
    return all(raw is not None and raw.decode() == versions[u] for u, raw in zip(urls, current))


def decode_answer(raw: bytes) -> tuple[dict, dict[str, str]] | None:
    try:
        data = orjson.loads(raw)
        return data["body"], data["versions"]
    except Exception:
        return None


def restamp(body: dict, *, request_id: str, created: int, how: str) -> dict:
    """A cached body as a new response: its own ids, zero cost, and saying it came from cache."""
    # Shallow copies of the levels that change: the body was decoded for this request alone, or is
    # shared with coalesced followers, whose other parts are never mutated.
    g = dict(body["grounding"])
    out = {**body, "id": "chatcmpl-" + request_id.removeprefix("req_"), "created": created, "grounding": g}
    g["request_id"] = request_id
    g["cost"] = {
        "usd": 0.0,
        "tokens": {},
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "search_calls": 0,
        "fetches": 0,
        "by_stage_usd": {},
        "cached": True,
        "original_usd": g["cost"].get("usd", 0.0),
    }
    g["cache"] = {"answer": how}
    return out
