"""Safe, bounded, polite page fetching (docs/FETCHING.md)."""

from app.fetch.base import Fetcher
from app.fetch.fetcher import PageFetcher

__all__ = ["Fetcher", "PageFetcher"]
