"""PDF text extraction on a PDF built in the test (no files on disk)."""

from __future__ import annotations

from app.extract import extract_pdf


def make_pdf(pages: list[list[str]]) -> bytes:
    """A minimal valid PDF: one Helvetica text object per line, correct xref offsets."""
    objects: list[bytes] = []
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    font_id = 3 + 2 * len(pages)
    for i, lines in enumerate(pages):
        ops = ["BT /F1 12 Tf 72 720 Td 16 TL"]
        for line in lines:
            ops.append(f"({line}) Tj T*" if line else "T*")
        ops.append("ET")
        stream = "\n".join(ops).encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{off:010d} 00000 n \n".encode() for off in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def test_pdf_text_extracted_per_page() -> None:
    data = make_pdf(
        [
            ["Release notes for version 3.2", "", "The scheduler now supports deadlines for every job."],
            ["Second page mentions the migration guide and the removal of legacy flags."],
        ]
    )
    result = extract_pdf(data)
    text = result.text
    assert "Release notes for version 3.2" in text
    assert "scheduler now supports deadlines" in text
    assert "migration guide" in text
    assert all(b.kind == "paragraph" for b in result.blocks)


def test_pdf_max_pages_bounds_the_work() -> None:
    data = make_pdf([["Page one text here."], ["Page two text here."], ["Page three text here."]])
    text = extract_pdf(data, max_pages=2).text
    assert "Page two" in text and "Page three" not in text


def test_garbage_is_an_empty_shell_not_an_error() -> None:
    result = extract_pdf(b"%PDF-1.4 this is not really a pdf")
    assert result.blocks == [] and result.is_shell
