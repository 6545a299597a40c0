"""``qencode-nb study faithful`` (issue 60): two real audits of a bundled entry, the plain
QNode and the faithful engine, every evaluation compared; a run option the study fixes is
refused before any run."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from qencode_nb.studies.faithful import FAITHFUL_COLUMNS


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "qencode_nb.cli", "study", "faithful", *args],
                          capture_output=True, text=True, cwd=cwd)


@pytest.mark.notebook
@pytest.mark.slow
def test_a_bundled_entry_is_proven_at_every_evaluation(tmp_path):
    out = tmp_path / "faithful"
    proc = _cli("h2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    table = pd.read_csv(out / "faithful.csv")
    assert list(table.columns) == list(FAITHFUL_COLUMNS) and len(table) == 1
    row = table.iloc[0]
    assert row["proven"] and row["same_result"] and row["faithful_ran"]
    assert row["evaluations"] >= 20 and pd.isna(row["first_divergence"])
    assert row["plain_hex"] == row["faithful_hex"]
    assert row["plain_rerun_s"] > 0 and row["faithful_rerun_s"] > 0
    assert "proven: 1, not proven: 0, entries: 1" in proc.stdout
    folder = out / row["entry_id"]
    assert (folder / "plain.jsonl").is_file() and (folder / "faithful.jsonl").is_file()


def test_an_engine_is_refused_before_any_run(tmp_path):
    """The study fixes the engines (plain QNode, faithful): it has no --engine."""
    proc = _cli("h2", "--engine", "sector", "--out", str(tmp_path / "x"))
    assert proc.returncode == 2
    assert "unrecognized arguments: --engine sector" in proc.stderr
    assert not (tmp_path / "x").exists()


def test_the_api_refuses_an_engine_naming_the_parameter(tmp_path):
    from qencode_nb.errors import ParameterError
    from qencode_nb.studies.faithful import faithful_study

    with pytest.raises(ParameterError, match="'sector' is not accepted here") as err:
        faithful_study("h2", tmp_path / "x", engine="sector")
    assert err.value.parameter == "engine" and not (tmp_path / "x").exists()
