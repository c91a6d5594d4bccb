"""Real pages for labelled cases: the article-extraction benchmark's news pages, read from
../shared/bench-data/aeb (never copied into the repository), served as they are."""

from __future__ import annotations

import gzip
import json
import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from eval.cases import CaseError, PageSpec

AEB_DIR = Path(__file__).resolve().parents[2] / "shared" / "bench-data" / "aeb"
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.I | re.S)


@lru_cache(maxsize=1)
def ground_truth() -> dict[str, dict]:
    path = AEB_DIR / "ground-truth.json"
    if not path.is_file():
        raise CaseError(f"real pages need {path} (../shared/bench-data beside the repository)")
    return json.loads(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=512)
def aeb_html(page_id: str) -> bytes:
    return gzip.decompress((AEB_DIR / "html" / f"{page_id}.html.gz").read_bytes())


def aeb_text(page_id: str) -> str:
    """The benchmark's human-checked main text of the page."""
    return ground_truth()[page_id]["articleBody"]


def aeb_page(page_id: str, where: str = "") -> PageSpec:
    gt = ground_truth()
    if page_id not in gt:
        raise CaseError(f"{where}: no aeb page {page_id!r}")
    url = urlsplit(gt[page_id]["url"])
    host = (url.hostname or "site.test").removeprefix("www.")
    path = url.path or "/"
    m = _TITLE.search(aeb_html(page_id)[:200_000])
    title = re.sub(r"\s+", " ", m.group(1).decode("utf-8", "replace")).strip() if m else host
    # paragraphs carry the gold text: the harness checks claims against what the page really says.
    return PageSpec(site=host, path=path, title=title[:200], paragraphs=[aeb_text(page_id)], kind="real", aeb=page_id)


CORPUS_DIR = Path(__file__).resolve().parents[1] / "corpus" / "sample"


@lru_cache(maxsize=256)
def corpus_text(url: str) -> str:
    """The visible text of an embedded-corpus page (the harness's own extraction, lxml), so claims
    on docs cases are checked against the page, not against the service's passages."""
    manifest = json.loads((CORPUS_DIR / "corpus.json").read_text(encoding="utf-8"))
    base = manifest["base_url"]
    if not url.startswith(base):
        return ""
    rel = url[len(base) :].split("#")[0] or "index.html"
    for candidate in (CORPUS_DIR / rel, CORPUS_DIR / (rel + ".gz")):
        if candidate.is_file():
            raw = candidate.read_bytes()
            if candidate.suffix == ".gz":
                raw = gzip.decompress(raw)
            import lxml.html

            tree = lxml.html.fromstring(raw)
            for bad in tree.xpath("//script|//style"):
                bad.drop_tree()
            return " ".join(tree.text_content().split())
    return ""
