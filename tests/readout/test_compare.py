"""``qencode-nb compare``: two sweeps of the same entries under two kernel settings,
compared entry by entry, and the two rates (issue 22)."""

from __future__ import annotations

import subprocess

import pytest

from conftest import H2_JW_UCCSD, ROOT, SHARED_DB

QENCODE_NB = ROOT / ".venv" / "bin" / "qencode-nb"


@pytest.fixture(scope="module")
def two_sweeps(tmp_path_factory):
    """H2 JW/UCCSD and H2 JW/HEA re-run under ``portable`` and under every copy on
    Sandybridge: other kernels, another numeric fingerprint."""
    from qencode_nb.batch.sweep import sweep

    root = tmp_path_factory.mktemp("compare")
    targets = [str(H2_JW_UCCSD), str(next(SHARED_DB.glob("H2_ccpvdz_JW_HEA_v4_*.json")))]
    tables = {}
    for name, coretype in (("a", "portable"), ("b", "Sandybridge")):
        tables[name] = sweep(targets, root / name, mode="rerun", blas_coretype=coretype,
                             plot=False, progress=False)
        assert (tables[name]["status"] == "done").all(), tables[name]["failure"].tolist()
    return root, tables


@pytest.mark.notebook
def test_compare_reports_bits_certification_fingerprints_and_both_rates(two_sweeps):
    from qencode_nb.readout.cross_host import compare_folders, rates

    root, tables = two_sweeps
    table = compare_folders(root / "a", root / "b")
    assert sorted(table["entry_id"]) == sorted(tables["a"]["entry_id"])
    for row in table.itertuples():
        a = tables["a"].set_index("entry_id").loc[row.entry_id]
        b = tables["b"].set_index("entry_id").loc[row.entry_id]
        assert row.energy_a == a["rerun_energy"] and row.energy_b == b["rerun_energy"]
        assert row.bit_identical == (a["rerun_energy"].hex() == b["rerun_energy"].hex())
        assert row.abs_delta_ha == abs(a["rerun_energy"] - b["rerun_energy"])
        assert row.certification_same == (bool(a["certified"]) == bool(b["certified"]))
        assert row.fingerprint_a == a["numeric_fingerprint"] != row.fingerprint_b
        assert row.fingerprint_same is False
        assert row.kernels_a == "numpy Haswell, pyscf Prescott, scipy Haswell"
        assert row.kernels_b == "numpy Sandybridge, pyscf Sandybridge, scipy Sandybridge"
    rt = rates(table)
    assert rt["compared"] == 2
    assert rt["bit_identical"] == int(table["bit_identical"].sum())
    assert rt["bit_identical_rate"] == rt["bit_identical"] / 2
    assert rt["certification_preserved_rate"] == rt["certification_preserved"] / 2
    proc = subprocess.run([str(QENCODE_NB), "compare", str(root / "a"), str(root / "b"),
                           "--csv", str(root / "cmp.csv")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last == (f"bit-identical: {rt['bit_identical']} of 2 "
                    f"({rt['bit_identical_rate']:.1%}); certification preserved: "
                    f"{rt['certification_preserved']} of 2 "
                    f"({rt['certification_preserved_rate']:.1%})")
    assert f"fingerprint A {table['fingerprint_a'][0]}" in proc.stdout
    assert (root / "cmp.csv").read_text().startswith("entry_id,status_a,status_b,energy_a")


def test_compare_refuses_a_folder_without_audits(tmp_path):
    (tmp_path / "empty").mkdir()
    proc = subprocess.run([str(QENCODE_NB), "compare", str(tmp_path / "empty"),
                           str(tmp_path / "nowhere")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert f"{tmp_path / 'empty'} holds no executed audit notebook" in proc.stderr
    proc = subprocess.run([str(QENCODE_NB), "compare", str(tmp_path / "nowhere"),
                           str(tmp_path / "empty")], capture_output=True, text=True)
    assert proc.returncode == 2 and "is not a folder of executed audits" in proc.stderr
