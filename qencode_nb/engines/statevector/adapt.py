"""The generator's statevector ADAPT engine (``run_vqe_adapt_statevector``,
``scripts/generate_entry_v4.py`` of qencode-benchmark, commit e1f44cd): the loop's
arithmetic (:class:`StatevectorBackend`: screening ``Re <H psi| B_k psi>`` with
``B_k = 2i G_k``, the exact adjoint gradient) and the replay of stored angles
(:func:`replay_energy`), on :mod:`qencode_nb.engines.statevector.sparse`.

Energies in Ha (uncorrected), angles in radians, gradients in Ha/rad.  Numpy,
scipy and PennyLane are imported inside the functions.
"""

from __future__ import annotations

class StatevectorBackend:
    """The statevector engine: ``H.sparse_matrix`` and ``B = 2iG`` CSR matrices
    on ``2**n`` amplitudes (arguments as :class:`QNodeBackend`, no device)."""

    def __init__(self, H, pool, hf_state, wires):
        from qencode_nb.engines.statevector import sparse as sv

        wires = list(wires)
        self.n_pool = len(pool)
        self.H_sp = H.sparse_matrix(wire_order=wires).tocsr()
        self.Bs, self.B2s = sv.pool_matrices(pool, wires)
        self.psi0 = sv.hf_statevector(hf_state)

    def pool_gradient(self, selected, params):
        import numpy as np

        from qencode_nb.engines.statevector import sparse as sv

        psi = sv.build_state(self.psi0, self.Bs, self.B2s, selected, params)
        Hpsi = self.H_sp @ psi
        Bs = self.Bs
        return lambda k: float(np.real(np.vdot(Hpsi, Bs[k] @ psi)))

    def energy(self, selected):
        from qencode_nb.engines.statevector import sparse as sv

        H_sp, psi0, Bs, B2s = self.H_sp, self.psi0, self.Bs, self.B2s
        return lambda p: sv.energy(H_sp, sv.build_state(psi0, Bs, B2s, selected, list(p)))

    def energy_and_grad(self, selected):
        from qencode_nb.engines.statevector import sparse as sv

        H_sp, psi0, Bs, B2s = self.H_sp, self.psi0, self.Bs, self.B2s
        return lambda p: sv.energy_and_grad(H_sp, Bs, B2s, psi0, selected, list(p))


def replay_energy(H, pool, hf_state, selected_indices, params, wires) -> float:
    """Energy of the selected operators at the stored angles, as the generator's
    ``_sv_energy`` of ``_sv_build_state`` evaluates it: ``H.sparse_matrix`` and
    ``B = 2i G`` CSR matrices, closed-form exponentials, one ``B`` at a time.

    Args:
        H: tapered qubit Hamiltonian (PennyLane operator, Ha).
        pool: the ADAPT pool (:func:`qencode_nb.engines.ansatz.tapered_uccsd_ops`).
        hf_state: tapered HF bits, shape ``(n,)``.
        selected_indices: pool indices in circuit order, shape ``(m,)``.
        params: angles (radians), shape ``(m,)``.
        wires: the sorted Hamiltonian wires, length ``n``.

    Returns:
        the energy in Ha (before the tapering constant correction).

    Raises:
        ValueError: an index outside the pool, or not one angle per index.
    """
    import numpy as np

    from qencode_nb.engines.base import check_selection
    from qencode_nb.engines.statevector import sparse as sv

    selected = check_selection(pool, selected_indices, params)
    theta = np.array([float(p) for p in params], dtype=float)
    wires = list(wires)
    H_sp = H.sparse_matrix(wire_order=wires).tocsr()
    psi = sv.hf_statevector(hf_state)
    for k, angle in zip(selected, list(theta)):  # _sv_build_state, one B at a time
        (B,), (B2,) = sv.pool_matrices([pool[k]], wires)
        psi = sv.apply_exp(B, B2, angle, psi)
    return sv.energy(H_sp, psi)
