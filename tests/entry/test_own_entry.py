"""A YAML entry of one's own (issue 23 item 7): the procedure alone is enough.

``params/bh.yaml`` (BH STO-3G [4e,4o], Jordan-Wigner, Z2-tapered to 4 qubits, HEA,
COBYLA) is not a QEncode molecule: no ``qencode`` section, no stored Hamiltonian, no
published result.  Its audit rebuilds the problem, re-runs it, measures tier 2 against
the rebuilt Hamiltonian's exact ground energy, reads every published comparison n/a with
the reason and shows the rebuilt problem's qubit count.
"""

from __future__ import annotations

import math

import papermill
import pytest
import yaml

from conftest import AUDIT_NB, ROOT
from qencode_nb import read_records
from qencode_nb.entry import load
from qencode_nb.errors import EntryError
from qencode_nb.paths import PARAMS_DIR
from qencode_nb.rules import CERTIFICATION_THRESHOLD_HA

BH = PARAMS_DIR / "bh.yaml"

#: The procedure alone, as the issue lists it (molecule, geometry, basis, charge, spin,
#: active space, orbitals, mapping, tapering, ansatz, optimiser, budgets, seed).
MINIMAL = {
    "problem": {"molecule": "BH", "geometry": "B 0.0 0.0 0.0; H 0.0 0.0 1.2324",
                "basis": "sto-3g", "charge": 0, "spin": 0, "active_space": [4, 4],
                "orbital_optimization": "hf"},
    "encoding": {"mapping": "jordan_wigner", "ansatz": "hea", "reps": 2,
                 "tapering_sectors": [1, 1, 1, 1]},
    "run": {"optimizer": "COBYLA", "max_iterations": 300, "restarts": 2, "seed": 7},
}


def _write(tmp_path, data, name="mine.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def test_bh_is_not_a_qencode_molecule():
    """The example's molecule is none of QEncode v4's catalogue (molecules_v4.json) nor
    of its earlier releases' entries."""
    import json

    from conftest import SHARED_DB

    catalogue = json.loads((SHARED_DB.parent / "molecules_v4.json").read_text())
    names = {str(m.get("name")).lower() for m in catalogue["entries"]}
    assert names and "bh" not in names
    history = ROOT.parent / "shared" / "qencode-history" / "releases"
    for path in history.rglob("*.json"):
        assert not path.name.lower().startswith("bh_"), path


def test_the_procedure_alone_loads(tmp_path):
    e = load(_write(tmp_path, MINIMAL))
    assert e.is_own and e.sha256 is None and e.entry_id == "mine"
    assert e.published_energy is None and e.exact_ground_energy is None
    assert e.tapered_num_qubits is None and e.hf_tapered_state is None
    assert set(e.from_rebuild) == {"tapered_num_qubits", "hf_tapered_state",
                                   "bk_constant_correction_ha"}
    assert e.threshold == CERTIFICATION_THRESHOLD_HA and "missing" in e.threshold_source
    # what the generator defaults, reported undeclared (never silently)
    assert set(e.undeclared) == {"backend", "hamiltonian_source", "early_stop"}
    assert e.file_sha256 and len(e.file_sha256) == 64


def test_a_missing_procedure_field_is_refused_naming_it(tmp_path):
    for section, key in (("run", "seed"), ("problem", "basis"), ("encoding", "mapping"),
                         ("encoding", "tapering_sectors")):
        data = yaml.safe_load(yaml.safe_dump(MINIMAL))
        del data[section][key]
        with pytest.raises(EntryError, match=rf"field {section}\.{key}: required field is "
                                             "missing"):
            load(_write(tmp_path, data))


def test_a_published_result_needs_its_energy_and_one_threshold(tmp_path):
    data = dict(MINIMAL, published={"nfev": 600})
    with pytest.raises(EntryError, match=r"field published\.energy_ha: required"):
        load(_write(tmp_path, data))
    data = dict(MINIMAL, threshold_ha=0.0016, published={"energy_ha": -24.78,
                                                         "threshold_ha": 0.01})
    with pytest.raises(EntryError, match=r"field threshold_ha: 0.0016 but "
                                         r"published.threshold_ha is 0.01"):
        load(_write(tmp_path, data))
    e = load(_write(tmp_path, dict(MINIMAL, threshold_ha=0.0016,
                                   published={"energy_ha": -24.78})))
    assert e.threshold == 0.0016 and e.threshold_source == "threshold_ha"
    assert e.published_energy == -24.78 and e.no_published_reason is None


def test_a_qencode_yaml_still_states_every_published_fact(tmp_path):
    """A YAML with a ``qencode`` section (the bundled lih) stays strict: a published
    fact left out is refused, not defaulted."""
    data = yaml.safe_load((PARAMS_DIR / "lih.yaml").read_text())
    del data["published"]["nfev"]
    with pytest.raises(EntryError, match=r"field published\.nfev: required field is missing"):
        load(_write(tmp_path, data))


@pytest.mark.notebook
def test_bh_audit_end_to_end_in_a_real_kernel(tmp_path):
    """papermill audit.ipynb -p entry bh (full mode, about 25 s): tier 2 against the
    rebuilt exact ground energy, published comparisons n/a with reasons, 4 qubits."""
    out = tmp_path / "bh.ipynb"
    papermill.execute_notebook(str(AUDIT_NB), str(out), parameters={"entry": "bh"},
                               progress_bar=False, cwd=str(ROOT))
    r = read_records(out)
    assert r["done"] is True and r.get("error") is None
    assert r["entry_id"] == "bh" and r["entry_source"] == str(BH)
    # The rebuilt problem: 4 tapered qubits, its exact ground energy the reference.
    h = r["hamiltonian"]
    assert h["num_qubits"] == 4 and h["sectors_match"] is True and h["terms_match"] is None
    from pyscf import gto, mcscf, scf

    mol = gto.M(atom="B 0 0 0; H 0 0 1.2324", basis="sto-3g", charge=0, spin=0, verbose=0)
    casci = mcscf.CASCI(scf.RHF(mol).run(), 4, 4).run().e_tot
    # the rebuilt qubit Hamiltonian's ground energy is the CASCI energy (of_bridge: the
    # generator's own check allows 1e-4 Ha; measured 1e-14)
    assert abs(h["ground_energy"] - casci) < 1e-8
    assert r["reference_energy"] == h["ground_energy"]
    assert r["rerun"]["config"]["early_stop_target_ha"] == pytest.approx(casci, abs=1e-8)
    # Tier 2: the regenerated error against that energy.
    err = abs(r["rerun_energy"] - h["ground_energy"]) * 1e3
    assert math.isclose(r["error_mha"], err, rel_tol=0, abs_tol=1e-9)
    assert r["threshold_mha"] == CERTIFICATION_THRESHOLD_HA * 1e3
    assert r["certified"] is (r["error_mha"] < r["threshold_mha"])
    cert = r["tiers"]["certification"]
    assert cert["status"] == ("pass" if r["certified"] else "fail")
    assert any("rebuilt Hamiltonian's exact ground energy" in x for x in cert["reasons"])
    # The published comparisons: n/a, each with its reason.
    assert r["published_error_mha"] is None and r["margin_published"] is None
    assert r["movement_mha"] is None and r["difference"] is None
    assert r["replay"]["status"] == "n/a" and "no published energy" in r["replay"]["reason"]
    assert r["consistency"]["status"] == "n/a"
    assert "publishes no energy" in r["consistency"]["reasons"][0]
    assert r["tiers"]["bit_identical"]["status"] == "n/a"
    assert "publishes no energy" in r["tiers"]["bit_identical"]["reasons"][0]
    assert r["integrity"]["status"] == "n/a" and r["alerts"] == []
    import hashlib

    assert r["integrity"]["file_sha256"] == hashlib.sha256(BH.read_bytes()).hexdigest()
    # The card shows the rebuilt qubit count, never "None qubits".
    from qencode_nb.verdict.card import Card

    text = Card(r).text()
    assert "4 qubits" in text and "None qubits" not in text, text
    assert "published n/a" not in text and "no published energy" in text
    assert "n/a (none published)" in Card(r).html()


def test_a_cation_fails_the_of_bridge_check_with_the_reason():
    """HeH+ STO-3G [2e,2o] (a new user's YAML): the of_bridge check, as QEncode's
    generator runs it, compares the lowest eigenvalue over every electron number with
    CASCI; for a cation a state with fewer electrons lies lower, so the check cannot
    pass.  The message says so, instead of only the energies."""
    from qencode_nb.hamiltonian.chemistry import run_chemistry
    from qencode_nb.errors import HamiltonianMismatch
    from qencode_nb.hamiltonian.of_bridge import build_of_bridge

    chem = run_chemistry("He 0 0 0; H 0 0 0.772", "sto-3g", 1, 0, 2, 2, "hf")
    with pytest.raises(HamiltonianMismatch, match="lowest eigenvalue over every electron "
                                                  "number.*e.g. a cation"):
        build_of_bridge(chem, "parity")
