"""Embedded local corpus: a full-text index (SQLite FTS5) over a folder of pages or WARC files that
serves both as a search provider and as the page source, with no network."""
from app.corpus.index import CorpusHit, CorpusIndex, IndexStats

__all__ = ["CorpusHit", "CorpusIndex", "IndexStats"]
