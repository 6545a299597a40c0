"""The Pauli-word check of a tapered excitation generator against the generator's
matrix rule (:mod:`qencode_nb.engines.excitation_check`): the same keep/drop decision
on every excitation of a real > 12-qubit pool, on generators that fail, and across the
tolerance, where the bounds must hand over to the matrix."""

from __future__ import annotations

import pytest
from conftest import SHARED_DB

from qencode_nb.rules import B_CUBED_TOL


def _tapered_generators(entry_name: str):
    """Every tapered UCCSD generator of an entry's pool (kept or not) and the wires."""
    import pennylane as qml
    from pennylane import qchem

    from qencode_nb import entry as entries
    from qencode_nb.engines.ansatz import uccsd_excitations
    from qencode_nb.hamiltonian.cache import cached_rebuild_entry

    e = entries.load(SHARED_DB / entry_name)
    _, tap = cached_rebuild_entry(e, light=True)
    wires = list(range(tap.n_qubits_full - len(tap.generators)))
    out = []
    with qml.QueuingManager.stop_recording():
        for gate, w in uccsd_excitations(e.active_space[0], tap.n_qubits_full):
            G = qml.generator(gate(0.0, wires=list(w)), format="observable")
            out.append(qchem.taper(G, tap.generators, tap.paulixops, tap.z2_sectors))
    return e, out, wires


@pytest.mark.slow
def test_every_h8_excitation_gets_the_matrix_rules_decision():
    """H8 [8e,8o], 16 -> 13 qubits: all 360 UCCSD excitations, tapered; the pool keeps
    278 of them (``adapt.n_operators_pool``), by either check."""
    from qencode_nb.engines.excitation_check import keeps, keeps_by_matrix

    e, generators, wires = _tapered_generators(
        "H8_ccpvdz_JW_ADAPT_v4_casscf_tapered__sha256_b2328caa5d17467b.json")
    fast = [keeps(G, wires) for G in generators]
    slow = [keeps_by_matrix(G, wires) for G in generators]
    assert fast == slow
    assert len(generators) == 360
    assert sum(fast) == e.adapt["n_operators_pool"] == 278
    assert len(generators) > sum(fast)          # some are dropped: both outcomes occur


def test_a_generator_that_is_not_an_excitation_is_dropped_by_both():
    """``G = (X + Z)/2``: ``G**2 = 1/2``, so ``B**3 + B = -2iG``, far above the tolerance;
    ``G = 0`` has no non-zero entry."""
    import pennylane as qml

    from qencode_nb.engines.excitation_check import keeps, keeps_by_matrix

    wires = [0, 1]
    bad = 0.5 * qml.PauliX(0) + 0.5 * qml.PauliZ(0)
    zero = 0.0 * qml.PauliX(0) @ qml.PauliY(1)
    single = 0.25 * qml.PauliX(0) @ qml.PauliY(1) - 0.25 * qml.PauliY(0) @ qml.PauliX(1)
    for G, expected in ((bad, False), (zero, False), (single, True)):
        assert keeps(G, wires) is keeps_by_matrix(G, wires) is expected, G


@pytest.mark.parametrize("delta", [1e-11, 1e-10, 1e-9, 2e-9, 3e-9, 5e-9, 1e-8, 3e-8, 1e-7])
def test_near_the_tolerance_both_checks_agree(delta):
    """A single excitation plus ``delta * Z0``: ``B**3 + B`` grows like ``4 delta``
    and crosses :data:`~qencode_nb.rules.B_CUBED_TOL` inside this range, where the
    Pauli bounds leave the decision to the matrix."""
    import pennylane as qml

    from qencode_nb.engines.excitation_check import keeps, keeps_by_matrix

    wires = [0, 1, 2]
    G = (0.25 * qml.PauliX(0) @ qml.PauliY(1) - 0.25 * qml.PauliY(0) @ qml.PauliX(1)
         + delta * qml.PauliZ(2))
    assert keeps(G, wires) is keeps_by_matrix(G, wires)
    if delta <= 1e-10:
        assert keeps(G, wires)
    if delta >= 1e-7:
        assert not keeps(G, wires)
    assert B_CUBED_TOL == 1e-8   # the range above brackets this tolerance
