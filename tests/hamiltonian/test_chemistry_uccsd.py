"""Chemistry, of_bridge Hamiltonian, Z2 tapering and tapered UCCSD against real entries.

Every check rebuilds from the entry's declared procedure with the real
libraries (PySCF, OpenFermion, PennyLane) and compares with what the entry
stores.  Tolerances are 1e-8 Ha for rebuilt numbers (PySCF moves by a few
ulps with the CPU's BLAS kernel) and 1e-9 Ha for the replay; bit-identity is
asserted only in a subprocess that pins ``OPENBLAS_CORETYPE=Cooperlake``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import (ROOT, SHARED_DB as DB, coretype_missing, pinned_env,  # noqa: E402,F401
                      reference_only)

UCCSD = {
    "H2_JW": "H2_ccpvdz_JW_UCCSD_v4_tapered__sha256_93a0f8a8604d9aed.json",
    "H2_PAR": "H2_ccpvdz_PAR_UCCSD_v4_tapered__sha256_b321a0331d6d13eb.json",
    "H2_BK": "H2_ccpvdz_BK_UCCSD_v4_tapered__sha256_d3f280f5c8f32ccc.json",
    "HF_BK": "HF_ccpvdz_BK_UCCSD_v4_tapered__sha256_42ad3163dd5bcf87.json",
    "LiH_JW": "LiH_ccpvdz_JW_UCCSD_v4_tapered__sha256_21e143f12ed3a4b6.json",
    "BeH2_PAR": "BeH2_ccpvdz_PAR_UCCSD_v4_tapered__sha256_f71541a4f8d3e964.json",
    # CASSCF orbitals and the 12-qubit edge of taper_operation (~10 s).
    "N2_JW_casscf": "N2_ccpvdz_JW_UCCSD_v4_casscf_tapered__sha256_5912a448b32eaa07.json",
}

#: The entries whose rebuild holds under the reference kernel triple only: PySCF's
#: CASSCF orbitals follow the kernels (under portable N2's first excited CASCI root
#: moves 9.8e-6 Ha and its tapered Hamiltonian 0.06 Ha; issue 22).
KEYS = [pytest.param(k, marks=reference_only) if k.endswith("casscf") else k for k in UCCSD]

TOL_REBUILD_HA = 1e-8
TOL_REPLAY_HA = 1e-9


def _entry(key: str) -> dict:
    path = DB / UCCSD[key]
    if not path.is_file():
        pytest.fail(f"shared QEncode entry missing: {path}")
    return json.loads(path.read_text())


_CACHE: dict = {}


def _rebuilt(key: str):
    """(entry, ChemistryResult, TaperResult, pool), built once per session."""
    if key not in _CACHE:
        from qencode_nb.engines.ansatz import tapered_uccsd_ops
        from qencode_nb.hamiltonian.rebuild import rebuild_tapered_from_entry

        entry = _entry(key)
        chem, tap = rebuild_tapered_from_entry(entry)
        pool = tapered_uccsd_ops(chem.num_electrons, tap.n_qubits_full,
                                 tap.generators, tap.paulixops, tap.z2_sectors)
        _CACHE[key] = (entry, chem, tap, pool)
    return _CACHE[key]


def _stored_terms(entry) -> dict:
    return {t["pauli_string"]: t["coefficient"]
            for t in entry["artifacts"]["qubit_hamiltonian"]["pauli_terms"]}


@pytest.mark.bitlevel
@pytest.mark.parametrize("key", KEYS)
def test_chemistry_matches_entry(key):
    entry, chem, _, _ = _rebuilt(key)
    ref = entry["results"]["reference"]
    assert chem.orbital_optimization == entry["problem"]["orbital_optimization"]
    assert abs(chem.e_hf - ref["hf_energy_hartree"]) <= TOL_REBUILD_HA
    assert abs(chem.e_casci - ref["casci_ground_energy_hartree"]) <= TOL_REBUILD_HA
    assert abs(chem.e_casci_first_excited - ref["casci_first_excited_hartree"]) <= TOL_REBUILD_HA
    if ref["casscf_energy_hartree"] is None:
        assert chem.e_casscf is None
    else:
        assert abs(chem.e_casscf - ref["casscf_energy_hartree"]) <= TOL_REBUILD_HA


@pytest.mark.bitlevel
@pytest.mark.parametrize("key", KEYS)
def test_tapered_hamiltonian_matches_entry(key):
    from qencode_nb.hamiltonian.pauli import to_pauli_terms

    entry, _, tap, _ = _rebuilt(key)
    stored = _stored_terms(entry)
    rebuilt_list = to_pauli_terms(tap.H_tapered)
    rebuilt = {t["pauli_string"]: t["coefficient"] for t in rebuilt_list}
    assert set(rebuilt) == set(stored)
    assert len(rebuilt_list) == len(stored)
    max_delta = max(abs(rebuilt[k] - stored[k]) for k in stored)
    print(f"{key}: max |delta coefficient| = {max_delta:.3e} Ha")
    assert max_delta <= TOL_REBUILD_HA
    # The generator's term order (pauli_rep order of the tapered operator) too.
    assert [t["pauli_string"] for t in rebuilt_list] == list(stored)

    stored_tap = entry["encoding"]["tapering"]
    assert tap.z2_sectors == stored_tap["sectors"]
    assert tap.hf_tapered.tolist() == stored_tap["hf_tapered_state"]
    assert tap.n_qubits_full == stored_tap["original_num_qubits"]
    assert tap.n_qubits_tapered == stored_tap["tapered_num_qubits"]
    assert tap.num_symmetries == stored_tap["num_symmetries"]
    assert tap.bk_imaginary_stripped is stored_tap["bk_imaginary_stripped"]
    assert tap.bk_max_imaginary_abs_ha == stored_tap["bk_max_imaginary_abs_ha"]
    stored_corr = stored_tap["bk_constant_correction_ha"]
    if stored_corr is None:
        assert tap.bk_constant_correction_ha is None
    else:
        assert abs(tap.bk_constant_correction_ha - stored_corr) <= TOL_REBUILD_HA


@pytest.mark.parametrize("key", list(UCCSD))
def test_uccsd_pool_size_and_replay(key):
    import numpy as np
    import pennylane as qml

    from qencode_nb.engines.ansatz import uccsd_circuit
    from qencode_nb.hamiltonian.pauli import from_pauli_terms

    entry, _, _, pool = _rebuilt(key)
    vqe = entry["results"]["vqe"]
    assert len(pool) == vqe["num_params"] == len(vqe["optimal_params"])

    qh = entry["artifacts"]["qubit_hamiltonian"]
    H = from_pauli_terms(qh["pauli_terms"], qh["num_qubits"])
    wires = list(range(qh["num_qubits"]))
    circuit = uccsd_circuit(entry["encoding"]["tapering"]["hf_tapered_state"], pool)

    @qml.qnode(qml.device("default.qubit", wires=wires))
    def energy(params):
        circuit(params, wires=wires)
        return qml.expval(H)

    correction = entry["encoding"]["tapering"]["bk_constant_correction_ha"] or 0.0
    e_replay = float(energy(np.array(vqe["optimal_params"], dtype=float))) + correction
    delta = e_replay - vqe["best_energy_hartree"]
    print(f"{key}: replay delta = {delta:.3e} Ha, bit-identical = "
          f"{e_replay == vqe['best_energy_hartree']}")
    assert abs(delta) <= TOL_REPLAY_HA


def test_no_shared_bk_entry_has_stripped_imaginary_parts():
    """None of the shared BK entries exercised the strip; ours agrees."""
    bk = [p for p in sorted(DB.glob("*.json"))
          if json.loads(p.read_text())["encoding"]["mapping"] == "bravyi_kitaev"]
    assert [p.name.split("_v4")[0] for p in bk] == [
        "H2_ccpvdz_BK_HEA", "H2_ccpvdz_BK_UCCSD", "HF_ccpvdz_BK_UCCSD"]
    for p in bk:
        tapering = json.loads(p.read_text())["encoding"]["tapering"]
        assert tapering["bk_imaginary_stripped"] is False
        assert tapering["bk_max_imaginary_abs_ha"] is None
    for key in ("H2_BK", "HF_BK"):
        _, _, tap, _ = _rebuilt(key)
        assert tap.bk_imaginary_stripped is False
        assert tap.max_imaginary_abs_ha <= 1e-12


def test_strip_imaginary_rebuilds_a_real_operator_and_checks_it():
    import pennylane as qml
    from pennylane.pauli import PauliSentence, PauliWord

    from qencode_nb.hamiltonian.exact import exact_ground_energy
    from qencode_nb.errors import HamiltonianMismatch
    from qencode_nb.hamiltonian.tapering import strip_imaginary

    noisy = PauliSentence({PauliWord({}): -1.0 + 0.0j,
                           PauliWord({0: "Z"}): 0.5 + 2e-3j,
                           PauliWord({0: "X", 1: "X"}): 0.25 + 0.0j,
                           PauliWord({1: "Z"}): 1e-15 + 0.0j}).operation()
    e_real = exact_ground_energy(qml.dot([-1.0, 0.5, 0.25], [qml.Identity(0), qml.Z(0),
                                                             qml.X(0) @ qml.X(1)]))
    clean, stripped, max_imag = strip_imaginary(noisy, e_real)
    assert stripped and max_imag == pytest.approx(2e-3)
    coeffs = dict(clean.pauli_rep.items())
    assert all(isinstance(c, float) or c.imag == 0 for c in coeffs.values())
    assert PauliWord({1: "Z"}) not in coeffs  # |Re c| <= 1e-14 dropped
    with pytest.raises(HamiltonianMismatch, match="moved the ground energy"):
        strip_imaginary(noisy, e_real + 0.5)
    tiny = PauliSentence({PauliWord({0: "Z"}): 1.0 + 1e-9j}).operation()
    same, stripped, _ = strip_imaginary(tiny, -1.0)
    assert same is tiny and not stripped


def test_apply_tapered_op_reproduces_the_generators_double_queueing():
    """Multi-wire Exp ops are queued twice (qml.apply of an already queued op);
    single-wire Pauli bases become one RX/RY/RZ."""
    import pennylane as qml

    from qencode_nb.engines.ansatz import apply_tapered_op

    multi = qml.exp(qml.X(0) @ qml.Y(1), 0j)
    single = qml.exp(qml.Y(1), 0j)
    with qml.queuing.AnnotatedQueue() as q:
        apply_tapered_op(multi, 0.3)
        apply_tapered_op(single, 0.7)
    tape = qml.tape.QuantumScript.from_queue(q)
    names = [op.name for op in tape.operations]
    assert names == ["Exp", "Exp", "RY"]
    assert tape.operations[0].coeff == 0.3j and tape.operations[2].parameters == [0.7]


def test_empty_pool_is_refused():
    from qencode_nb.engines.ansatz import uccsd_circuit

    with pytest.raises(ValueError, match="falls back to HEA"):
        uccsd_circuit([1, 0], [])


def test_bad_fields_name_the_field():
    from qencode_nb.hamiltonian.chemistry import run_chemistry
    from qencode_nb.errors import EntryError
    from qencode_nb.hamiltonian.rebuild import rebuild_tapered, rebuild_tapered_from_entry

    with pytest.raises(EntryError, match="encoding.mapping.*'jw'.*accepted"):
        rebuild_tapered("H 0 0 0; H 0 0 0.735", "sto-3g", 0, 0, 2, 2, "hf", "jw")
    with pytest.raises(EntryError, match="orbital_optimization.*'uhf'.*hf, casscf"):
        run_chemistry("H 0 0 0; H 0 0 0.735", "sto-3g", 0, 0, 2, 2, "uhf")
    with pytest.raises(EntryError, match="num_electrons 6 does not fit"):
        run_chemistry("H 0 0 0; H 0 0 0.735", "sto-3g", 0, 0, 6, 2, "hf")
    entry = _entry("H2_JW")
    del entry["problem"]["spin"]
    with pytest.raises(EntryError, match="problem.spin.*never defaulted"):
        rebuild_tapered_from_entry(entry)


def test_modules_do_not_import_numpy_on_import():
    code = ("import sys, qencode_nb.hamiltonian.chemistry, qencode_nb.hamiltonian.pauli, "
            "qencode_nb.hamiltonian.of_bridge, qencode_nb.hamiltonian.tapering, "
            "qencode_nb.hamiltonian.exact, "
            "qencode_nb.engines.ansatz, qencode_nb.hamiltonian.rebuild; "
            "print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == "False"


_BIT_SCRIPT = r"""
import json, sys
from qencode_nb.hamiltonian.rebuild import rebuild_tapered_from_entry
from qencode_nb.hamiltonian.pauli import to_pauli_terms
out = {}
for path in sys.argv[1:]:
    e = json.load(open(path))
    chem, tap = rebuild_tapered_from_entry(e)
    ref = e["results"]["reference"]
    stored = [(t["pauli_string"], t["coefficient"])
              for t in e["artifacts"]["qubit_hamiltonian"]["pauli_terms"]]
    rebuilt = [(t["pauli_string"], t["coefficient"]) for t in to_pauli_terms(tap.H_tapered)]
    out[e["entry_id"]] = {
        "hf": chem.e_hf == ref["hf_energy_hartree"],
        "casci": chem.e_casci == ref["casci_ground_energy_hartree"],
        "terms": rebuilt == stored,
        "correction": tap.bk_constant_correction_ha
                      == e["encoding"]["tapering"]["bk_constant_correction_ha"],
    }
print(json.dumps(out))
"""




@pytest.mark.hostkind
def test_cooperlake_kernel_makes_the_rebuild_bit_identical():
    """With OPENBLAS_CORETYPE=Cooperlake (set before numpy loads) PySCF's numbers,
    every Hamiltonian coefficient and the constant correction equal the entries'
    to the last bit (measured on an AMD EPYC with AVX-512 BF16; without the pin,
    LiH moves by ~2e-15 Ha and HF by ~1e-13 Ha)."""
    if coretype_missing("Cooperlake"):
        pytest.skip(coretype_missing("Cooperlake"))
    env = pinned_env(1, "Cooperlake", PYTHONPATH=str(ROOT))
    paths = [str(DB / UCCSD[k]) for k in ("LiH_JW", "HF_BK", "BeH2_PAR", "N2_JW_casscf")]
    done = subprocess.run([sys.executable, "-c", _BIT_SCRIPT, *paths], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(result) == 4
    for entry_id, checks in result.items():
        assert all(checks.values()), (entry_id, checks)


@pytest.mark.parametrize("key", ["H2_JW", "LiH_JW"])
def test_classical_comparison_matches_entry(key):
    from qencode_nb.hamiltonian.chemistry import run_chemistry

    entry = _entry(key)
    p = entry["problem"]
    chem = run_chemistry(p["geometry"], p["basis"], p["charge"], p["spin"],
                         p["active_space"]["num_electrons"],
                         p["active_space"]["num_spatial_orbitals"],
                         p["orbital_optimization"], classical=True)
    cc = entry["results"]["classical_comparison"]
    for ours, field in ((chem.e_mp2, "mp2_energy_hartree"), (chem.e_ccsd, "ccsd_energy_hartree"),
                        (chem.e_ccsd_t, "ccsd_t_energy_hartree")):
        assert abs(ours - cc[field]) <= TOL_REBUILD_HA, field
    # The classical methods run before CASCI and do not move it.
    assert abs(chem.e_casci - entry["results"]["reference"]["casci_ground_energy_hartree"]) \
        <= TOL_REBUILD_HA
