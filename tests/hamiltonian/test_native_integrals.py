"""The ``pennylane_native`` path in seconds (issue 37): PySCF's integrals over PennyLane's
basis functions, PennyLane's SCF replayed in numpy, PennyLane's own fermionic and qubit
mapping (:mod:`qencode_nb.hamiltonian.native_integrals`), against PennyLane's
``qchem.molecular_hamiltonian`` itself, the slow oracle (method ``pennylane``).

Tolerances: the AO integrals within 1e-12 (libcint vs PennyLane's pure-Python
integrals, measured ~1e-14); operators within ``rules.COEFF_MATCH_HA`` (1e-8 Ha, the
provenance check's own tolerance; measured <= 4e-13 Ha on the 57 cached slow builds of
``benchmarks/native_proof.py`` whose orbitals are not degenerate) after
:func:`qencode_nb.hamiltonian.equivalence.compare_terms`' equivalences (an orbital's sign is
LAPACK's choice in either build).  The budget and the qubit-count precheck run on real
entries of ``../shared``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import LIH_PAR_HEA, SHARED_HISTORY, reseal

H2_631G_BK_V3 = (SHARED_HISTORY / "releases" / "v3.1" / "db"
                 / "H2_631g_BK_HEA_v3_tapered__sha256_b930fe406587de12.json")


def _terms(H):
    import pennylane as qml

    from qencode_nb.entry.pauli_strings import format_pauli_word

    return {format_pauli_word(dict(w)): float(np.real(c))
            for w, c in qml.pauli.pauli_sentence(H).items()}


@pytest.mark.parametrize("symbols, xyz_bohr, basis, ne, no, mapping", [
    (["H", "H"], [0, 0, 0, 0, 0, 1.4], "sto-3g", 2, 2, "jordan_wigner"),
    (["Li", "H"], [0, 0, 0, 0, 0, 3.0], "sto-3g", 2, 3, "bravyi_kitaev"),
    (["H", "H"], [0, 0, 0, 0, 0, 1.4], "6-31g", 2, 3, "bravyi_kitaev"),
])
def test_fast_native_operator_equals_molecular_hamiltonian(symbols, xyz_bohr, basis, ne, no,
                                                           mapping):
    from pennylane import qchem

    from qencode_nb.hamiltonian.equivalence import compare_terms
    from qencode_nb.hamiltonian.native_integrals import native_hamiltonian
    from qencode_nb.rules import COEFF_MATCH_HA

    fast, n_fast = native_hamiltonian(symbols, xyz_bohr, basis, mapping, ne, no)
    slow, n_slow = qchem.molecular_hamiltonian(symbols, np.array(xyz_bohr, dtype=float),
                                               basis=basis, mapping=mapping,
                                               active_electrons=ne, active_orbitals=no)
    assert n_fast == n_slow == 2 * no
    cmp = compare_terms(_terms(slow), _terms(fast), tolerance_ha=COEFF_MATCH_HA)
    assert cmp.equal, cmp.to_record()
    assert cmp.to_record()["max_abs_dcoeff"] < 1e-11


def test_bravyi_kitaev_float_wires_are_written_as_integers_and_a_sign_gauge_is_found():
    """Issue 51: PennyLane 0.45.0's Bravyi-Kitaev mapping labels some wires with floats
    (``numpy.float64(3.0)``) in LiH STO-3G [2e,3o]; they were written ``Z3.0``, which
    ``compare_terms`` could not parse once an orbital's sign differed (on Zen 3's kernels).
    Here the sign gauge is made on purpose, so the path runs on every host kind: the
    terms conjugated by Z2 (every term with X or Y on wire 2 flips sign) are found equal by
    that Pauli conjugation."""
    import pennylane as qml
    from pennylane import qchem

    from qencode_nb.entry.pauli_strings import format_pauli_word, parse_pauli_string
    from qencode_nb.hamiltonian.equivalence import compare_terms

    H, _ = qchem.molecular_hamiltonian(["Li", "H"], np.array([0, 0, 0, 0, 0, 3.0]),
                                       basis="sto-3g", mapping="bravyi_kitaev",
                                       active_electrons=2, active_orbitals=3)
    words = [dict(w) for w in qml.pauli.pauli_sentence(H)]
    assert any(isinstance(wire, float) for w in words for wire in w), \
        "PennyLane no longer labels BK wires with floats: this test's input is gone"
    terms = _terms(H)
    assert len(terms) == len(words)                        # no two words written alike
    for string in terms:
        assert format_pauli_word(parse_pauli_string(string)) == string
    gauged = {s: (-c if parse_pauli_string(s).get(2) in ("X", "Y") else c)
              for s, c in terms.items()}
    assert gauged != terms
    cmp = compare_terms(terms, gauged)
    assert cmp.equal and cmp.equivalence == "pauli conjugation", cmp.to_record()
    assert cmp.to_record()["conjugating_pauli"] == "Z2"
    with pytest.raises(ValueError, match="wire 2.5 is not an integer"):
        format_pauli_word({2.5: "X"})


def test_ao_integrals_are_pennylanes():
    """S, H_core and (pq|rs) over LiH STO-3G's six functions: PySCF in PennyLane's
    normalisation and order against PennyLane's own integral functions."""
    from pennylane import qchem

    from qencode_nb.hamiltonian.native_integrals import ao_integrals, pennylane_molecule

    mol = pennylane_molecule(["Li", "H"], [0, 0, 0, 0, 0, 3.0], "sto-3g")
    s, h, eri = ao_integrals(mol)
    s_pl = np.asarray(qchem.overlap_matrix(mol.basis_set)())
    h_pl = np.asarray(qchem.core_matrix(mol.basis_set, mol.nuclear_charges,
                                        mol.coordinates)())
    eri_pl = np.asarray(qchem.repulsion_tensor(mol.basis_set)())
    assert np.abs(s - s_pl).max() < 1e-12
    assert np.abs(h - h_pl).max() < 1e-12
    assert np.abs(eri - eri_pl).max() < 1e-12


def test_unknown_method_is_refused_naming_the_accepted():
    from qencode_nb.hamiltonian.native import build_native

    with pytest.raises(ValueError, match="'gpu' is not one of integrals, pennylane"):
        build_native("H 0 0 0; H 0 0 0.74", "sto-3g", 2, 2, "jordan_wigner", -1.1,
                     method="gpu")


def test_a_v3_native_entry_is_proven_cold_and_skipped_over_budget(tmp_path):
    """QEncode v3.1 H2 6-31G BK/HEA was built natively: with an empty cache the check
    builds the path and passes; with ``proof_budget`` 0 it builds nothing and reads
    unverified, naming the estimate and the flag."""
    from qencode_nb.entry import load
    from qencode_nb.hamiltonian.hamcheck import check_entry

    entry = load(H2_631G_BK_V3)
    proven = check_entry(entry, cache_dir=tmp_path / "a", proof_budget=60)
    assert proven.status == "pass" and proven.hamiltonian_source == "pennylane_native"
    assert proven.paths["pennylane_native"]["cache_status"] == "built"
    skipped = check_entry(entry, cache_dir=tmp_path / "b", proof_budget=0)
    assert skipped.status == "unverified" and skipped.hamiltonian_source is None
    path = skipped.paths["pennylane_native"]
    assert path["built"] is False and path["skipped"] is True and path["estimated_seconds"] > 0
    assert skipped.reason.startswith(
        f"native build skipped (estimated {path['estimated_seconds']:.0f} s; "
        "--proof-budget to allow it)")
    # a cache hit is served whatever the budget
    hit = check_entry(entry, cache_dir=tmp_path / "a", proof_budget=0)
    assert hit.status == "pass" and hit.paths["pennylane_native"]["cache_status"] == "hit"


def test_a_wrong_mapping_ends_in_seconds_with_a_named_cause(tmp_path):
    """LiH cc-pVDZ PAR/HEA re-sealed with its mapping written ``jordan-wigner`` (a new
    user's typo; PennyLane's own build took 1,679 s here): both paths are built cold and
    the check fails naming each path's largest difference."""
    from qencode_nb.entry import load
    from qencode_nb.hamiltonian.hamcheck import check_entry

    def edit(r):
        r["encoding"]["mapping"] = "jordan-wigner"

    entry = load(reseal(tmp_path, LIH_PAR_HEA, edit, "lih-jw"))
    check = check_entry(entry, cache_dir=tmp_path / "cache")
    assert check.status == "fail" and check.hamiltonian_source is None
    assert check.paths["pennylane_native"]["built"] is True
    assert "of_bridge differs by" in check.reason
    assert "pennylane_native differs by" in check.reason


def test_a_qubit_count_no_path_gives_is_decided_before_building():
    from types import SimpleNamespace

    from qencode_nb.hamiltonian.sources import qubit_count_mismatch

    rebuilt = SimpleNamespace(tapering=SimpleNamespace(n_qubits_tapered=8))
    assert qubit_count_mismatch(8, rebuilt) is None
    assert qubit_count_mismatch(None, rebuilt) is None
    assert qubit_count_mismatch(10, rebuilt) == (
        "cannot give the stored 10 qubits: the declared mapping, active space and "
        "tapering give 8 (the of_bridge rebuild)")


def test_proof_budget_parameter_is_checked():
    from qencode_nb.errors import ParameterError
    from qencode_nb.options import check_proof_budget

    assert check_proof_budget(None) is None and check_proof_budget(0) == 0.0
    for bad in (-1, float("nan"), True, "60"):
        with pytest.raises(ParameterError, match="proof_budget .* is not accepted; "
                                                 r"accepted: seconds >= 0 or None"):
            check_proof_budget(bad)
