"""What the keyed web search APIs (Brave, Tavily, Serper) share: one call with the error split of
app/errors.py, the freshness buckets they all understand, and tolerant parsing of result dates.

Error split: a timeout, a refused connection, 429 and 5xx are technical (retried by
app/providers/retry.py, honouring `Retry-After`, then the chain moves on); any other non-200 (bad
key, bad request, quota used up) is logical.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from app.domain.types import SearchHit
from app.errors import GroundingError, ProviderLogicalError, ProviderTechnicalError
from app.extract.date_parse import MIN_DATE, parse_human_date
from app.providers.retry import RetryLater, retry_after_from_headers

MAX_DETAIL_CHARS = 200
# (status, detail) -> the error for a provider-specific status, or None for the common mapping.
Classifier = Callable[[int, str], "ProviderLogicalError | ProviderTechnicalError | None"]


def require_key(provider: str, key: str | None, env_var: str) -> str:
    """Fail at start-up, not at the first question, when a configured provider has no key."""
    if not key or not key.strip():
        raise GroundingError(f"GA_SEARCH_PROVIDERS includes {provider} but {env_var} is not set")
    return key.strip()


async def call_json_api(
    client: httpx.AsyncClient,
    provider: str,
    method: str,
    url: str,
    *,
    timeout: float,
    headers: dict[str, str],
    params: dict[str, Any] | None = None,
    json: dict[str, Any] | None = None,
    classify: Classifier | None = None,
) -> dict:
    """Send one request and return its JSON object, or raise the provider error it deserves.
    `classify(status, detail)` may claim a provider-specific status first (e.g. Tavily's 432)."""
    try:
        resp = await client.request(method, url, params=params, json=json, headers=headers, timeout=timeout)
    except httpx.TimeoutException as exc:
        raise ProviderTechnicalError(f"{provider} timed out", provider=provider) from exc
    except httpx.HTTPError as exc:
        raise ProviderTechnicalError(f"{provider} unreachable: {type(exc).__name__}", provider=provider) from exc
    except (AttributeError, OSError, RuntimeError) as exc:
        # A connection reset right after connect can surface from inside the pool as a bare
        # AttributeError/OSError (httpcore + anyio): a network failure, retried and counted as one.
        raise ProviderTechnicalError(f"{provider} connection failed: {type(exc).__name__}", provider=provider) from exc
    status = resp.status_code
    if status != 200:
        detail = error_detail(resp)
        claimed = classify(status, detail) if classify else None
        if claimed is not None:
            raise claimed
        suffix = f": {detail}" if detail else ""
        wait = retry_after_from_headers(resp.headers)
        if status == 429:
            raise RetryLater(
                f"{provider} rate limit (429){f', retry after {wait:g}s' if wait is not None else ''}",
                provider=provider,
                retry_after=wait,
            )
        if status >= 500:
            raise RetryLater(f"{provider} answered {status}", provider=provider, retry_after=wait)
        if status in (401, 403):
            raise ProviderLogicalError(f"{provider} rejected the API key ({status}){suffix}", provider=provider)
        raise ProviderLogicalError(f"{provider} answered {status}{suffix}", provider=provider)
    try:
        data = resp.json()
    except ValueError as exc:
        raise ProviderTechnicalError(f"{provider} sent invalid JSON", provider=provider) from exc
    if not isinstance(data, dict):
        raise ProviderTechnicalError(f"{provider} sent JSON that is not an object", provider=provider)
    return data


def error_detail(resp: httpx.Response) -> str:
    """A short human message from the error body shapes these APIs use:
    Brave {"error": {"code", "detail"}}, Tavily {"detail": {"error"}}, Serper {"message"}."""
    try:
        body = resp.json()
    except ValueError:
        return ""
    parts: list[str] = []
    if isinstance(body, dict):
        err, det = body.get("error"), body.get("detail")
        if isinstance(err, dict):
            parts += [str(err[k]) for k in ("code", "detail") if err.get(k)]
        elif isinstance(err, str):
            parts.append(err)
        if isinstance(det, dict) and det.get("error"):
            parts.append(str(det["error"]))
        elif isinstance(det, str):
            parts.append(det)
        if isinstance(body.get("message"), str):
            parts.append(body["message"])
    return " ".join(parts)[:MAX_DETAIL_CHARS]


def freshness_bucket(days: int | None) -> str | None:
    """day / week / month / year, rounded up so the window is never narrower than asked; None
    when unlimited or longer than a year (the pipeline still checks dates itself)."""
    if days is None:
        return None
    for limit, name in ((1, "day"), (7, "week"), (31, "month"), (366, "year")):
        if days <= limit:
            return name
    return None


_TAG_RE = re.compile(r"<[^>]{0,200}>")


def plain_text(value: Any) -> str:
    """Snippets arrive with highlight markup (<strong>) and entities; ranking wants words."""
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(_TAG_RE.sub("", value)).split())


_AGO_RE = re.compile(r"^(\d+|an?|one)\s+(minute|min|hour|hr|day|week|month|year)s?\s+ago$", re.I)
_UNIT_DAYS = {
    "minute": 1 / 1440,
    "min": 1 / 1440,
    "hour": 1 / 24,
    "hr": 1 / 24,
    "day": 1,
    "week": 7,
    "month": 30,
    "year": 365,
}


def parse_result_date(value: Any, now: datetime | None = None) -> datetime | None:
    """ISO stamps ("2025-01-05T10:00:00", "...Z"), relative ages ("3 days ago", "yesterday") and
    month-name dates ("Jan 5, 2025"). Anything else, or a date in the future, gives None."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    now = now or datetime.now(UTC)
    found: datetime | None = None
    try:
        found = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        low = text.lower()
        if low in ("yesterday", "today", "just now"):
            found = now - timedelta(days=1 if low == "yesterday" else 0)
        elif m := _AGO_RE.match(low):
            n = 1 if m[1] in ("a", "an", "one") else int(m[1])
            found = now - timedelta(days=n * _UNIT_DAYS[m[2]])
        elif stamp := _rfc2822(text):
            found = stamp
        elif day := parse_human_date(text):
            found = datetime(day.year, day.month, day.day, tzinfo=UTC)
    if found is None:
        return None
    if found.tzinfo is None:
        found = found.replace(tzinfo=UTC)  # these APIs send naive stamps in UTC
    if found.date() < MIN_DATE or found > now + timedelta(days=1):
        return None
    return found


def _rfc2822(text: str) -> datetime | None:
    """ "Wed, 04 Dec 2024 10:30:00 GMT" (Tavily's published_date)."""
    if "," not in text or ":" not in text:
        return None
    try:
        return parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None


def with_site_operators(text: str, include: list[str], exclude: list[str], *, max_excludes: int = 0) -> str:
    """Append `site:` for a single include domain (like SearXNG) and up to `max_excludes`
    `-site:` terms. Filters are enforced in code afterwards either way; this only spends the
    engine's result slots better."""
    if len(include) == 1 and "site:" not in text:
        text = f"{text} site:{include[0]}"
    for domain in exclude[:max_excludes]:
        text = f"{text} -site:{domain}"
    return text


def result_hits(
    items: Any, count: int, provider: str, *, url: str, title: str, snippet: str, dates: tuple[str, ...]
) -> list[tuple[dict, SearchHit]]:
    """(item, hit) for each usable result: a dict with an http(s) URL under `url`; `dates` are the
    fields tried in order for a publication date. Ranks are 0-based over the kept results."""
    out: list[tuple[dict, SearchHit]] = []
    for item in (items or [])[:count]:
        if not isinstance(item, dict):
            continue
        link = item.get(url)
        if not isinstance(link, str) or not link.startswith(("http://", "https://")):
            continue
        published = next((d for d in (parse_result_date(item.get(f)) for f in dates) if d), None)
        out.append(
            (
                item,
                SearchHit(
                    url=link,
                    title=plain_text(item.get(title)),
                    snippet=plain_text(item.get(snippet)),
                    rank=len(out),
                    provider=provider,
                    published_at=published,
                ),
            )
        )
    return out
