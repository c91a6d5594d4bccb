"""Imported once by the fork server of the extraction processes (GA_EXTRACT_PROCESSES,
app/cpu_processes.py) and by nothing else: the extractors loaded and warm there, so every child forked
from it starts with them (copy-on-write) instead of paying ~2 s of CPU for htmldate's locales."""

from __future__ import annotations

from app.extract.dates import warm_up_dates
from app.extract.fallback import warm_up_fallback
from app.pipeline.extract import extract_in_child  # noqa: F401  # what the children run

warm_up_dates()
warm_up_fallback()
