"""The sector engine as a backend of the ADAPT loop: the statevector engine's
procedure in the fixed (N_alpha, N_beta) determinant space
(:mod:`qencode_nb.engines.sector.space`): real vectors and PySCF's H·ψ instead of
``2**n`` CSR matrices, so energies agree with the statevector engine's to rounding,
not bit for bit.  Energies in Ha, angles in radians, gradients in Ha/rad.
"""

from __future__ import annotations

class CISpaceBackend:
    """The sector engine in the CI space.

    Args:
        ci_space: :class:`qencode_nb.engines.sector.space.CISpace` (its energies
            include the core energy).
        gens: the pool as :class:`qencode_nb.engines.sector.generators.Generator`,
            in pool order.
    """

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
