"""What the pipeline needs of a page fetcher (app/fetch/fetcher.py is the built-in one)."""

from __future__ import annotations

from typing import Protocol

from app.domain.types import FetchedPage


class Fetcher(Protocol):
    async def fetch(
        self, url: str, *, deadline_s: float | None = None, etag: str | None = None, last_modified: str | None = None
    ) -> FetchedPage: ...

    async def aclose(self) -> None: ...
