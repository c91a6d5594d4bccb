"""How LOW_DENSITY was chosen (app/extract/fallback.py): the gate that asks trafilatura least while keeping
the replacements the 0.5 gate made, on pages never used to tune extraction.

    .venv/bin/python -m bench.fallback_gate

For every page of the dates benchmark (200 pages, no gold text needed) and of the extraction benchmark
(181), our extraction's density and rival share, and whether trafilatura's text would replace ours
(app.extract.fallback.choose). Then, on the dates pages only, the grid density 0.05-0.50 by 0.01 x rival
share 0.25-1.00 by 0.01: for 14, 13 and 12 of the 0.5 gate's replacements kept, the fewest pages asked
(ties: the lowest density, then the lowest rival share). Last, what the chosen and the old gate ask on
the extraction benchmark, which of its replacements they make, and the mean CPU ms a page costs with
each (ours on every page, trafilatura on the pages asked; one timed pass, after the one above warmed up).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from app.extract import fallback
from app.extract.html import extract_html, parse_html
from app.pipeline.extract import bounded_markup
from bench.common import BENCH_DATA, read_gz

OLD = (0.5, 0.25)
SHIPPED = (fallback.LOW_DENSITY, fallback.RIVAL_SHARE)


@dataclass
class Page:
    name: str
    shell: bool
    density: float
    rival: float
    replaced: bool  # trafilatura's text would replace ours if it were asked
    ours_ms: float = 0.0  # parse and our extraction
    theirs_ms: float = 0.0  # trafilatura's

    def asked(self, density: float, rival: float) -> bool:
        return self.shell or self.density < density or self.rival >= rival


def pages(folder: Path) -> list[Page]:
    out = []
    for path in sorted(folder.iterdir()):
        body = bounded_markup(read_gz(path))
        t0 = time.process_time()
        parser = parse_html(body)
        ours = extract_html(body, parser=parser)
        t1 = time.process_time()
        theirs = fallback.trafilatura_blocks(parser.html or "") if parser.body is not None else []
        t2 = time.process_time()
        replaced = fallback.choose(ours, theirs) is not ours
        out.append(
            Page(path.name, ours.is_shell, ours.density, ours.rival_share, replaced, (t1 - t0) * 1e3, (t2 - t1) * 1e3)
        )
    return out


def main() -> None:
    dates, aeb = pages(BENCH_DATA / "dates" / "pages"), pages(BENCH_DATA / "aeb" / "html")
    aeb = pages(BENCH_DATA / "aeb" / "html")  # timed again, warm
    low = [p for p in dates if p.asked(*OLD)]
    wanted = [p for p in low if p.replaced]
    print(f"dates pages: the {OLD} gate asks {len(low)} of {len(dates)}; trafilatura replaces ours on {len(wanted)}")
    grid = [(d / 100, r / 100) for d in range(5, 51) for r in range(25, 101)]
    for need in (len(wanted), len(wanted) - 1, len(wanted) - 2):
        fits = [(sum(p.asked(*g) for p in low), g) for g in grid if sum(p.asked(*g) for p in wanted) >= need]
        asked, gate = min(fits, key=lambda f: (f[0], f[1]))
        print(f"  keeping {need} of {len(wanted)} replacements: fewest asked {asked} of {len(low)} at {gate}")
    for gate in (OLD, SHIPPED):
        asked = [p for p in aeb if p.asked(*gate)]
        made = [p.name[:12] for p in asked if p.replaced]
        ms = sum(p.ours_ms + (p.theirs_ms if p.asked(*gate) else 0.0) for p in aeb) / len(aeb)
        print(
            f"extraction benchmark, gate {gate}: asks {len(asked)} of {len(aeb)}, replacements {made}, {ms:.2f} ms a page"
        )


if __name__ == "__main__":
    main()
