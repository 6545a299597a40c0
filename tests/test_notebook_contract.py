"""The notebook contract of DESIGN.md, checked on every notebook in notebooks/."""

from __future__ import annotations

import ast

import nbformat
import pytest

from conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_parameters_cell_first_literals_only(path):
    nb = nbformat.read(str(path), as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "code" and "parameters" in first.metadata.get("tags", [])
    tree = ast.parse(first.source)
    assert tree.body, "empty parameters cell"
    for node in tree.body:
        assert isinstance(node, ast.Assign), f"not an assignment: {ast.dump(node)}"
        ast.literal_eval(node.value)   # raises on anything but a literal
    assert "blas_threads" in {t.id for n in tree.body for t in n.targets}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_second_cell_pins_before_any_numpy_import(path):
    nb = nbformat.read(str(path), as_version=4)
    pin_cell = nb.cells[1]
    assert pin_cell.cell_type == "code" and "pin(blas_threads" in pin_cell.source
    imported = set()
    for node in ast.walk(ast.parse(pin_cell.source)):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module.split(".")[0])
    assert imported == {"qencode_nb"}, imported


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_last_cell_records_done(path):
    nb = nbformat.read(str(path), as_version=4)
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    assert last.source.strip() == 'record("done", True)'


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_papermill_sees_every_parameter(path):
    """papermill skips a parameters line holding two '=' (e.g. "Adam(lr=0.05)" or a '='
    in its comment); the runner then refuses that name as unknown."""
    import papermill

    nb = nbformat.read(str(path), as_version=4)
    assigned = [t.id for n in ast.parse(nb.cells[0].source).body for t in n.targets]
    assert list(papermill.inspect_notebook(str(path))) == assigned
