"""Provider-held pages (Tavily raw_content, the local corpus): text a JSON API may legally carry is
extracted, never a crash of the request."""

from __future__ import annotations

import pytest

from app.domain.types import SearchHit
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
