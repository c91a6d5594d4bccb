"""trafilatura and htmldate parse with module-level lxml parsers, which are not thread-safe; the
service extracts pages in worker threads. Many threads at once must not crash the process (it did:
segfaults in etree.so under load). Run in a subprocess, so that a crash fails this test instead of
killing the test run."""

from __future__ import annotations

import subprocess
import sys

from app.settings import REPO_ROOT

SCRIPT = """
import threading
from pathlib import Path
from app.extract.fallback import trafilatura_blocks
from app.extract.dates import _htmldate_fallback
pages = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(Path("corpus/sample").rglob("*.html"))[:12]]
def work(k):
    for i in range(6):
        page = pages[(k + i) % len(pages)]
        trafilatura_blocks(page[:200_000])
        _htmldate_fallback(page[:50_000])
threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
[t.start() for t in threads]
[t.join() for t in threads]
print("done")
"""


def test_concurrent_lxml_extraction_does_not_crash_the_process():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "done" in proc.stdout, (proc.returncode, proc.stderr[-2000:])
