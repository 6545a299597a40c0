"""The one exact-diagonalisation function (:mod:`qencode_nb.hamiltonian.exact`): its three
paths agree on a real tapered Hamiltonian, and the ``"dense (via sparse)"`` path
diagonalises one matrix once per process (the rebuild asks for the optimal sector's
ground energy twice: 55 s each for H8)."""

from __future__ import annotations

import pytest


@pytest.fixture
def h2_jw():
    """H2 sto-3g under Jordan-Wigner (4 qubits, Ha), PennyLane's own build."""
    import pennylane as qml

    symbols, coords = ["H", "H"], [0.0, 0.0, -0.6614, 0.0, 0.0, 0.6614]
    H, n = qml.qchem.molecular_hamiltonian(symbols, qml.numpy.array(coords), mapping="jordan_wigner")
    return H, list(range(n))


def test_the_three_paths_give_the_same_ground_energy(h2_jw, monkeypatch):
    """H2's FCI energy, -1.13618945 Ha (to 1e-6 Ha, sto-3g at 0.7 Angstrom), by
    every path; dense and via-sparse agree to 1e-12 Ha."""
    from qencode_nb.hamiltonian import exact

    H, wires = h2_jw
    dense, m1 = exact.exact_ground_energy(H, wires, with_method=True)
    monkeypatch.setattr(exact, "QML_MATRIX_MAX_QUBITS", 2)
    via, m2 = exact.exact_ground_energy(H, wires, with_method=True)
    sparse, m3 = exact.exact_ground_energy(H, wires, dense_max_qubits=2, with_method=True)
    assert (m1, m2, m3) == ("dense", "dense (via sparse)", "sparse")
    assert abs(dense + 1.13618945) < 1e-6
    assert abs(via - dense) < 1e-12 and abs(sparse - dense) < 1e-10


def test_one_matrix_is_diagonalised_once(h2_jw, monkeypatch):
    """The second call on the same operator returns the first float without
    ``eigvalsh``; another operator (a changed coefficient), or the same one under
    another BLAS thread count, is diagonalised anew."""
    import numpy as np
    import pennylane as qml

    from qencode_nb.hamiltonian import exact

    monkeypatch.setattr(exact, "QML_MATRIX_MAX_QUBITS", 2)
    monkeypatch.setattr(exact, "_DENSE_MEMO", {})
    calls = []
    real_eigvalsh = np.linalg.eigvalsh
    monkeypatch.setattr(np.linalg, "eigvalsh", lambda a: calls.append(a.shape) or real_eigvalsh(a))
    H, wires = h2_jw
    first = exact.exact_ground_energy(H, wires)
    again = exact.exact_ground_energy(H, wires)
    assert calls == [(16, 16)] and first.hex() == again.hex()
    shifted = H + 0.25 * qml.PauliZ(0)
    other = exact.exact_ground_energy(shifted, wires)
    assert len(calls) == 2 and other != first
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=2, user_api="blas"):   # other threads: computed anew
        exact.exact_ground_energy(H, wires)
    assert len(calls) == 3
    exact.exact_ground_energy(H, wires)                  # back to the pinned count: memo
    assert len(calls) == 3
    for _ in range(exact.DENSE_MEMO_SIZE + 3):     # bounded: the oldest matrices go
        H = H + 0.01 * qml.PauliZ(1)
        exact.exact_ground_energy(H, wires)
    assert len(exact._DENSE_MEMO) == exact.DENSE_MEMO_SIZE
