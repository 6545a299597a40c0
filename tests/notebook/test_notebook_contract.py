"""The notebook contract (docs/explanations/notebook-contract.md), checked on every
notebook in notebooks/."""

from __future__ import annotations

import ast

import nbformat
import pytest

from conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _code(nb) -> list:
    """The code cells: the contract counts code cells (a title in markdown may come
    first, as in audit.ipynb, so the notebook opens on what it is)."""
    return [c for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_parameters_cell_first_literals_only(path):
    nb = nbformat.read(str(path), as_version=4)
    first = _code(nb)[0]
    before = nb.cells[:nb.cells.index(first)]
    assert all(c.cell_type == "markdown" for c in before)
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
    pin_cell = _code(nb)[1]
    assert nb.cells.index(pin_cell) == nb.cells.index(_code(nb)[0]) + 1   # right after it
    calls = [n for n in ast.walk(ast.parse(pin_cell.source)) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id == "pin"]
    assert len(calls) == 1 and "blas_threads" in ast.unparse(calls[0].args[0]), \
        "the pin cell pins the checked blas_threads parameter"
    imported = set()
    for node in ast.walk(ast.parse(pin_cell.source)):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module.split(".")[0])
    assert imported == {"qencode_nb"}, imported


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_last_cell_records_done(path):
    """The last code cell records ``done``; after it only the audit's card is redrawn (and its
    headline printed, for a reader whom Run All left at the bottom), before it only the
    check that no parameter was reassigned."""
    nb = nbformat.read(str(path), as_version=4)
    last = _code(nb)[-1].source.strip().splitlines()
    done = last.index('record("done", True)')
    code = [ln for ln in last[done + 1:] if not ln.startswith("#")]
    assert code in ([], ['print("Verdict:", CARD.update().facts()["headline"], '
                         '"(the card at the top has the details)")'])
    assert last[:done] in ([], ['with stage("done"):', "    check_unchanged(PARAMETERS)"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_papermill_sees_every_parameter(path):
    """papermill skips a parameters line holding two '=' (e.g. "Adam(lr=0.05)" or a '='
    in its comment); the runner then refuses that name as unknown."""
    import papermill

    nb = nbformat.read(str(path), as_version=4)
    assigned = [t.id for n in ast.parse(_code(nb)[0].source).body for t in n.targets]
    assert list(papermill.inspect_notebook(str(path))) == assigned


# --- Issue 16 item 3: the scenarios of public bug reports, on real runs --------------------

import json  # noqa: E402

from papermill.exceptions import PapermillExecutionError  # noqa: E402

AUDIT = ROOT / "notebooks" / "audit.ipynb"


def _params_at(nb: dict) -> int:
    """The index of the ``parameters`` cell (after audit.ipynb's title markdown)."""
    return next(i for i, c in enumerate(nb["cells"])
                if "parameters" in c["metadata"].get("tags", []))


def _variant(tmp_path, edit) -> str:
    """A copy of audit.ipynb changed by ``edit(nb_dict)``, in the repository's
    notebooks/ folder's place (the kernel runs from the repository root)."""
    nb = json.loads(AUDIT.read_text())
    edit(nb)
    path = tmp_path / "variant.ipynb"
    path.write_text(json.dumps(nb))
    return str(path)


def _stock(src, out, **params):
    import papermill

    return papermill.execute_notebook(src, str(out), parameters=params, progress_bar=False,
                                      cwd=str(ROOT))


def _error(out):
    from qencode_nb import read_records

    return read_records(out).get("error")


@pytest.mark.notebook
def test_a_parameter_reassigned_after_the_pin_cell_is_refused_and_never_done(tmp_path):
    def add_cell(nb):
        nb["cells"].insert(_params_at(nb) + 2, {"cell_type": "code", "execution_count": None,
                                                "id": "c0ffee00",
                               "metadata": {}, "outputs": [], "source": 'entry = "h2"'})
    out = tmp_path / "out.ipynb"
    with pytest.raises(PapermillExecutionError):
        _stock(_variant(tmp_path, add_cell), out, entry="lih", mode="replay")
    err = _error(out)
    assert err["stage"] == "load" and err["type"] == "ParameterError"
    assert "reassigned entry (was 'lih' at the pin cell, now 'h2')" in err["message"]
    from qencode_nb import read_records
    from qencode_nb.readout.collect import collect

    r = read_records(out)
    assert r["parameters_in_force"]["entry"] == "lih" and "entry_id" not in r
    row = collect([out]).iloc[0]
    assert row["status"] == "failed" and "reassigned entry" in row["failure"]
    # collect()'s backstop: recorded values that contradict papermill's metadata.
    done = tmp_path / "done.ipynb"
    _stock(str(AUDIT), done, entry="h2", mode="replay")
    nb = json.loads(done.read_text())
    nb["metadata"]["papermill"]["parameters"]["entry"] = "lih"
    forged = tmp_path / "forged.ipynb"
    forged.write_text(json.dumps(nb))
    rows = collect([done, forged]).set_index("notebook")
    assert rows.loc[str(done), "status"] == "done"
    assert rows.loc[str(forged), "status"] == "inconsistent"
    assert rows.loc[str(forged), "failure"] == ("inconsistent parameters: entry='lih' in "
                                                "papermill's metadata but 'h2' in force")
    from qencode_nb.readout.collect import audit_table

    assert list(audit_table([done, forged])["status"]) == ["done", "inconsistent"]


def _untag(nb):
    nb["cells"][_params_at(nb)]["metadata"]["tags"] = []


@pytest.mark.notebook
def test_an_untagged_parameters_cell_is_refused_under_both_engines(tmp_path):
    src = _variant(tmp_path, _untag)
    out = tmp_path / "stock.ipynb"
    with pytest.raises(PapermillExecutionError):      # papermill only warns; the pin cell not
        _stock(src, out, entry="lih", mode="replay")
    err = _error(out)
    assert err["stage"] == "parameters" and err["type"] == "ParameterError"
    assert ("overwrote them (mode: injected 'replay', in force 'full'): the cell of literal "
            "assignments is not tagged 'parameters'") in err["message"]
    from qencode_nb.errors import ParameterError
    from qencode_nb.executor.execute import run_notebook

    with pytest.raises(ParameterError, match="has no cell tagged 'parameters'"):
        run_notebook(src, tmp_path / "engine.ipynb", {"mode": "replay"})


@pytest.mark.notebook
def test_a_misspelled_parameter_is_refused_under_stock_papermill(tmp_path):
    out = tmp_path / "typo.ipynb"
    with pytest.raises(PapermillExecutionError):
        _stock(str(AUDIT), out, entyr="lih")
    err = _error(out)
    assert err["stage"] == "parameters"
    assert err["message"].startswith("unknown parameter(s) entyr; accepted: entry, "
                                     "blas_threads, blas_coretype, mode")


def test_the_engine_refuses_a_parameters_cell_that_is_not_literal_assignments(tmp_path):
    import papermill

    from qencode_nb.errors import ParameterError

    def add_import(nb):
        at = _params_at(nb)
        nb["cells"][at]["source"] = "import os\n" + "".join(nb["cells"][at]["source"])
    src = _variant(tmp_path, add_import)
    with pytest.raises(ParameterError, match=r"line 1: 'import os' is not a literal "
                                             r"assignment; accepted: NAME = literal"):
        papermill.execute_notebook(src, str(tmp_path / "x.ipynb"), engine_name="qencode-nb",
                                   parameters={"entry": "h2"}, progress_bar=False)

    def computed(nb):
        at = _params_at(nb)
        nb["cells"][at]["source"] = "".join(nb["cells"][at]["source"]) + "\nn = len('ab')"
    with pytest.raises(ParameterError, match=r"\"n = len\('ab'\)\" does not assign a literal"):
        papermill.execute_notebook(_variant(tmp_path, computed), str(tmp_path / "y.ipynb"),
                                   engine_name="qencode-nb", progress_bar=False)
