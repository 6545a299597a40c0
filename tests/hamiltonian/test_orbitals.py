"""The active-space boundary check on real entries (PySCF RHF orbital energies)."""

from __future__ import annotations

import pytest

from conftest import SHARED_DB
from qencode_nb.entry import load
from qencode_nb.hamiltonian.orbitals import boundary_check, boundary_pairs, orbital_energies
from qencode_nb.rules import ACTIVE_BOUNDARY_TOL_HA

BENZENE_HEA = SHARED_DB / "benzene_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_3d3de57a516e599d.json"


def test_boundary_pairs_of_hand_made_energies():
    e = [-1.0, -0.5, -0.49999, 0.1, 0.2, 0.2]       # core 2, active 2 (MO 2, 3)
    pairs = boundary_pairs(e, n_core=2, n_active=2)
    assert [(p["outside"], p["inside"], p["side"]) for p in pairs] == [(1, 2, "core")]
    assert pairs[0]["gap_ha"] == pytest.approx(1e-5)
    assert boundary_pairs(e, 2, 3) == boundary_pairs(e, 2, 3, ACTIVE_BOUNDARY_TOL_HA)
    split = boundary_pairs(e, 2, 3)                 # active MO 2..4: 4 and 5 degenerate
    assert {(p["outside"], p["inside"]) for p in split} == {(1, 2), (5, 4)}
    assert boundary_pairs(e, 0, 1, tol=1e-9) == []


@pytest.mark.slow
def test_benzene_boundary_splits_mo17_and_mo18(tmp_path):
    """Issue 16: benzene JW/HEA [6e,6o]: MO 17 core at -0.49012242 Ha, MO 18 active at
    -0.49011501 Ha, gap 7.4e-6 Ha; the warning names both, their energies and the gap.
    The second call reads the cached orbital energies (no PySCF)."""
    r = boundary_check(load(str(BENZENE_HEA)), cache_dir=tmp_path)
    assert r["status"] == "warning" and r["n_core"] == 18 and r["active"] == [18, 23]
    (pair,) = r["pairs"]
    assert (pair["outside"], pair["inside"], pair["side"]) == (17, 18, "core")
    assert pair["e_outside_ha"] == pytest.approx(-0.49012242, abs=5e-8)
    assert pair["e_inside_ha"] == pytest.approx(-0.49011501, abs=5e-8)
    assert pair["gap_ha"] == pytest.approx(7.4e-6, abs=1e-7)
    assert "MO 17 (core, -0.49012242 Ha) and active MO 18 (-0.49011501 Ha), gap 7.4e-06 Ha" \
        in r["warning"]
    assert orbital_energies(load(str(BENZENE_HEA)), cache_dir=tmp_path)[1] == "hit"
    assert boundary_check(load(str(BENZENE_HEA)), cache_dir=tmp_path) == r


def test_lih_splits_its_degenerate_pi_pair_and_h2_is_clean(tmp_path):
    """LiH [4e,4o] takes one of the two degenerate pi orbitals (MO 3 active, MO 4
    virtual, equal energies): a symmetry pair split by the boundary."""
    lih = boundary_check(load("lih"), cache_dir=tmp_path)
    assert lih["status"] == "warning"
    assert [(p["outside"], p["inside"], p["side"]) for p in lih["pairs"]] == [(4, 3, "virtual")]
    assert lih["pairs"][0]["gap_ha"] < 1e-12
    h2 = boundary_check(load("h2"), cache_dir=tmp_path)
    assert h2["status"] == "ok" and h2["pairs"] == [] and h2["warning"] is None


_ORBITALS = """\
import sys
from qencode_nb.notebook.pins import pin
pin(1, sys.argv[1])
from qencode_nb.entry import load
from qencode_nb.hamiltonian.orbitals import orbital_energies
print(orbital_energies(load("lih"), cache_dir=sys.argv[2])[1])
"""


def test_orbital_energies_are_kept_per_numeric_environment(tmp_path):
    """Issue 51: the orbital energies' last bits follow the kernels (LiH's pi pair: gap
    1.7e-16 Ha under portable, 5.3e-16 Ha under reference), so a process under other
    kernels builds its own instead of reading another's (which failed the Hamiltonian
    record test as an emulated Zen 3 after a native run)."""
    import subprocess
    import sys

    from conftest import pinned_env

    def status(coretype):
        run = subprocess.run([sys.executable, "-c", _ORBITALS, coretype, str(tmp_path)],
                             capture_output=True, text=True, env=pinned_env(1))
        assert run.returncode == 0, run.stderr
        return run.stdout.split()[-1]

    assert [status("portable"), status("portable"), status("Sandybridge")] == \
        ["built", "hit", "built"]

