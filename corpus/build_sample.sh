#!/usr/bin/env bash
# Rebuilds corpus/sample/ from Debian's python3.11-doc (and python3.11-minimal) packages.
# Usage: corpus/build_sample.sh [python3.11-doc.deb] [python3.11-minimal.deb]
# Without arguments it runs `apt-get download` for both (needs a Debian bookworm apt source).
# It copies the pages only: corpus.json, debian/corpus.json and PROVENANCE.md are kept by hand.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/sample"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

doc_deb="${1:-}"
min_deb="${2:-}"
if [[ -z "$doc_deb" || -z "$min_deb" ]]; then
  (cd "$work" && apt-get download python3.11-doc python3.11-minimal)
  doc_deb="$(ls "$work"/python3.11-doc_*.deb)"
  min_deb="$(ls "$work"/python3.11-minimal_*.deb)"
fi
dpkg-deb -x "$doc_deb" "$work/doc"
dpkg-deb -x "$min_deb" "$work/min"
src="$work/doc/usr/share/doc/python3.11/html"

# The subset: kept under 10 MB on disk (tests/corpus/test_sample_corpus.py checks it).
pages=(
  index.html about.html license.html copyright.html glossary.html
  whatsnew/index.html whatsnew/changelog.html.gz
  whatsnew/3.7.html whatsnew/3.8.html
  whatsnew/3.9.html whatsnew/3.10.html whatsnew/3.11.html
  faq/index.html faq/general.html faq/programming.html faq/library.html
  reference/index.html reference/compound_stmts.html reference/simple_stmts.html
  reference/executionmodel.html
  library/asyncio.html library/asyncio-task.html library/asyncio-runner.html
  library/asyncio-exceptions.html library/asyncio-api-index.html library/asyncio-sync.html
  library/asyncio-queue.html
  library/tomllib.html library/sqlite3.html library/pathlib.html library/json.html
  library/datetime.html library/zoneinfo.html library/typing.html library/re.html
  library/subprocess.html library/logging.html library/dataclasses.html library/venv.html
)
for f in "$src"/tutorial/*.html; do pages+=("tutorial/$(basename "$f")"); done

for p in "${pages[@]}"; do
  install -D -m 0644 "$src/$p" "$out/$p"
done
install -D -m 0644 "$work/doc/usr/share/doc/python3.11-doc/copyright" "$out/COPYRIGHT.debian"

# Second publisher: Debian's packaging changelog of python3.11 (plain text, gunzipped).
mkdir -p "$out/debian"
zcat "$work/min/usr/share/doc/python3.11-minimal/changelog.Debian.gz" > "$out/debian/python3.11-changelog.txt"
install -D -m 0644 "$work/min/usr/share/doc/python3.11-minimal/copyright" "$out/debian/COPYRIGHT.debian"
du -sh "$out"
