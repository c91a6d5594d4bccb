"""Turning fetched bytes into text blocks and dates: HTML main content, PDF text, page dates."""

from app.extract.dates import find_page_dates
from app.extract.html import Extraction, extract_html
from app.extract.pdf import extract_pdf
from app.extract.text_clean import content_hash, strip_invisible

__all__ = ["Extraction", "content_hash", "extract_html", "extract_pdf", "find_page_dates", "strip_invisible"]
