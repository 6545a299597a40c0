"""qencode-nb sweep: one kernel per entry, summary CSV, resumable."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import H2_JW_UCCSD, SHARED_DB
from qencode_nb.errors import EntryError
from qencode_nb.sweep import sweep

H2_BK = SHARED_DB / "H2_ccpvdz_BK_UCCSD_v4_tapered__sha256_d3f280f5c8f32ccc.json"


def test_sweep_writes_one_row_per_entry_and_resumes(tmp_path):
    out = tmp_path / "runs"
    table = sweep([str(H2_JW_UCCSD), str(H2_BK)], out, mode="replay", workers=2,
                  progress=False)
    csv = pd.read_csv(out / "summary.csv")
    assert len(table) == len(csv) == 2
    assert set(csv["status"]) == {"done"}
    assert (csv["replay_abs_delta_ha"] <= 1e-9).all() and csv["terms_match"].all()
    assert csv["kernel"].notna().all() and (csv["max_abs_dcoeff"] <= 1e-8).all()
    stamps = {p.name: p.stat().st_mtime_ns for p in out.glob("*.ipynb")}
    sweep([str(H2_JW_UCCSD), str(H2_BK)], out, mode="replay", progress=False)
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.ipynb")} == stamps, \
        "a done run with the same inputs must not run again"
    sweep([str(H2_JW_UCCSD)], out, mode="full", progress=False)   # other inputs: runs
    assert (out / f"{H2_JW_UCCSD.stem}.ipynb").stat().st_mtime_ns != stamps[f"{H2_JW_UCCSD.stem}.ipynb"]


def test_sweep_lists_failures_instead_of_skipping(tmp_path):
    bad = tmp_path / "db"
    bad.mkdir()
    (bad / "cut.json").write_text(H2_JW_UCCSD.read_text()[:3000])
    table = sweep([str(bad)], tmp_path / "runs", mode="replay", progress=False)
    assert list(table["status"]) == ["failed"]
    assert "not valid JSON" in table["failure"][0]


def test_sweep_refuses_unknown_targets(tmp_path):
    with pytest.raises(EntryError, match="neither a folder, a file nor a bundled entry"):
        sweep(["no-such-entry"], tmp_path)
