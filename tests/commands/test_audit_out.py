"""``qencode-nb audit ENTRY --out x`` writes ``x.ipynb``: a name without ``.ipynb`` gets
it appended, the name kept whole; an existing folder is refused by the flag
(qencode_nb.commands.audit.notebook_out).  ``audit`` is the only command whose output is
one notebook (``sweep``, ``study``, ``robustness``, ``curve`` and ``claims`` take a
folder, ``report`` an HTML page, ``keygen`` a key file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qencode_nb.cli import main
from qencode_nb.commands.audit import AUDIT_OUT_DIR, notebook_out
from qencode_nb.errors import ParameterError


@pytest.mark.parametrize("given,written", [
    ("x", "x.ipynb"), ("runs/lih", "runs/lih.ipynb"), ("lih.v2", "lih.v2.ipynb"),
    ("lih.json", "lih.json.ipynb"), ("lih.ipynb", "lih.ipynb"), ("a/b.ipynb", "a/b.ipynb"),
])
def test_out_gets_the_notebook_suffix(given, written, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert notebook_out(given, "lih") == Path(written)


def test_no_out_is_the_entrys_notebook_under_runs_audit():
    assert notebook_out(None, "params/lih.yaml") == AUDIT_OUT_DIR / "lih.ipynb"


def test_an_out_folder_is_refused_by_the_flag(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    with pytest.raises(ParameterError, match=r"^out 'runs' is a folder; accepted: a notebook "
                                             r"path such as 'runs/lih.ipynb'"):
        notebook_out("runs", "lih")
    assert main(["audit", "lih", "--out", "runs"]) == 2
    assert capsys.readouterr().err.startswith("qencode-nb: --out 'runs' is a folder; accepted:")
    assert not any((tmp_path / "runs").iterdir())


@pytest.mark.notebook
def test_audit_out_without_suffix_writes_an_ipynb(tmp_path, monkeypatch, capsys):
    """The real command: h2 in replay mode (seconds) into ``--out x``."""
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "h2", "--mode", "replay", "--out", "x"]) == 0
    assert f"executed notebook: {Path('x.ipynb')}" in capsys.readouterr().out
    assert (tmp_path / "x.ipynb").is_file() and not (tmp_path / "x").exists()
    assert main(["show", "x.ipynb"]) == 0
