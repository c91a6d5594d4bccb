"""On-disk index: reuse while the files are unchanged, rebuild when they change; the CLI."""
from __future__ import annotations

import os

import pytest

from app.corpus.__main__ import main
from app.corpus.index import CorpusIndex
from app.errors import GroundingError


def test_reuses_when_unchanged_and_rebuilds_when_a_file_changes(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    page = src / "a.txt"
    page.write_text("Cormorants dry their wings\n")
    out = tmp_path / "index.sqlite"
    first = CorpusIndex.build(src, out)
    assert not first.stats.reused and first.stats.documents == 1
    first.close()
    second = CorpusIndex.build(src, out)
    assert second.stats.reused and second.search("cormorants")
    second.close()
    page.write_text("Shags dry their wings too\n")
    st = page.stat()
    os.utime(page, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    third = CorpusIndex.build(src, out)
    assert not third.stats.reused
    assert third.search("shags") and not third.search("cormorants")
    third.close()
    assert not list(tmp_path.glob("*.tmp"))


def test_open_refuses_what_is_not_an_index(tmp_path):
    bogus = tmp_path / "x.sqlite"
    bogus.write_bytes(b"not a database at all" * 100)
    with pytest.raises(GroundingError):
        CorpusIndex.open(bogus)
    with pytest.raises(GroundingError):
        CorpusIndex.open(tmp_path / "absent.sqlite")
    with pytest.raises(GroundingError):
        CorpusIndex.build(tmp_path / "absent-folder")


def test_cli_index_then_search(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    (src / "p.md").write_text("# Puffins\n\nPuffins carry many fish at once.\n")
    out = tmp_path / "i.sqlite"
    assert main(["index", str(src), "--out", str(out)]) == 0
    assert "built: 1 documents" in capsys.readouterr().out
    assert main(["index", str(src), "--out", str(out)]) == 0
    assert "reused" in capsys.readouterr().out
    assert main(["search", str(out), "how many fish do puffins carry?", "--json"]) == 0
    printed = capsys.readouterr().out
    assert '"title": "Puffins"' in printed and '"rank": 0' in printed
    assert main(["search", str(src), "puffins"]) == 0  # a folder is indexed in memory
    assert "1 hits" in capsys.readouterr().out
    assert main(["search", str(tmp_path / "nope"), "x"]) == 2
