"""Dependencies point one way: api → pipeline → {state} → {providers, fetch, extract, corpus, cache} →
language → base (settings, errors, urls, …) → domain. Read from the source (every `import app…`,
function-local ones included), so a lower layer importing a higher one fails here."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"

# rank of each top-level module/package of app: a module may import its own package or lower ranks.
RANKS = {
    "domain": 0,
    "settings": 1,
    "errors": 1,
    "urls": 1,
    "logs": 1,
    "metrics": 1,
    "tokens": 1,
    "memo": 1,
    "cpu_queue": 1,
    "cpu_processes": 1,
    "language": 2,
    "providers": 3,
    "fetch": 3,
    "extract": 3,
    "corpus": 3,
    "cache": 3,
    "state": 4,
    "pipeline": 5,
    "api": 6,
    "inspect": 6,  # the answer inspector: trace views over pipeline results, served by api
    "main": 6,
    "server": 6,  # the uvicorn protocol the service runs under
    "metrics_export": 6,
}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "app" and len(parts) > 1 and parts[1] in RANKS:
                found.add(parts[1])
    return found


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in APP.rglob("*.py"):
        rel = path.relative_to(APP).parts
        top = rel[0].removesuffix(".py")
        if top == "__init__":
            continue
        assert top in RANKS, f"app/{rel[0]} has no layer in tests/core/test_layers.py"
        graph.setdefault(top, set()).update(_imports(path) - {top})
    return graph


def test_no_module_imports_a_higher_layer():
    bad = [
        f"app.{src} (rank {RANKS[src]}) imports app.{dst} (rank {RANKS[dst]})"
        for src, dsts in _graph().items()
        for dst in dsts
        if RANKS[dst] > RANKS[src]
    ]
    assert not bad, "\n".join(sorted(bad))


def test_the_domain_imports_nothing_from_app():
    assert not _graph().get("domain")


def test_no_package_cycle():
    graph = _graph()

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    cycles = sorted(p for p in graph if p in reach(p))
    assert not cycles, f"packages on a cycle: {cycles}"


def test_eval_bench_and_simulators_never_import_the_tests():
    root = APP.parent
    bad = []
    for folder in ("eval", "bench", "simulators"):
        for path in (root / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = (
                    [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else []
                )
                bad += [f"{path.relative_to(root)} imports {n}" for n in names if n.split(".")[0] == "tests"]
    assert not bad, "\n".join(bad)
