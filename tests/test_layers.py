"""The package's floors: no import cycle, no private cross-import, and nothing in
``mope_jax/analysis/`` imports upward (campaigns, the claims ledger, the results orchestration):
analysis is the pure functions the floors above call."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "mope_jax"
UPPER = ("mope_jax.campaign", "mope_jax.claims", "mope_jax.results")


def _module(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module imported, names imported from it) for every import in the file, at any depth."""
    mod, is_pkg = _module(path), path.name == "__init__.py"
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.append((target, [a.name for a in node.names]))
    return out


def _graph() -> dict[str, set[str]]:
    mods = {_module(p): p for p in PKG.rglob("*.py")}
    assert len(mods) > 40, f"found only {len(mods)} modules under {PKG}"
    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        deps = graph.setdefault(mod, set())
        for target, names in _imports(path):
            for cand in [f"{target}.{n}" for n in names] + [target]:
                if cand in mods and cand != mod:
                    deps.add(cand)
                    break
    return graph


def test_analysis_never_imports_the_floors_above_it():
    assert (PKG / "analysis" / "stats.py").is_file()
    bad = [
        f"{_module(p)} imports {target}"
        for p in sorted((PKG / "analysis").rglob("*.py"))
        for target, names in _imports(p)
        if any(target == u or target.startswith(u + ".") for u in UPPER)
        or (target == "mope_jax" and any(f"mope_jax.{n}" in UPPER for n in names))
    ]
    assert not bad, bad


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles met by a depth-first walk, leaving out a package and its own submodule (an
    ``__init__`` re-exporting what it contains)."""
    state: dict[str, int] = {}
    cycles = []

    def visit(m, stack):
        state[m] = 1
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d) :] + [d])
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])

    def nested(a, b):
        return a.startswith(b + ".") or b.startswith(a + ".")

    return [c for c in cycles if not any(nested(c[i], c[i + 1]) for i in range(len(c) - 1))]


def test_the_cycle_finder_finds_a_planted_cycle():
    assert _cycles({"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}}) == [
        ["p.a", "p.b", "p.c", "p.a"]
    ]
    assert _cycles({"p": {"p.a"}, "p.a": {"p"}, "p.b": {"p.a"}}) == []


def test_no_import_cycle_between_modules():
    assert not _cycles(_graph())


def test_no_private_name_is_imported_from_another_module():
    bad = [
        f"{_module(p)}: from {target} import {n}"
        for p in sorted(PKG.rglob("*.py"))
        for target, names in _imports(p)
        if target.startswith("mope_jax")
        for n in names
        if n.startswith("_")
        and not n.startswith("__")
        # a package's __init__ may use its own submodules' private names
        and not (p.name == "__init__.py" and target.startswith(_module(p) + "."))
    ]
    assert not bad, bad


# The runtime ties an import graph cannot see: the library finds experiment code through the
# registry and imports it by module name in one place (campaign/discover.py), never by reading
# source text or executing a file by path.
SOURCE_SCAN = re.compile(
    r"re\.search\(.*read_text|read_text\(\).*re\.|spec_from_file_location|exec_module"
)
SYS_TIES = re.compile(r"\bsys\.(path|modules)\b")
DISCOVER = PKG / "campaign" / "discover.py"


def _hits(pattern: re.Pattern, skip: Path | None = None) -> list[str]:
    return [
        f"{p.relative_to(PKG.parent)}:{i}: {line.strip()}"
        for p in sorted(PKG.rglob("*.py"))
        if p != skip
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]


def test_the_scanners_find_a_planted_tie():
    assert SOURCE_SCAN.search('if re.search(r"^X", p.read_text(), re.M):')
    assert SOURCE_SCAN.search("spec.loader.exec_module(mod)")
    assert SYS_TIES.search("sys.path.insert(0, root)") and SYS_TIES.search("sys.modules.pop(k)")
    assert _hits(SYS_TIES), "discover.py touches sys.path: the scan must see it"


def test_no_source_text_search_or_file_exec_in_the_library():
    assert not _hits(SOURCE_SCAN)


def test_sys_path_and_sys_modules_are_touched_only_by_discover():
    assert _hits(SYS_TIES) and all(
        h.startswith("mope_jax/campaign/discover.py") for h in _hits(SYS_TIES)
    )
    assert not _hits(SYS_TIES, skip=DISCOVER)
