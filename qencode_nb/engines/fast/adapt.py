"""The compiled statevector engine as a backend of the ADAPT loop: the QNode or
statevector engine's procedure on :mod:`qencode_nb.engines.fast.compiled` (stored
Hamiltonian, numba kernels); energies agree with the recorded engine's to
rounding.  Energies in Ha, angles in radians, gradients in Ha/rad.
"""

from __future__ import annotations

class FastBackend:
    """A generator ADAPT engine's arithmetic on the compiled statevector engine
    (:mod:`qencode_nb.engines.fast.compiled`).

    Screening: the QNode engine's ``-4 Im <H psi| G_k psi>`` (the generator's
    commutator rule, ``_COMM_FACTOR`` 2.0) or the statevector engine's
    ``Re <H psi| B_k psi> = -2 Im <H psi| G_k psi>`` (``B = 2iG``), by
    ``convention``; energies of the selection's circuit (:func:`qencode_nb.engines.fast.compiled.word_circuit`,
    angles by the same convention) and the exact adjoint gradient.

    Args:
        hamiltonian: :class:`qencode_nb.engines.fast.compiled.Hamiltonian` (Ha).
        words: the pool, :func:`qencode_nb.engines.fast.compiled.pool_words`.
        hf_state: tapered HF bits, shape ``(n,)``.
        convention: "qnode" or "statevector" (the recorded ADAPT engine).
    """

    #: Screening factor on ``Im <H psi|G psi>`` per convention (module docstring).
    SCREENING = {"qnode": -4.0, "statevector": -2.0}

    def __init__(self, hamiltonian, words: list, hf_state, convention: str = "qnode"):
        from qencode_nb.engines.fast.compiled import Circuit, generator_words


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
        from qencode_nb.engines.fast.compiled import Energy, word_circuit

        return Energy(word_circuit(self.hf_state, self.words, selected, self.convention),
                      self.hamiltonian)

    def pool_gradient(self, selected, params):
        import numpy as np

        from qencode_nb.engines.fast import kernels as k
        from qencode_nb.engines.fast.compiled import word_circuit

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
