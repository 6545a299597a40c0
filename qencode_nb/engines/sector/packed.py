"""A pool of excitation generators packed for the compiled loops, and the state,
energy and adjoint gradient computed on it in one compiled call each.

:class:`PackedPool` holds the pairs of every
:class:`~qencode_nb.engines.sector.generators.Generator` of a pool in two int32
arrays (layout in :mod:`qencode_nb.engines.sector.kernels`): 8 bytes a pair
instead of 24, and one call per state instead of one per generator.  The
arithmetic is that of :func:`qencode_nb.engines.sector.space.build_state`,
:func:`~qencode_nb.engines.sector.space.energy_and_grad` and
:meth:`~qencode_nb.engines.sector.generators.Generator.expval`, in the same order,
so the results are the same to the last bit (tested).  CI-space vectors are real
and flat (length ``dim``); angles in radians; energies in Ha; gradients in Ha/rad.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PackedPool:
    """The pool's pairs: generator ``k`` owns ``first[offsets[k]:offsets[k+1]]``.

    Attributes:
        first: ``a`` of each pair, int32, shape ``(n_pairs,)``.
        second: ``b`` (``v = +1``) or ``~b`` (``v = -1``), int32, shape ``(n_pairs,)``.
        offsets: int64, shape ``(n_pool + 1,)``.
    """

    first: object
    second: object
    offsets: object

    @classmethod
    def of(cls, gens) -> "PackedPool":
        """Pack a pool (a list of generators with pair arrays ``a, b, v``).

        Raises:
            ValueError: a determinant index does not fit in int32.
        """
        import numpy as np

        offsets = np.zeros(len(gens) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([g.a.size for g in gens])
        a = np.concatenate([np.asarray(g.a, dtype=np.int64) for g in gens])
        b = np.concatenate([np.asarray(g.b, dtype=np.int64) for g in gens])
        v = np.concatenate([np.asarray(g.v, dtype=float) for g in gens])
        if a.size and max(a.max(), b.max()) >= 2**31 - 1:
            raise ValueError("a CI space of 2**31 determinants or more does not pack in int32")
        second = np.where(v > 0, b, ~b)
        return cls(first=a.astype(np.int32), second=second.astype(np.int32), offsets=offsets)

    @property
    def n_pool(self) -> int:
        return len(self.offsets) - 1

    @staticmethod
    def angles(params):
        """``(cos(theta/2), sin(theta/2))`` of each angle, as float64 arrays
        (``math.cos``/``math.sin`` of ``0.5 * float(theta)``, as the per-generator
        calls compute them)."""
        import math

        import numpy as np

        half = [0.5 * float(t) for t in params]
        return (np.array([math.cos(h) for h in half], dtype=float),
                np.array([math.sin(h) for h in half], dtype=float))

    def state(self, hf, selected, params):
        """``prod_j exp((params[j]/2) B[selected[j]]) hf`` (first factor applied
        first), a new flat vector; ``selected`` pool indices, ``params`` radians."""
        import numpy as np

        from qencode_nb.engines.sector.kernels import packed_rotate

        if len(selected) != len(params):
            raise ValueError(f"{len(selected)} selected operators but {len(params)} angles")
        c = np.array(hf, dtype=float).reshape(-1)
        cs, sn = self.angles(params)
        packed_rotate(c, self.first, self.second, self.offsets,
                      np.asarray(selected, dtype=np.int64), cs, sn)
        return c

    def adjoint_gradient(self, lam, phi, selected, params):
        """``dE/dtheta_j = <lam_j|B_j|phi_j>`` walking back from ``phi = psi``,
        ``lam = H psi`` (both flat, overwritten), float64 of shape ``(len(selected),)``
        (Ha/rad)."""
        import numpy as np

        from qencode_nb.engines.sector.kernels import packed_adjoint

        cs, sn = self.angles(params)
        grad = np.zeros(len(selected))
        packed_adjoint(lam, phi, self.first, self.second, self.offsets,
                       np.asarray(selected, dtype=np.int64), cs, sn, grad)
        return grad

    def expvals(self, lam, phi):
        """``<lam|B_k|phi>`` of every pool generator, float64 of shape ``(n_pool,)``."""
        import numpy as np

        from qencode_nb.engines.sector.kernels import packed_expvals

        out = np.zeros(self.n_pool)
        packed_expvals(lam, phi, self.first, self.second, self.offsets, out)
        return out
