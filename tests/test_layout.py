"""The static picture of the package (issue 13): rooms along the pipeline, small
modules, no import cycle, no private name used across modules, a numpy-free import.

Read with :mod:`ast` only (nothing of ``qencode_nb`` is imported here, except in the
subprocess of the last test).  Imports inside functions count like module-level
ones: a cycle through a function-level import is still a cycle in the design.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "qencode_nb"
MAX_LINES = 450
MIN_SUBPACKAGES = 4


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
SUBPACKAGES = sorted(_module_name(p.parent / "__init__.py")
                     for p in PACKAGE.glob("*/__init__.py"))


def _imports(name: str, path: Path):
    """Every ``qencode_nb`` import of a module, at any depth.

    Yields ``(lineno, target_module, imported_name_or_None, alias)``: the module the
    statement loads (a submodule when the imported name is one), the name taken from
    it (None for a whole module) and the local name it is bound to.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in MODULES:
                    yield node.lineno, a.name, None, a.asname
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            if base != "qencode_nb" and not base.startswith("qencode_nb."):
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in MODULES:
                    yield node.lineno, sub, None, a.asname or a.name
                else:
                    yield node.lineno, base, a.name, a.asname or a.name


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _graph() -> dict[str, set[str]]:
    graph = {m: set() for m in MODULES}
    for m, path in MODULES.items():
        for _, target, _, _ in _imports(m, path):
            if target != m and target in MODULES:
                graph[m].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def _cycle_path(graph, comp: list[str]) -> str:
    """One concrete cycle inside a strongly connected component, for the message."""
    members = set(comp)
    start = comp[0]
    path, seen = [start], {start}
    while True:
        nxt = sorted(w for w in graph[path[-1]] if w in members)
        back = [w for w in nxt if w == start]
        if back and len(path) > 1:
            return " -> ".join(path + [start])
        fresh = [w for w in nxt if w not in seen]
        if not fresh:   # close on the first member already on the path
            w = nxt[0]
            return " -> ".join(path[path.index(w):] + [w])
        path.append(fresh[0])
        seen.add(fresh[0])


def test_the_checks_see_the_package():
    assert "qencode_nb" in MODULES and len(MODULES) >= 10, sorted(MODULES)
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_at_least_four_subpackages():
    assert len(SUBPACKAGES) >= MIN_SUBPACKAGES, SUBPACKAGES


def test_every_room_says_what_it_holds():
    missing = [m for m in ["qencode_nb", *SUBPACKAGES]
               if not ast.get_docstring(ast.parse(MODULES[m].read_text()))]
    assert not missing, f"package __init__ without a module docstring: {missing}"


def _over_the_cap(files: dict[str, Path]) -> str:
    """``"name (lines), ..."`` of the files over :data:`MAX_LINES`, longest first."""
    sizes = {m: len(p.read_text().splitlines()) for m, p in files.items()}
    big = sorted(((n, m) for m, n in sizes.items() if n > MAX_LINES), reverse=True)
    return ", ".join(f"{m} ({n})" for n, m in big)


def test_no_module_over_450_lines():
    big = _over_the_cap(MODULES)
    assert not big, "modules over 450 lines: " + big


def test_no_import_cycle_function_level_imports_included():
    graph = _graph()
    cycles = _cycles(graph)
    assert not cycles, "import cycles: " + "; ".join(_cycle_path(graph, c) for c in cycles)


def _private_uses(modules: dict[str, Path], imports) -> list[str]:
    """Where a module of ``modules`` takes a private name of another: ``from x import _y``
    or ``x._y`` on an imported module; ``imports(name, path)`` yields
    :func:`_imports`' tuples."""
    found = []
    for m, path in modules.items():
        aliases = {}
        for line, target, name, alias in imports(m, path):
            if name is None:
                aliases[alias or target.split(".")[0]] = target
            elif target != m and _is_private(name):
                found.append(f"{m}:{line} imports {name} from {target}")
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and _is_private(node.attr)
                    and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and aliases[node.value.id] != m):
                found.append(f"{m}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
    return found


def test_no_private_name_is_used_across_modules():
    """Neither ``from qencode_nb.x import _y`` nor ``x._y`` on an imported module."""
    found = _private_uses(MODULES, _imports)
    assert not found, "private names used across modules: " + "; ".join(found)


@pytest.mark.parametrize("name", ["qencode_nb", *SUBPACKAGES])
def test_importing_the_package_or_a_room_loads_no_numpy(name):
    """The pin protocol needs a numpy-free import path: the pin cell imports
    qencode_nb before numpy may load (in a fresh interpreter)."""
    code = (f"import sys, {name}\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'scipy'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]", f"import {name} loads {out.stdout.strip()}"


#: The pipeline order of docs/layout.md: a module imports only from its own room
#: or from rooms before it.  Top-level modules count as rooms of their own.
ROOM_ORDER = ("qencode_nb.rules", "qencode_nb.paths", "qencode_nb.errors", "qencode_nb.atomic",
              "qencode_nb.file_lock",
              "qencode_nb.figstyle", "qencode_nb.notebook", "qencode_nb.entry", "qencode_nb.environment",
              "qencode_nb.trust",
              "qencode_nb.hamiltonian", "qencode_nb.engines", "qencode_nb.options", "qencode_nb.rerun",
              "qencode_nb.verdict", "qencode_nb.claims", "qencode_nb.readout", "qencode_nb.executor",
              "qencode_nb.batch",
              "qencode_nb.studies", "qencode_nb.commands", "qencode_nb.cli", "qencode_nb")


def _room(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def test_rooms_import_only_from_rooms_before_them():
    rank = {room: i for i, room in enumerate(ROOM_ORDER)}
    assert {_room(m) for m in MODULES} <= set(rank), {_room(m) for m in MODULES} - set(rank)
    forward = sorted(f"{m} -> {t}" for m, targets in _graph().items() for t in targets
                     if rank[_room(t)] > rank[_room(m)])
    assert not forward, forward


#: File names that repeat across rooms, each the same word for the same thing in both
#: places (issue 38, item 3); a new repeat needs its reason here.
SUBCOMMAND = "a command module is named after its subcommand (commands/) and the room's own"
REPEATED_FILE_NAMES = {
    "adapt.py": "each engine's ADAPT backend (engines/*/adapt.py) and the recorded ADAPT "
                "procedure that drives them (rerun/adapt.py)",
    "engine.py": "each engine package's Engine (engines/*/engine.py), one per engine",
    "kernels.py": "each engine's numba loops (engines/sector, engines/fast)",
    "slow.py": "each engine's slow twin, the test oracle of its kernels",
    "problem.py": "the VQE problem, Hamiltonian and ansatz, of the re-run (rerun/problem.py) "
                  "and its compiled form on the fast engine (engines/fast/problem.py)",
    "provenance.py": "where a thing came from: the entry (entry/provenance.py) and the run "
                     "(notebook/provenance.py)",
    "check.py": "a room's one entry point that checks its subject: the claims of a folder "
                "(claims/check.py), the entry's Hamiltonian (hamiltonian/check.py)",
    **{f"{name}.py": SUBCOMMAND for name in ("compare", "curve", "report", "robustness",
                                              "study", "sweep")},
}

#: Words that had two meanings (issue 38, item 3) and the one they keep: no module or
#: room may use them for the other.
ONE_MEANING = {
    "runner": "gone: notebook execution is the executor room's (executor/execute.py), a "
              "study's runs are batch/study_jobs.py",
    "record": "an audit's record only (notebook/record.py, verdict/records.py, "
              "hamiltonian/hamrecord.py); a "
              "benchmark's public record is its history (batch/history.py, ...)",
    "problem": "the VQE problem (Hamiltonian and ansatz); the rebuilt Hamiltonian's room "
               "is hamiltonian/",
}


def test_a_file_name_repeats_across_rooms_only_with_a_reason():
    rooms_of: dict[str, set[str]] = {}
    for m, path in MODULES.items():
        if path.name != "__init__.py":
            rooms_of.setdefault(path.name, set()).add(m)
    repeated = {name for name, mods in rooms_of.items() if len(mods) > 1}
    assert repeated <= set(REPEATED_FILE_NAMES), (
        "file names repeated without a reason in REPEATED_FILE_NAMES: "
        + ", ".join(f"{n} ({', '.join(sorted(rooms_of[n]))})"
                    for n in sorted(repeated - set(REPEATED_FILE_NAMES))))
    assert set(REPEATED_FILE_NAMES) <= repeated, "a listed repeat that no longer repeats"


def test_the_old_double_meanings_are_gone():
    names = {m.split(".")[-1] for m in MODULES} | {_room(m) for m in MODULES}
    assert not [n for n in names if "runner" in n], ONE_MEANING["runner"]
    assert "qencode_nb.problem" not in names, ONE_MEANING["problem"]
    records = sorted(m for m in MODULES if "record" in m.split(".")[-1]
                     and not m.split(".")[-1].startswith("recorded"))
    assert records == ["qencode_nb.hamiltonian.hamrecord",    # the `hamiltonian` record
                       "qencode_nb.notebook.record", "qencode_nb.verdict.records"], (
        ONE_MEANING["record"], records)


#: Rooms every cell of the audit may use: the frame (records, stages, pins) and the
#: package's own top level.
FRAME_ROOMS = {"qencode_nb", "qencode_nb.rules", "qencode_nb.paths", "qencode_nb.errors",
               "qencode_nb.notebook"}


def _cell_rooms(source: str) -> list[str]:
    rooms = []
    for node in ast.walk(ast.parse(source)):
        names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module else
                 [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        rooms += [_room(n) for n in names if n.split(".")[0] == "qencode_nb"]
    return [r for r in rooms if r not in FRAME_ROOMS]


def test_the_audit_notebook_runs_forward_through_the_rooms():
    """After its frame cell (pins, the card, the parameters' values), audit.ipynb's
    cells use the rooms in pipeline order: entry -> environment (the recorded one, the
    stack in force) -> trust (integrity) -> problem -> engines / rerun (replay, re-run) ->
    verdict (tiers, figure, card); never back."""
    import json

    cells = [c for c in json.loads((ROOT / "notebooks" / "audit.ipynb").read_text())["cells"]
             if c["cell_type"] == "code" and "parameters" not in c["metadata"].get("tags", [])]
    rank = {room: i for i, room in enumerate(ROOM_ORDER)}
    seen, back = [], []
    for i, cell in enumerate(cells[1:], start=1):
        for room in _cell_rooms("".join(cell["source"])):
            if seen and rank[room] < rank[seen[-1]]:
                back.append(f"code cell {i} uses {room} after {seen[-1]}")
            seen.append(room) if not seen or rank[room] >= rank[seen[-1]] else None
    assert not back, back
    assert [r for i, r in enumerate(seen) if i == 0 or r != seen[i - 1]] == [
        "qencode_nb.entry", "qencode_nb.environment", "qencode_nb.trust",
        "qencode_nb.hamiltonian", "qencode_nb.rerun", "qencode_nb.verdict"]


# --------------------------------------------------------------------------- benchmarks/
# The benchmark scripts run from benchmarks/ and import each other as top-level
# modules (``import harness``, ``from problems import qnode``): the same rules hold
# among them.

BENCHMARKS: dict[str, Path] = {p.stem: p for p in sorted((ROOT / "benchmarks").glob("*.py"))}


def _benchmark_imports(path: Path):
    """Every import of another benchmark module, at any depth: ``(lineno, module,
    imported_name_or_None, alias)`` as :func:`_imports` gives them."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in BENCHMARKS:
                    yield node.lineno, a.name, None, a.asname or a.name
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module in BENCHMARKS:
            for a in node.names:
                yield node.lineno, node.module, a.name, a.asname or a.name


def _benchmark_graph() -> dict[str, set[str]]:
    return {m: {t for _, t, _, _ in _benchmark_imports(p) if t != m}
            for m, p in BENCHMARKS.items()}


def test_the_benchmark_checks_see_the_scripts():
    assert {"harness", "engines", "overhead"} <= set(BENCHMARKS), sorted(BENCHMARKS)
    assert "harness" in _benchmark_graph()["engines"]


def test_no_benchmark_over_450_lines():
    big = _over_the_cap(BENCHMARKS)
    assert not big, "benchmarks over 450 lines: " + big


def test_no_import_cycle_among_benchmarks():
    graph = _benchmark_graph()
    cycles = _cycles(graph)
    assert not cycles, ("benchmark import cycles: "
                        + "; ".join(_cycle_path(graph, c) for c in cycles))


def test_no_private_name_is_used_across_benchmarks():
    """Neither ``from harness import _y`` nor ``harness._y`` in another benchmark."""
    found = _private_uses(BENCHMARKS, lambda m, path: _benchmark_imports(path))
    assert not found, "private names used across benchmarks: " + "; ".join(found)


def test_every_benchmark_script_imports_the_harness_first():
    """A script (``if __name__ == "__main__"``) imports :mod:`harness` before any other
    module but ``__future__``: its pins must be set before numpy loads."""
    wrong = []
    for m, path in BENCHMARKS.items():
        tree = ast.parse(path.read_text())
        is_script = any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)
                        for n in tree.body)
        first = next((n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
                      and getattr(n, "module", None) != "__future__"), None)
        if is_script and not (isinstance(first, ast.Import)
                              and [a.name for a in first.names] == ["harness"]):
            wrong.append(m)
    assert not wrong, f"benchmark scripts not importing harness first: {wrong}"
