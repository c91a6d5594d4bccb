"""Text of a PDF (pypdf): each page's text split into paragraph blocks, bounded in pages."""

from __future__ import annotations

import io
import logging
import re

from app.domain.types import TextBlock
from app.extract.html import MIN_MAIN_CHARS, Extraction
from app.extract.text_clean import collapse_spaces, strip_invisible

log = logging.getLogger(__name__)
_PARAGRAPH_BREAK_RE = re.compile(r"\n\s*\n")


def extract_pdf(data: bytes, max_pages: int = 30) -> Extraction:
    """Paragraph blocks from the first ``max_pages`` pages. A PDF that cannot be read, or that has
    no text layer (a scan), comes back empty and flagged as a shell."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = reader.pages[:max_pages]
        title = ""
        if reader.metadata and reader.metadata.title:
            title = collapse_spaces(strip_invisible(str(reader.metadata.title)))
    except (PdfReadError, ValueError, OSError, KeyError) as exc:
        log.info("unreadable pdf: %s", exc)
        return Extraction(title="", blocks=[], density=0.0, is_shell=True)
    blocks: list[TextBlock] = []
    for page in pages:
        try:
            text = page.extract_text() or ""
        except Exception as exc:  # pypdf raises many types on damaged content streams
            log.info("pdf page skipped: %s", exc)
            continue
        for chunk in _PARAGRAPH_BREAK_RE.split(strip_invisible(text)):
            paragraph = collapse_spaces(chunk)
            if paragraph:
                blocks.append(TextBlock(kind="paragraph", text=paragraph))
    chars = sum(len(b.text) for b in blocks)
    if not title and blocks:
        title = blocks[0].text[:200]
    return Extraction(title=title, blocks=blocks, density=1.0 if blocks else 0.0, is_shell=chars < MIN_MAIN_CHARS)
