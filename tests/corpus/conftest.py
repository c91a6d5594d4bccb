from __future__ import annotations

from pathlib import Path

import pytest

from app.corpus.index import CorpusIndex
from app.settings import REPO_ROOT

SAMPLE_DIR = REPO_ROOT / "corpus" / "sample"


@pytest.fixture(scope="session")
def sample_index() -> CorpusIndex:
    index = CorpusIndex.build(SAMPLE_DIR)
    yield index
    index.close()


@pytest.fixture(scope="session")
def sample_dir() -> Path:
    return SAMPLE_DIR
