"""The generator's QNode ADAPT engine (``run_vqe_adapt`` with
``grad_method="commutator"``, ``scripts/generate_entry_v4.py`` of qencode-benchmark,
commit e1f44cd): the loop's arithmetic (:class:`QNodeBackend`) and the replay of
stored angles (:func:`replay_energy`).

The energy is ``qml.expval(H)`` of a PennyLane circuit (``qml.BasisState`` of the
tapered HF state, then :func:`qencode_nb.engines.ansatz.apply_tapered_op` per
selected operator) on ``qml.device(backend, wires=wires)``; screening is
``-4 Im <H psi| G_k psi>`` on sparse matrices; there is no gradient of the energy
(COBYLA only).  Energies in Ha (uncorrected), angles in radians, gradients in
Ha/rad.  Numpy, scipy and PennyLane are imported inside the functions.
"""

from __future__ import annotations

def selection_circuit(pool, hf_state, selected):
    """``circuit(p, wires)`` of ``run_vqe_adapt``'s ``energy_fn``: ``qml.BasisState`` of
    the tapered HF bits ``hf_state`` (shape ``(n,)``), then
    :func:`qencode_nb.engines.ansatz.apply_tapered_op` of each selected pool operator
    (pool indices ``selected``, in circuit order) at its angle ``p[i]`` (radians)."""
    import numpy as np
    import pennylane as qml

    from qencode_nb.engines.ansatz import apply_tapered_op

    hf = np.array(hf_state, dtype=int)
    ops = [pool[k] for k in selected]

    def circuit(p, wires):
        qml.BasisState(hf, wires=wires)
        for i, op in enumerate(ops):
            apply_tapered_op(op, p[i])

    return circuit


def qnode_energy_fn(H, pool, hf_state, wires, backend):
    """``(device, make)`` with ``make(selected) -> energy(p)`` a PennyLane QNode
    (``run_vqe_adapt``'s ``energy_fn``) on ``qml.device(backend, wires=wires)``."""
    import pennylane as qml

    wires = list(wires)
    dev = qml.device(backend, wires=wires)

    def make(selected):
        circuit = selection_circuit(pool, hf_state, selected)

        @qml.qnode(dev)
        def energy(p):
            circuit(p, wires)
            return qml.expval(H)

        return energy

    return dev, make


class QNodeBackend:
    """The QNode engine on the tapered Hamiltonian ``H`` (PennyLane operator, Ha).

    Args:
        H: tapered qubit Hamiltonian.
        pool: the ADAPT pool (:func:`qencode_nb.engines.ansatz.tapered_uccsd_ops`).
        hf_state: tapered HF bits, shape ``(n,)``.
        wires: sorted Hamiltonian wires, length ``n``.
        backend: PennyLane device name.
    """

    def __init__(self, H, pool, hf_state, wires, backend):
        import numpy as np

        from qencode_nb.engines.statevector import sparse as sv

        self.pool = pool
        self.n_pool = len(pool)
        self.wires = list(wires)
        self.dev, self.make_energy = qnode_energy_fn(H, pool, hf_state, self.wires, backend)
        self.hf = np.array(hf_state, dtype=int)
        self.H_sp = sv.hamiltonian_csr(H, self.wires)
        self.G_sps = [sv.pauli_csr(sv.generator_of(op), self.wires) for op in pool]

    def pool_gradient(self, selected, params):
        import numpy as np

        psi = self.state(selected, np.array(params, dtype=float))
        Hpsi = self.H_sp @ psi
        G_sps = self.G_sps
        # dE/dtheta = -2 * 2 * Im<H psi| G psi> (the generator's _COMM_FACTOR 2.0)
        return lambda k: -2.0 * 2.0 * float(np.imag(np.vdot(Hpsi, G_sps[k] @ psi)))

    def state(self, selected, params):
        """The state of the selection at ``params`` as ``qml.state()`` of a QNode gives
        it, flattened to shape ``(2**n,)`` (complex)."""
        import numpy as np
        import pennylane as qml

        circuit = selection_circuit(self.pool, self.hf, selected)
        wires = self.wires

        @qml.qnode(self.dev)
        def state(p):
            circuit(p, wires)
            return qml.state()

        return np.asarray(state(params), dtype=complex).ravel()

    def energy(self, selected):
        energy_fn = self.make_energy(list(selected))
        return lambda p: float(energy_fn(p))

    def energy_and_grad(self, selected):
        return None


def replay_energy(H, pool, hf_state, selected_indices, params, wires,
                  backend: str = "default.qubit") -> float:
    """Energy of the selected operators at the stored angles, as ``run_vqe_adapt``'s
    ``energy_fn`` evaluates it: ``qml.BasisState``, then
    :func:`~qencode_nb.engines.ansatz.apply_tapered_op` per selected operator (its
    double-queueing quirk included), ``qml.expval(H)`` on
    ``qml.device(backend, wires=wires)``.

    Args:
        H: tapered qubit Hamiltonian (PennyLane operator, Ha), e.g.
            :func:`qencode_nb.hamiltonian.pauli.from_pauli_terms` of the stored terms.
        pool: the ADAPT pool (:func:`qencode_nb.engines.ansatz.tapered_uccsd_ops`).
        hf_state: tapered HF bits, shape ``(n,)``.
        selected_indices: pool indices in circuit order, shape ``(m,)``.
        params: angles (radians), shape ``(m,)``.
        wires: the sorted Hamiltonian wires, length ``n``.
        backend: PennyLane device name.

    Returns:
        the energy in Ha; add ``bk_constant_correction_ha`` (if any) to compare
        with ``results.vqe.best_energy_hartree``.

    Raises:
        ValueError: an index outside the pool, or not one angle per index.
    """
    import numpy as np

    from qencode_nb.engines.base import check_selection

    selected = check_selection(pool, selected_indices, params)
    theta = np.array([float(p) for p in params], dtype=float)
    _, make = qnode_energy_fn(H, pool, hf_state, wires, backend)
    return float(make(selected)(theta))
