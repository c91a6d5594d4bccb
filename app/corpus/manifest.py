"""corpus.json: how the files of one corpus folder map to canonical URLs and who is authoritative.

A folder's corpus.json applies to every file below it until a sub-folder has its own corpus.json
(so one corpus may hold several publishers). Format (every key optional):

    {
      "title": "Python 3.11 documentation",
      "base_url": "https://docs.python.org/3.11/",   # URL = base_url + path relative to this folder
      "primary_domains": ["python.org"],            # registrable domains that are the authority
      "exclude": ["PROVENANCE.md", "COPYRIGHT*"],   # fnmatch globs (relative paths) not indexed
      "documents": {"changes.txt": {"url": "https://...", "title": "..."}}   # per-file overrides
    }

Without base_url a file's URL is its file:// URI. A trailing ".gz" is dropped from the URL
(Debian ships some pages gzipped).
"""
from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from pathlib import Path

from app.errors import GroundingError

MANIFEST_NAME = "corpus.json"


@dataclass(slots=True)
class DocumentOverride:
    url: str | None = None
    title: str | None = None


@dataclass(slots=True)
class CorpusManifest:
    root: Path  # the folder holding corpus.json (or the corpus root when there is none)
    title: str = ""
    base_url: str | None = None
    primary_domains: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    documents: dict[str, DocumentOverride] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: Path) -> "CorpusManifest | None":
        path = folder / MANIFEST_NAME
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise GroundingError(f"unreadable corpus manifest {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise GroundingError(f"corpus manifest {path} must be a JSON object")
        base_url = data.get("base_url")
        if base_url and not base_url.endswith("/"):
            base_url += "/"
        documents = {
            rel: DocumentOverride(url=spec.get("url"), title=spec.get("title"))
            for rel, spec in (data.get("documents") or {}).items()
        }
        return cls(
            root=folder,
            title=str(data.get("title") or ""),
            base_url=base_url,
            primary_domains=[d.lower().strip(".") for d in data.get("primary_domains") or []],
            exclude=list(data.get("exclude") or []),
            documents=documents,
        )

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def excluded(self, path: Path) -> bool:
        rel = self.relative(path)
        return path.name == MANIFEST_NAME or any(
            fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(path.name, pattern) for pattern in self.exclude
        )

    def url_for(self, path: Path) -> str:
        rel = self.relative(path)
        override = self.documents.get(rel)
        if override and override.url:
            return override.url
        if rel.endswith(".gz"):
            rel = rel[:-3]
        if self.base_url:
            return self.base_url + rel
        return path.with_name(path.name.removesuffix(".gz")).resolve().as_uri()

    def title_for(self, path: Path) -> str | None:
        override = self.documents.get(self.relative(path))
        return override.title if override else None
