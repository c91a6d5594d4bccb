"""Builders for unit tests of the pipeline stages."""

from __future__ import annotations

from datetime import UTC, date, datetime

from app.api.protocol import GroundingOptions
from app.domain.types import Document, Evidence, PageDates, TextBlock
from app.extract.text_clean import content_hash
from app.pipeline.context import Options, RunContext
from app.settings import Settings
from app.urls import registrable_domain

TODAY = date(2026, 11, 29)


def make_ctx(**grounding) -> RunContext:
    settings = Settings()
    opts = Options.resolve(GroundingOptions(**grounding), settings)
    return RunContext(request_id="req_test", options=opts, settings=settings, today=TODAY)


def make_doc(
    url: str,
    paragraphs: list[str],
    *,
    published: date | None = None,
    rank: int = 0,
    title: str = "A page",
    primary: bool = False,
) -> Document:
    blocks = [TextBlock("heading", title, 1)] + [TextBlock("paragraph", p) for p in paragraphs]
    return Document(
        url=url,
        title=title,
        domain=registrable_domain(url),
        blocks=blocks,
        dates=PageDates(published=published, source="meta" if published else "unknown"),
        fetched_at=datetime.now(UTC),
        content_hash=content_hash("\n".join(b.text for b in blocks)),  # as extraction computes it
        rank=rank,
        primary=primary,
    )


def make_evidence(
    span_id: str, text: str, *, url: str | None = None, published: date | None = None, primary: bool = False
) -> Evidence:
    url = url or f"https://site{span_id.lower()}.example/{span_id}"
    return Evidence(
        span_id=span_id,
        url=url,
        title=f"Title {span_id}",
        domain=registrable_domain(url),
        text=text,
        published_at=published,
        date_source="meta" if published else "unknown",
        fetched_at=None,
        score=1.0,
        primary=primary,
        tokens=len(text) // 4,
    )
