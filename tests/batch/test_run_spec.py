"""One run specification, one parameter builder (issue 52, item 4;
qencode_nb.batch.run_spec): every command that runs audits builds its runs' audit.ipynb
parameters with :func:`notebook_parameters`, so a given ``--proof-budget`` reaches the
executed notebooks' parameters and ``--cell-timeout`` the execution of their cells, from
``audit``, ``sweep``, ``study threads``, ``robustness`` and the explain search alike.

The runs are real and cheap: the bundled h2 entry, one run each, stopped by a 1 s cell
limit in the cell that builds the re-run's problem (it imports PennyLane: about 2 s),
so the notebook's papermill parameters and its recorded reason say what reached it.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from qencode_nb.batch.run_spec import RUN_SPEC, job, notebook_parameters
from qencode_nb.cli import main
from qencode_nb.options import RunOptions
from qencode_nb.rules import PROOF_BUDGET_S

#: What every entry point is given, and what its notebooks must show.
GIVEN = ["--proof-budget", "7", "--cell-timeout", "1"]
CELL_LIMIT = "a cell ran longer than the timeout of 1 s"


def test_the_builder_makes_the_notebook_parameters_of_the_options(tmp_path):
    opts = RunOptions(mode="replay", engine="fast", blas_threads=2, blas_coretype="portable",
                      db=str(tmp_path), proof_budget=7, timeout=30, cell_timeout=5)
    params = notebook_parameters(opts, "h2")
    assert params == {"entry": "h2", "mode": "replay", "blas_threads": 2, "engine": "fast",
                      "blas_coretype": "portable", "db": str(tmp_path.resolve()),
                      "proof_budget": 7.0}
    # a study's axis replaces the option it varies; None leaves the notebook's default
    assert notebook_parameters(opts, "h2", {"blas_threads": 4, "blas_coretype": None}) == {
        **{k: v for k, v in params.items() if k != "blas_coretype"}, "blas_threads": 4}
    # the defaults add nothing: a run's inputs, and its resume key, are as before
    assert notebook_parameters(RunOptions(), "h2", resume=True) == {
        "entry": "h2", "mode": "full", "blas_threads": 1, "resume": True}
    assert RunOptions().proof_budget == PROOF_BUDGET_S
    # hamiltonian (issue 59): only when not "stored"; a study's axis sets it and the log
    rebuilt = RunOptions(hamiltonian="rebuilt")
    assert notebook_parameters(rebuilt, "h2") == {"entry": "h2", "mode": "full",
                                                  "blas_threads": 1, "hamiltonian": "rebuilt"}
    assert notebook_parameters(RunOptions(), "h2", {"hamiltonian": "rebuilt",
                                                    "evaluation_log": "/x/log.jsonl"}) == {
        "entry": "h2", "mode": "full", "blas_threads": 1, "hamiltonian": "rebuilt",
        "evaluation_log": "/x/log.jsonl"}
    # the two limits go with the job: per run and per cell
    assert job(opts, "h2", tmp_path, params, "n", "k") == ("h2", str(tmp_path), params, 30,
                                                          5, "n", "k")


def test_the_specification_covers_every_option_a_user_sets():
    from dataclasses import fields

    assert [o.field for o in RUN_SPEC] == [
        "mode", "engine", "hamiltonian", "blas_threads", "blas_coretype", "stack", "db",
        "proof_budget",
        "timeout", "cell_timeout", "workers", "scheduler"]
    assert {o.field for o in RUN_SPEC} == {f.name for f in fields(RunOptions)} - {
        "progress", "plot"}
    assert len({o.flag for o in RUN_SPEC}) == len(RUN_SPEC)


def _parameters(notebook: Path) -> dict:
    return dict(nbformat.read(str(notebook), as_version=4).metadata.papermill.parameters)


def _reason(folder: Path, name: str) -> str:
    return json.loads((folder / f"{name}.outcome.json").read_text())["failure"]


@pytest.mark.notebook
def test_audit_passes_the_run_options_to_its_notebook(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "h2", "--mode", "replay", *GIVEN, "--out", "x"]) == 1
    assert CELL_LIMIT in capsys.readouterr().err
    assert _parameters(tmp_path / "x.ipynb")["proof_budget"] == 7.0


@pytest.mark.notebook
def test_audit_timeout_is_per_whole_run(tmp_path, monkeypatch, capsys):
    """``audit --timeout`` limits the whole run, as everywhere (issue 52): a run that
    fits is done, one that does not is killed and says so."""
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "h2", "--mode", "replay", "--timeout", "600", "--out", "a"]) == 0
    assert main(["audit", "h2", "--mode", "replay", "--timeout", "0.5", "--out", "b"]) == 1
    assert ("RunTimeout: the run exceeded the per-run timeout of 0.5 s and was killed"
            in capsys.readouterr().err)


@pytest.mark.notebook
def test_sweep_passes_the_run_options_to_its_notebooks(tmp_path):
    assert main(["sweep", "h2", "--mode", "replay", *GIVEN, "--out", str(tmp_path)]) == 1
    (notebook,) = tmp_path.glob("*.ipynb")
    assert _parameters(notebook)["proof_budget"] == 7.0
    assert CELL_LIMIT in _reason(tmp_path, notebook.stem)


@pytest.mark.notebook
def test_a_study_passes_the_run_options_to_its_notebooks(tmp_path):
    assert main(["study", "threads", "h2", "--threads", "2", "--repeats", "1", *GIVEN,
                 "--out", str(tmp_path)]) == 1
    params = _parameters(tmp_path / "h2__t2__r0.ipynb")
    assert (params["proof_budget"], params["blas_threads"], params["mode"]) == (7.0, 2, "rerun")
    assert CELL_LIMIT in _reason(tmp_path, "h2__t2__r0")


@pytest.mark.notebook
def test_robustness_passes_the_run_options_to_its_notebooks(tmp_path):
    assert main(["robustness", "h2", "--mode", "rerun", *GIVEN, "--out", str(tmp_path)]) == 1
    (notebook,) = tmp_path.glob("*.ipynb")
    assert _parameters(notebook)["proof_budget"] == 7.0
    assert CELL_LIMIT in _reason(tmp_path, notebook.stem)


@pytest.mark.notebook
def test_the_explain_search_passes_the_run_options_to_its_notebooks(tmp_path, monkeypatch):
    """The search's first configuration, in this environment only (no stack is resolved
    or built: the stacks searched are not what this test is about), its axis values over
    the options'."""
    from qencode_nb.studies import explain

    monkeypatch.setattr(explain, "stacks", lambda entry, db=None, log=None: {"current": None})
    assert main(["study", "environments", "h2", "--explain", "--budget", "1", *GIVEN,
                 "--out", str(tmp_path)]) == 1
    (notebook,) = tmp_path.glob("*.ipynb")
    params = _parameters(notebook)
    assert (params["proof_budget"], params["blas_threads"], params["mode"]) == (7.0, 1, "rerun")
    assert "blas_coretype" in params and "stack" not in params
    assert CELL_LIMIT in _reason(tmp_path, notebook.stem)
