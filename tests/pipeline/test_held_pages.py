"""Provider-held pages (Tavily raw_content, the local corpus): text a JSON API may legally carry is
extracted, never a crash of the request."""

from __future__ import annotations

import pytest

from app.cache.extraction_memo import ExtractionMemo
from app.domain.types import FetchReason, SearchHit, content_digest
from app.pipeline.fetch import fetch_documents
from tests.pipeline.helpers import make_ctx

TEXT = (
    "Orbit Analytics released version 4.2 of its data platform on Tuesday, adding streaming joins. "
    "The company said the release cuts query latency by forty percent for typical dashboards. "
) * 3


@pytest.mark.asyncio
async def test_a_lone_surrogate_in_held_text_is_extracted_not_raised():
    # JSON may carry "\ud800" (an unpaired surrogate escape); json.loads turns it into a str that
    # strict UTF-8 cannot encode.
    hit = SearchHit(
        url="https://news.example.com/orbit",
        title="Orbit 4.2",
        raw_content=TEXT + "Broken \ud800 character.",
        raw_content_type="text/plain",
    )
    retrieval = await fetch_documents([hit], make_ctx(), fetcher=None)  # held pages never fetch
    assert len(retrieval.documents) == 1
    assert "streaming joins" in retrieval.documents[0].text


def _lazy_hit(reads: list[str], text: str | None = TEXT) -> SearchHit:
    async def read_page() -> tuple[str, str] | None:
        reads.append("read")
        return None if text is None else (text, "text/plain")

    return SearchHit(
        url="https://docs.example.com/orbit",
        title="Orbit 4.2",
        raw_content_type="text/plain",
        raw_content_digest=content_digest(TEXT),
        read_page=read_page,
    )


@pytest.mark.asyncio
async def test_a_held_page_is_read_only_when_the_extraction_memo_lacks_it():
    memo, reads = ExtractionMemo(), []
    first = await fetch_documents([_lazy_hit(reads)], make_ctx(), fetcher=None, memo=memo)
    assert reads == ["read"] and "streaming joins" in first.documents[0].text
    again = await fetch_documents([_lazy_hit(reads)], make_ctx(), fetcher=None, memo=memo)
    assert reads == ["read"], "a remembered extraction needs no page"
    assert again.documents[0].text == first.documents[0].text
    assert again.pages[0].reason is FetchReason.from_provider


@pytest.mark.asyncio
@pytest.mark.parametrize("with_memo", [True, False])
async def test_a_held_page_the_provider_no_longer_has_is_lost_not_fetched(with_memo):
    reads: list[str] = []
    memo = ExtractionMemo() if with_memo else None
    # fetcher=None: a fetch attempt would raise inside the stage and show as another reason
    retrieval = await fetch_documents([_lazy_hit(reads, text=None)], make_ctx(), fetcher=None, memo=memo)
    assert reads == ["read"] and retrieval.documents == []
    page = retrieval.pages[0]
    assert page.reason is FetchReason.network_error and page.detail == "provider_page_missing"
