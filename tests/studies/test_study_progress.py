"""Progress of sweeps and studies: one text bar on stderr (qencode_nb/batch/progress_bar.py)
that shows in a terminal, in JupyterLab and in papermill's executed notebook.

The notebook tests execute ``threading.ipynb`` (a threads study of the bundled H2 entry,
one run) and ``suite.ipynb`` (a replay sweep of it) with papermill in a real kernel and
read the bar from the executed notebook's stderr stream outputs: there, and not a
"TqdmWarning: IProgress not found" (what tqdm.auto wrote without ipywidgets).
"""

from __future__ import annotations

import io
import re
import sys

import pytest

from conftest import ROOT
from qencode_nb.batch.progress_bar import NCOLS, advance, progress_bar


def _stderr(nb: dict) -> list[str]:
    """The texts of every stderr stream output, in order."""
    return ["".join(o["text"]) if isinstance(o["text"], list) else o["text"]
            for c in nb["cells"] for o in c.get("outputs", [])
            if o.get("output_type") == "stream" and o.get("name") == "stderr"]


def test_bar_on_stderr_one_redraw_at_most_per_run(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    bar = progress_bar(5, "audits", "entry", initial=1)
    for i in range(4):
        advance(bar, f"run{i} done")
    bar.close()
    text = stream.getvalue()
    redraws = [r for r in text.split("\r") if r.strip()]
    assert redraws[-1].startswith("audits: 100%") and "5/5" in redraws[-1]
    assert "run3 done" in redraws[-1]
    assert len(redraws) <= 4 + 2          # the first draw, at most one per run, the close
    assert all(len(r.rstrip("\n")) == NCOLS for r in redraws)   # not a terminal: fixed width


def test_bar_off_by_argument_or_environment(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    for enabled, env in ((False, "1"), (True, "0")):
        monkeypatch.setenv("QENCODE_NB_PROGRESS", env)
        bar = progress_bar(2, "robustness", "run", enabled=enabled)
        advance(bar, "x done")
        bar.close()
    assert stream.getvalue() == ""


def test_no_study_module_uses_tqdm_auto():
    """tqdm.auto without ipywidgets writes a warning into the notebook."""
    users = [p.name for p in (ROOT / "qencode_nb" / "studies").glob("*.py")
             if "tqdm.auto" in p.read_text() and p.name != "progress_bar.py"]
    assert users == []


def _execute(name: str, tmp_path, **params) -> dict:
    import json

    import papermill

    out = tmp_path / f"{name}.ipynb"
    papermill.execute_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"), str(out),
                               parameters=params, progress_bar=False,
                               cwd=str(ROOT / "notebooks"))
    return json.loads(out.read_text())


def _bar_lines(stderr: list[str], desc: str) -> list[str]:
    return [r for text in stderr for r in text.split("\r") if r.startswith(f"{desc}:")]


@pytest.mark.notebook
def test_threading_notebook_shows_the_study_progress(tmp_path):
    nb = _execute("threading", tmp_path, entry="h2", study="threads", threads=[1], repeats=1,
                  mode="rerun", out=str(tmp_path / "threads"))
    stderr = _stderr(nb)
    bars = _bar_lines(stderr, "threads study")
    assert bars, stderr
    assert re.search(r"100%.*1/1 .*h2__t1__r0 done", bars[-1]), bars
    assert len(bars) <= 1 + 2, bars       # one run: first draw, its step, the close
    assert not any("IProgress" in t or "TqdmWarning" in t for t in stderr), stderr


@pytest.mark.notebook
def test_a_sweep_in_a_kernel_shows_its_progress(tmp_path):
    nb = _execute("suite", tmp_path, targets=["h2"], mode="replay", out=str(tmp_path / "runs"))
    stderr = _stderr(nb)
    bars = _bar_lines(stderr, "audits")
    assert bars, stderr
    assert re.search(r"100%.*1/1 .*h2 done", bars[-1]), bars
    assert not any("IProgress" in t or "TqdmWarning" in t for t in stderr), stderr
