"""The sector engine as a backend of the ADAPT loop: the statevector engine's
procedure in the fixed (N_alpha, N_beta) determinant space
(:mod:`qencode_nb.engines.sector.space`): real vectors and the CI space's H·ψ instead
of ``2**n`` CSR matrices, so energies agree with the statevector engine's to rounding,
not bit for bit.  Energies in Ha, angles in radians, gradients in Ha/rad.

:class:`CISpaceBackend` runs on a :class:`~qencode_nb.engines.sector.packed.PackedPool`
and computes H·ψ once per distinct state (:class:`LastHop`): the pool gradient after
an inner optimisation is taken at the optimiser's last evaluated point, and the next
inner optimisation starts there (the new operator at angle 0 leaves the state's bits
unchanged), so both reuse that point's H·ψ.  :class:`PerGeneratorBackend` is the
backend before that (one compiled call per generator, one H·ψ per call), kept as the
reference the benchmarks and tests compare with; both give the same bits on the same
CI space.
"""

from __future__ import annotations


class LastHop:
    """H·ψ of the last state it computed, handed out again for the same state.

    The state is identified by ``key`` (the selection and the angles' bits) or,
    failing that, by its own bits; a hit returns a copy, so the result is exactly
    what a new H·ψ would return.

    Args:
        ci_space: :class:`qencode_nb.engines.sector.space.CISpace`.

    Attributes:
        hits, misses: states answered from the last one, and H·ψ computed.
    """

    def __init__(self, ci_space):
        self.ci_space = ci_space
        self.hits = 0
        self.misses = 0
        self._key = self._psi = self._hpsi = None

    @staticmethod
    def key(selected, params) -> tuple:
        """The selection and the angles' bits."""
        import numpy as np

        return tuple(int(k) for k in selected), np.asarray(params, dtype=float).tobytes()

    def state(self, key):
        """A copy of the last state when ``key`` is its key, else None."""
        return self._psi.copy() if key == self._key else None

    def hop(self, psi, key):
        """``H psi`` (flat, a new array; Ha, without the core energy) for the flat state
        ``psi`` whose key is ``key``."""
        import numpy as np

        if self._psi is not None and (key == self._key or np.array_equal(
                psi.view(np.int64), self._psi.view(np.int64))):
            self.hits += 1
            self._key = key
            return self._hpsi.copy()
        self.misses += 1
        space = self.ci_space
        hpsi = space.hop(psi.reshape(space.shape)).reshape(-1)
        self._key, self._psi, self._hpsi = key, psi.copy(), hpsi.copy()
        return hpsi


class CISpaceBackend:
    """The sector engine in the CI space (packed pool, H·ψ reused per state).

    Args:
        ci_space: :class:`qencode_nb.engines.sector.space.CISpace` (its energies
            include the core energy).
        gens: the pool as :class:`qencode_nb.engines.sector.generators.Generator`,
            in pool order.
    """

    def __init__(self, ci_space, gens):
        from qencode_nb.engines.sector.packed import PackedPool

        self.ci_space = ci_space
        self.gens = gens
        self.n_pool = len(gens)
        self.packed = PackedPool.of(gens)
        self.last = LastHop(ci_space)

    def _state_and_hop(self, selected, params):
        key = LastHop.key(selected, params)
        psi = self.last.state(key)
        if psi is None:
            psi = self.packed.state(self.ci_space.hf(), selected, params)
        return psi, self.last.hop(psi, key)

    def pool_gradient(self, selected, params):
        psi, hpsi = self._state_and_hop(selected, params)
        grads = self.packed.expvals(hpsi, psi)
        return lambda k: float(grads[k])

    def energy(self, selected):
        import numpy as np

        def f(p):
            psi, hpsi = self._state_and_hop(selected, p)
            return float(np.vdot(psi, hpsi) / np.vdot(psi, psi)) + self.ci_space.ecore
        return f

    def energy_and_grad(self, selected):
        import numpy as np

        def f(p):
            phi, lam = self._state_and_hop(selected, p)
            energy = float(np.dot(phi, lam)) + self.ci_space.ecore
            return energy, self.packed.adjoint_gradient(lam, phi, selected, p)
        return f


class PerGeneratorBackend:
    """The sector engine's backend before :class:`CISpaceBackend`: one compiled call
    per generator (:func:`qencode_nb.engines.sector.space.build_state`,
    :func:`~qencode_nb.engines.sector.space.energy_and_grad`) and one H·ψ per call.
    The reference :class:`CISpaceBackend` is compared with (same arguments)."""

    def __init__(self, ci_space, gens):
        self.ci_space = ci_space
        self.gens = gens
        self.n_pool = len(gens)

    def pool_gradient(self, selected, params):
        from qencode_nb.engines.sector import space as S

        space, gens = self.ci_space, self.gens
        psi = S.build_state(space, gens, selected, params)
        Hpsi = space.hop(psi.reshape(space.shape)).reshape(-1)
        return lambda k: gens[k].expval(Hpsi, psi)

    def energy(self, selected):
        from qencode_nb.engines.sector import space as S

        space, gens = self.ci_space, self.gens
        return lambda p: space.energy(S.build_state(space, gens, selected, p)
                                      .reshape(space.shape))

    def energy_and_grad(self, selected):
        from qencode_nb.engines.sector import space as S

        space, gens = self.ci_space, self.gens
        return lambda p: S.energy_and_grad(space, gens, selected, p)
