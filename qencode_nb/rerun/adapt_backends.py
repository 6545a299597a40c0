"""The ADAPT engines as backends of :func:`qencode_nb.rerun.adapt_loop.run_loop`.

Each implements :class:`qencode_nb.rerun.adapt_loop.AdaptBackend`
(``pool_gradient``, ``energy``, ``energy_and_grad``), with the generator's
arithmetic (``scripts/generate_entry_v4.py``, qencode-benchmark commit e1f44cd)
in the generator's order, so energies and L-BFGS-B trajectories agree bit for
bit:

- :class:`QNodeBackend` (engine ``"qnode"``, ``run_vqe_adapt`` with
  ``grad_method="commutator"``): the energy is ``qml.expval(H)`` of a
  PennyLane circuit (``qml.BasisState`` of the tapered HF state, then
  :func:`qencode_nb.rerun.ansatz.apply_tapered_op` per selected operator);
  screening ``-4 Im <H psi| G_k psi>`` on sparse matrices; no gradient of
  the energy (COBYLA only).
- :class:`StatevectorBackend` (engine ``"statevector"``,
  ``run_vqe_adapt_statevector``): :mod:`qencode_nb.rerun.statevector`;
  screening ``Re <H psi| B_k psi>`` with ``B_k = 2i G_k``; exact adjoint gradient.
- :class:`CISpaceBackend` (the sector engine, ours): the statevector
  procedure in the fixed (N_alpha, N_beta) determinant space
  (:mod:`qencode_nb.rerun.ci_space`): real vectors and PySCF's H·ψ instead of
  ``2**n`` CSR matrices, so energies agree with the statevector engine's to
  rounding, not bit for bit.
- :class:`FastBackend` (the compiled statevector engine, ours): the QNode or
  statevector engine's procedure on :mod:`qencode_nb.rerun.fast_engine`
  (stored Hamiltonian, numba kernels); energies agree to rounding.

Energies in Ha (uncorrected), angles in radians, gradients in Ha/rad.
Numpy, scipy and PennyLane are imported inside the methods.
"""

from __future__ import annotations


def qnode_energy_fn(H, pool, hf_state, wires, backend):
    """``(device, make)`` with ``make(selected) -> energy(p)`` a PennyLane QNode
    (``run_vqe_adapt``'s ``energy_fn``) on ``qml.device(backend, wires=wires)``."""
    import numpy as np
    import pennylane as qml

    from qencode_nb.rerun.ansatz import apply_tapered_op

    hf = np.array(hf_state, dtype=int)
    wires = list(wires)
    dev = qml.device(backend, wires=wires)

    def make(selected):
        ops = [pool[k] for k in selected]

        @qml.qnode(dev)
        def energy(p):
            qml.BasisState(hf, wires=wires)
            for i, op in enumerate(ops):
                apply_tapered_op(op, p[i])
            return qml.expval(H)

        return energy

    return dev, make


class QNodeBackend:
    """The QNode engine on the tapered Hamiltonian ``H`` (PennyLane operator, Ha).

    Args:
        H: tapered qubit Hamiltonian.
        pool: the ADAPT pool (:func:`qencode_nb.rerun.ansatz.tapered_uccsd_ops`).
        hf_state: tapered HF bits, shape ``(n,)``.
        wires: sorted Hamiltonian wires, length ``n``.
        backend: PennyLane device name.
    """

    def __init__(self, H, pool, hf_state, wires, backend):
        import numpy as np

        from qencode_nb.rerun import statevector as sv

        self.pool = pool
        self.n_pool = len(pool)
        self.wires = list(wires)
        self.dev, self.make_energy = qnode_energy_fn(H, pool, hf_state, self.wires, backend)
        self.hf = np.array(hf_state, dtype=int)
        self.H_sp = sv.hamiltonian_csr(H, self.wires)
        self.G_sps = [sv.pauli_csr(sv.generator_of(op), self.wires) for op in pool]

    def pool_gradient(self, selected, params):
        import numpy as np
        import pennylane as qml

        from qencode_nb.rerun.ansatz import apply_tapered_op

        ops = [self.pool[k] for k in selected]
        hf, wires = self.hf, self.wires

        @qml.qnode(self.dev)
        def state(p):
            qml.BasisState(hf, wires=wires)
            for i, op in enumerate(ops):
                apply_tapered_op(op, p[i])
            return qml.state()

        psi = np.asarray(state(np.array(params, dtype=float)), dtype=complex).ravel()
        Hpsi = self.H_sp @ psi
        G_sps = self.G_sps
        # dE/dtheta = -2 * 2 * Im<H psi|G psi> (the generator's _COMM_FACTOR 2.0)
        return lambda k: -2.0 * 2.0 * float(np.imag(np.vdot(Hpsi, G_sps[k] @ psi)))

    def energy(self, selected):
        energy_fn = self.make_energy(list(selected))
        return lambda p: float(energy_fn(p))

    def energy_and_grad(self, selected):
        return None


class StatevectorBackend:
    """The statevector engine: ``H.sparse_matrix`` and ``B = 2iG`` CSR matrices
    on ``2**n`` amplitudes (arguments as :class:`QNodeBackend`, no device)."""

    def __init__(self, H, pool, hf_state, wires):
        from qencode_nb.rerun import statevector as sv

        wires = list(wires)
        self.n_pool = len(pool)
        self.H_sp = H.sparse_matrix(wire_order=wires).tocsr()
        self.Bs, self.B2s = sv.pool_matrices(pool, wires)
        self.psi0 = sv.hf_statevector(hf_state)

    def pool_gradient(self, selected, params):
        import numpy as np

        from qencode_nb.rerun import statevector as sv

        psi = sv.build_state(self.psi0, self.Bs, self.B2s, selected, params)
        Hpsi = self.H_sp @ psi
        Bs = self.Bs
        return lambda k: float(np.real(np.vdot(Hpsi, Bs[k] @ psi)))

    def energy(self, selected):
        from qencode_nb.rerun import statevector as sv

        H_sp, psi0, Bs, B2s = self.H_sp, self.psi0, self.Bs, self.B2s
        return lambda p: sv.energy(H_sp, sv.build_state(psi0, Bs, B2s, selected, list(p)))

    def energy_and_grad(self, selected):
        from qencode_nb.rerun import statevector as sv

        H_sp, psi0, Bs, B2s = self.H_sp, self.psi0, self.Bs, self.B2s
        return lambda p: sv.energy_and_grad(H_sp, Bs, B2s, psi0, selected, list(p))


class CISpaceBackend:
    """The sector engine in the CI space.

    Args:
        ci_space: :class:`qencode_nb.rerun.ci_space.CISpace` (its energies
            include the core energy).
        gens: the pool as :class:`qencode_nb.rerun.ci_space_generators.Generator`,
            in pool order.
    """

    def __init__(self, ci_space, gens):
        self.ci_space = ci_space
        self.gens = gens
        self.n_pool = len(gens)

    def pool_gradient(self, selected, params):
        from qencode_nb.rerun import ci_space as S

        space, gens = self.ci_space, self.gens
        psi = S.build_state(space, gens, selected, params)
        Hpsi = space.hop(psi.reshape(space.shape)).reshape(-1)
        return lambda k: gens[k].expval(Hpsi, psi)

    def energy(self, selected):
        from qencode_nb.rerun import ci_space as S

        space, gens = self.ci_space, self.gens
        return lambda p: space.energy(S.build_state(space, gens, selected, p)
                                      .reshape(space.shape))

    def energy_and_grad(self, selected):
        from qencode_nb.rerun import ci_space as S

        space, gens = self.ci_space, self.gens
        return lambda p: S.energy_and_grad(space, gens, selected, p)


class FastBackend:
    """A generator ADAPT engine's arithmetic on the compiled statevector engine
    (:mod:`qencode_nb.rerun.fast_engine`).

    Screening: the QNode engine's ``-4 Im <H psi| G_k psi>`` (the generator's
    commutator rule, ``_COMM_FACTOR`` 2.0) or the statevector engine's
    ``Re <H psi| B_k psi> = -2 Im <H psi| G_k psi>`` (``B = 2iG``), by
    ``convention``; energies of the selection's circuit (:func:`qencode_nb.rerun.fast_engine.word_circuit`,
    angles by the same convention) and the exact adjoint gradient.

    Args:
        hamiltonian: :class:`qencode_nb.rerun.fast_engine.Hamiltonian` (Ha).
        words: the pool, :func:`qencode_nb.rerun.fast_engine.pool_words`.
        hf_state: tapered HF bits, shape ``(n,)``.
        convention: "qnode" or "statevector" (the recorded ADAPT engine).
    """

    #: Screening factor on ``Im <H psi|G psi>`` per convention (module docstring).
    SCREENING = {"qnode": -4.0, "statevector": -2.0}

    def __init__(self, hamiltonian, words: list, hf_state, convention: str = "qnode"):
        from qencode_nb.rerun.fast_engine import Circuit, generator_words


        self.convention = convention
        self.factor = self.SCREENING[convention]
        self.hamiltonian = hamiltonian
        self.words = list(words)
        self.hf_state = [int(v) for v in hf_state]
        self.n_pool = len(self.words)
        self._generators = [Circuit.from_gates(hamiltonian.n, self.hf_state,
                                               [("gen", generator_words(d, hamiltonian.n),
                                                 1.0, 0)], 1)
                            for d in self.words]

    def _energy(self, selected):
        from qencode_nb.rerun.fast_engine import Energy, word_circuit

        return Energy(word_circuit(self.hf_state, self.words, selected, self.convention),
                      self.hamiltonian)

    def pool_gradient(self, selected, params):
        import numpy as np

        from qencode_nb.rerun import fast_kernels as k
        from qencode_nb.rerun.fast_engine import word_circuit

        psi = word_circuit(self.hf_state, self.words, selected,
                           self.convention).state(list(params))
        hpsi = self.hamiltonian.matvec(psi)
        out = np.empty_like(psi)
        gens, factor = self._generators, self.factor

        def gradient(i):
            g = gens[i]
            k.words_apply(g.wx, g.wz, g.wc, 0, g.wx.shape[0], psi, out)
            return factor * float(k.vdot(hpsi, out).imag)

        return gradient

    def energy(self, selected):
        return self._energy(selected)

    def energy_and_grad(self, selected):
        return self._energy(selected).energy_and_grad
