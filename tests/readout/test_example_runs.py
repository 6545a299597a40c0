"""The bundled example runs, ``data/example-runs/``: the defaults of
``notebooks/figures.ipynb``, so that a clone alone draws every figure (issue 51, item 5).

The examples are **stale** when they no longer are what ``data/example-runs/
regenerate.py`` makes of this checkout, in one of three ways, each checked without
re-running anything:

1. what decides their content or shape changed since the script ran (its
   ``content_key()``, kept in ``manifest.json``): the bytes of a bundled input
   (``data/qencode-v4/*.json``, ``params/h2.yaml``: the examples ran other entries), the
   commands the script runs or the files it keeps, the project's version, or the names
   the collectors read (``collect.READ_RECORDS``, ``COPIED_RECORDS``, ``AUDIT_COLUMNS``,
   ``run_rows.READ_RECORDS``, the four study tables' columns: old examples would leave
   a renamed record's column empty without a word);
2. a file of the run folders was added, removed or edited after the script wrote it
   (``manifest.json`` lists every file's SHA-256);
3. the current collectors no longer read them into figures: every sweep notebook is a
   done audit, every study CSV has today's columns, and each of the six figures draws.

Not stale: the numbers moving with the code or the host. They are examples of one host at
one commit (their README.md names both), not results, and nothing here re-runs them.
Every failure message gives the command that regenerates them, :data:`REGENERATE`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from checkout import copy_checkout
from conftest import ROOT
from test_figures import check_files

EXAMPLES = ROOT / "data" / "example-runs"
SCRIPT = EXAMPLES / "regenerate.py"
#: The six figures of notebooks/figures.ipynb, in the order it draws them.
FIGURES = ("margins", "threads", "kernels", "optimizers", "environments", "adapt_operators")
STUDIES = ("threads", "kernels", "optimizers", "environments")


def _script():
    """``data/example-runs/regenerate.py`` as a module (its ``main`` is not run)."""
    spec = importlib.util.spec_from_file_location("regenerate_examples", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


regenerate = _script()
REGENERATE = regenerate.COMMAND
#: What every staleness failure says last.
FIX = f"the example runs in data/example-runs are stale; regenerate them with `{REGENERATE}`"


def _manifest() -> dict:
    return json.loads((EXAMPLES / "manifest.json").read_text())


def test_the_examples_are_current():
    """Ways 1 and 2 of the module docstring: the key and the files are the script's."""
    reasons = regenerate.stale_reasons(_manifest(), regenerate.content_key(),
                                       regenerate.kept_files())
    assert not reasons, "; ".join(reasons) + f". {FIX}"


def test_the_staleness_check_fails_on_a_changed_input_key_or_file(tmp_path, monkeypatch):
    """The check can fail: an edited input entry, a renamed collector record, and an
    edited, an added and a removed example file are each named."""
    doc = _manifest()
    key = json.loads(json.dumps(regenerate.content_key()))
    files = regenerate.kept_files()
    h2 = next(name for name in key["inputs"] if "H2_ccpvdz_JW_UCCSD" in name)
    key["inputs"][h2] = "0" * 64
    key["collector"]["audit_read_records"] = ["renamed", *key["collector"]["audit_read_records"]]
    reasons = regenerate.stale_reasons(doc, key, files)
    assert f"inputs changed: {h2}" in reasons
    assert "collector changed: audit_read_records" in reasons
    copy = tmp_path / "example-runs"
    for name in files:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_bytes((EXAMPLES / name).read_bytes())
    (copy / "threads" / "threads.csv").write_text("edited by hand\n")
    (copy / "kernels" / "extra.csv").write_text("x\n")
    (copy / "optimizers" / "optimizers.csv").unlink()
    reasons = regenerate.stale_reasons(doc, regenerate.content_key(),
                                       regenerate.kept_files(copy))
    assert reasons == ["kernels/extra.csv: not written by the script (not in manifest.json)",
                       "optimizers/optimizers.csv: listed in manifest.json, missing",
                       "threads/threads.csv: edited after the script wrote it (SHA-256 "
                       "differs)"]


def test_the_current_collectors_draw_every_example(tmp_path):
    """Way 3 of the module docstring: each folder read and drawn as figures.ipynb does."""
    from qencode_nb.readout.collect import adapt_operator_table, audit_table
    from qencode_nb.readout.plots import (adapt_operator_plot, adapt_plot_refusal,
                                          margin_plot, study_plot)
    from qencode_nb.paths import BUNDLED_DB, EXAMPLE_RUNS

    assert EXAMPLE_RUNS == EXAMPLES
    doc = _manifest()
    key = regenerate.content_key()
    sweep = audit_table(EXAMPLES / "sweep")
    assert len(sweep) == doc["runs"]["sweep"]["runs"] == len(list(BUNDLED_DB.glob("*.json")))
    assert (sweep["status"] == "done").all(), f"{sweep['failure'].tolist()}: {FIX}"
    assert sweep["error_mha"].notna().all() and sweep["published_error_mha"].notna().all()
    margin_plot(sweep, tmp_path / "margins")
    for kind in STUDIES:
        table = pd.read_csv(EXAMPLES / kind / f"{kind}.csv")
        assert list(table.columns) == key["study_columns"][kind], f"{kind}.csv: {FIX}"
        assert len(table) == doc["runs"][kind]["runs"] and (table["status"] == "done").all()
        study_plot(table, kind, tmp_path / kind)
    adapt = adapt_operator_table(BUNDLED_DB)
    assert adapt_plot_refusal(adapt) is None
    adapt_operator_plot(adapt, tmp_path / "adapt_operators")
    for name in FIGURES:
        check_files(tmp_path / name)


def test_the_readme_says_what_made_them_where_and_when():
    """The folder's README: examples, not results; the command, the date and the host
    as the manifest records them (the script writes both)."""
    readme = (EXAMPLES / "README.md").read_text()
    doc = _manifest()
    assert "not results" in readme and f"    {REGENERATE}\n" in readme
    assert f"date: {doc['made_utc']}" in readme and doc["host"]["cpu"] in readme
    for folder, args in regenerate.COMMANDS:
        assert f"`qencode-nb {' '.join(args).format(out=f'<tmp>/{folder}')}`" in readme


@pytest.mark.notebook
def test_the_figures_notebook_draws_every_figure_in_a_clone_without_shared(tmp_path):
    """Issue 51's 'done when': in a clone without ../shared, ``papermill
    notebooks/figures.ipynb out.ipynb -p out figs`` writes every figure as PNG (300 dpi),
    PDF and SVG.  The clone's own qencode_nb runs (PYTHONPATH), not this checkout's."""
    repo = copy_checkout(tmp_path / "qencode-nb")
    assert not (tmp_path / "shared").exists()
    env = {**os.environ, "PYTHONPATH": str(repo)}
    where = subprocess.run([sys.executable, "-c", "import qencode_nb; print(qencode_nb.__file__)"],
                           cwd=repo, env=env, capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()).parent == repo / "qencode_nb"
    papermill = Path(sys.executable).parent / "papermill"
    proc = subprocess.run([str(papermill), "notebooks/figures.ipynb", "out.ipynb",
                           "-p", "out", "figs"], cwd=repo, env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    from qencode_nb.notebook.record import read_records

    r = read_records(repo / "out.ipynb")
    assert r["done"] is True and r["skipped"] == {}, r.get("skipped")
    assert set(r["figures"]) == set(FIGURES)
    assert r["examples"] == list(FIGURES[:5])
    for name in FIGURES:
        assert r["figures"][name] == [str(repo.resolve() / "figs" / f"{name}.{s}")
                                      for s in ("png", "pdf", "svg")]
        check_files(repo / "figs" / name)
