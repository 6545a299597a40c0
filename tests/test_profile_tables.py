"""Bit-level expectations keyed by kernel profile stay complete on every host (issue 34).

A test reads its exact expectation with ``conftest.by_profile({profile: value})``; on a
host whose profile has no row it would skip, so a missing row goes unnoticed where the
suite runs under the other profile.  These checks read every table in the tests without
running them: each ``by_profile`` call names every profile of
:data:`qencode_nb.notebook.blas_profiles.PROFILES`, literally, and the tables kept in
data files have a row per profile.
"""

from __future__ import annotations

import ast
import json

from conftest import ROOT
from qencode_nb.notebook.blas_profiles import PROFILES

TESTS = ROOT / "tests"


def _calls():
    """``(file:line, the by_profile call's first argument)`` for every call in tests/."""
    for path in sorted(TESTS.rglob("*.py")):
        if path.name == "conftest.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "by_profile"):
                yield f"{path.relative_to(ROOT)}:{node.lineno}", node.args[0]


def test_the_scan_finds_the_tables():
    """The scan is not vacuous: the suite's known tables are found."""
    where = [w for w, _ in _calls()]
    assert len(where) >= 10, where
    assert any(w.startswith("tests/batch/test_sweep.py") for w in where)
    assert any(w.startswith("tests/hamiltonian/test_hamiltonian_record.py") for w in where)


def test_every_by_profile_table_has_a_row_per_profile():
    bad = []
    for where, arg in _calls():
        if isinstance(arg, ast.Dict):
            keys = [k.value if isinstance(k, ast.Constant) else None for k in arg.keys]
            if None in keys or sorted(keys) != sorted(PROFILES):
                bad.append(f"{where}: rows {keys} (unpacked rows read as None)")
        elif not (isinstance(arg, ast.Name) and arg.id.isupper()):
            bad.append(f"{where}: a table that is neither a dict literal nor a module "
                       f"constant ({ast.unparse(arg)})")
    assert not bad, f"every profile needs a row ({', '.join(PROFILES)}): {bad}"


def test_the_hamiltonian_record_table_has_a_row_per_profile():
    """tests/hamiltonian/test_hamiltonian_record.py's table is a data file
    (tests/data/hamiltonian-record/regenerate.py writes its rows)."""
    table = json.loads((TESTS / "data" / "hamiltonian-record"
                        / "before-hamiltoniancheck.json").read_text())
    assert sorted(table) == sorted(PROFILES)
    assert len({tuple(rows) for rows in table.values()}) == 1     # the same entries
