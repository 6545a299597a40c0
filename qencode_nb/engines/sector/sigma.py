"""H·ψ in the CI space split by spin: the sector engine's fast H·ψ (``hop_method``
``"split"``).

With restricted orbitals the active-space Hamiltonian (chemist integrals ``h1``,
``(pq|rs)``; Ha) is

    H = H_alpha (x) 1 + 1 (x) H_beta + sum_{P,Q} V[P, Q] S^alpha_P (x) S^beta_Q,

``H_alpha`` (``H_beta``) the Hamiltonian of the ``n_alpha`` (``n_beta``) electrons of
one spin alone (one-electron part and same-spin pairs), ``P = (p >= q)`` a pair
index in PySCF's lower-triangle order, ``S_P = E_pq + E_qp`` (``E_pp`` for
``p = q``) on the strings of one spin, and ``V = (pq|rs)`` packed 4-fold
(``pyscf.ao2mo.restore(4, ...)``).  On ``c[Ia, Ib]`` (PySCF FCI order):

- ``H_alpha c + c H_beta^T``: two dense products with the string-space matrices
  (PySCF's ``direct_spin1.pspace`` at ``(n, 0)`` electrons);
- ``p = q`` on both sides: a diagonal, ``d[Ia, Ib] = sum_{p in Ia, r in Ib} (pp|rr)``;
- ``p != q`` on the alpha side, ``r = s`` on the beta side: ``w[P, Ib] = sum_{r in Ib}
  (pq|rr)``, applied along the alpha links;
- the rest, for each alpha string ``Ia``: ``T[Q, Jb] = (c S_Q^T)[Ia, Jb]`` over the
  ``r != s`` pairs (a gather along the beta links), one matrix product ``A[Ia] @ T``
  with ``A[Ia]`` the signed rows ``V[P, off]`` of the ``p != q`` alpha links of ``Ia``
  plus the row ``u[Ia] = sum_{p in Ia} V[pp, off]``, and a scatter of its rows to
  ``sigma[Ja, :]`` (:func:`qencode_nb.engines.sector.kernels.mixed_sigma`).

The matrix product runs on scipy's BLAS (numba's ``np.dot``), the loops in numba.
Per H·ψ at H10 [10e,10o] (63,504 determinants): about 150 MFLOP of matrix products
against about 380 MFLOP in PySCF's ``direct_spin1.contract_2e`` (which runs on
PySCF's own OpenBLAS copy); ``benchmarks/engines_h10.py`` measures both.  The
sum is reordered, so the result agrees with ``contract_2e`` to rounding, not bit
for bit (tested against the dense matrix of :mod:`qencode_nb.engines.sector.slow`).
Source of the split: the alpha/beta string factorisation of Knowles and Handy,
Chem. Phys. Lett. 111, 315 (1984), and Olsen et al., J. Chem. Phys. 89, 2185 (1988).
"""

from __future__ import annotations

from dataclasses import dataclass


def applicable(norb: int, nelec) -> bool:
    """Whether :class:`SplitHamiltonian` covers ``(norb, (n_alpha, n_beta))``: each
    spin has an electron and a hole (``0 < n < norb``); elsewhere the CI space keeps
    PySCF's ``contract_2e``."""
    return all(0 < int(n) < int(norb) for n in nelec)


@dataclass
class SplitHamiltonian:
    """The tables of the split H·ψ of the module docstring (all float64 or int64).

    Attributes:
        h_alpha, h_beta: same-spin Hamiltonians (Ha), ``(na_str, na_str)``, ``(nb_str, nb_str)``.
        diag: ``d``, shape ``(na_str, nb_str)`` (Ha).
        rows: ``A``, shape ``(na_str, n_links + 1, n_off)`` (Ha), ``n_links`` the
            ``p != q`` alpha links of a string, ``n_off`` the ``r != s`` pairs.
        targets, link_pair, link_sign: per alpha string and link: ``Ja``, the
            ``p != q`` pair's index among ``n_off``, the sign (+1/-1); ``(na_str, n_links)``.
        w: ``(n_off, nb_str)`` (Ha).
        gather_pos, gather_src, gather_sign: the beta links ``T.flat[pos] = sign *
            c[Ia, src]``, each ``(nb_str * n_beta_links,)``.
        mirror: ``n_alpha == n_beta`` (the spin-flip shortcut of :meth:`apply` may apply).
    """

    h_alpha: object
    h_beta: object
    diag: object
    rows: object
    targets: object
    link_pair: object
    link_sign: object
    w: object
    gather_pos: object
    gather_src: object
    gather_sign: object

    mirror: bool = False

    def spin_flip_parity(self, c) -> int:
        """+1 or -1 when ``c == ±c.T`` exactly (every element equal as a float, so
        ``0.0 == -0.0``; a state the spin flip maps to itself up to sign: only with
        ``n_alpha == n_beta``, :attr:`mirror`), else 0."""
        import numpy as np

        if not self.mirror:
            return 0
        if np.array_equal(c, c.T):
            return 1
        if np.array_equal(c, -c.T):
            return -1
        return 0

    def apply(self, c):
        """``H c`` (Ha, without the core energy), ``c`` of shape ``(na_str, nb_str)``;
        returns a new array of that shape.

        With ``n_alpha == n_beta`` H commutes with the spin flip ``c -> c.T``.  For a
        state with ``c == s c.T`` (``s = ±1``, :meth:`spin_flip_parity`) only the half
        ``X = 2 H_alpha c + d∘c + M(c)`` is built and ``H c = (X + s X.T) / 2`` (the
        products by 2 and 1/2 are exact): one matrix product fewer, and the result
        is (anti)symmetric to the last bit, as PySCF's ``contract_2e`` gives it, so
        gradients of spin-mirrored operators that tie mathematically tie exactly
        (the ADAPT loop settles ties by the lowest index).  Any other state takes
        the general sum."""
        import numpy as np

        from qencode_nb.engines.sector.kernels import mixed_sigma

        c = np.ascontiguousarray(c, dtype=float)
        parity = self.spin_flip_parity(c)
        if parity:
            half = 2.0 * (self.h_alpha @ c)
            half += self.diag * c
            mixed_sigma(c, half, self.rows, self.targets, self.link_pair, self.link_sign,
                        self.w, self.gather_pos, self.gather_src, self.gather_sign)
            return 0.5 * (half + parity * half.T)
        sigma = self.h_alpha @ c
        sigma += c @ self.h_beta.T
        sigma += self.diag * c
        mixed_sigma(c, sigma, self.rows, self.targets, self.link_pair, self.link_sign,
                    self.w, self.gather_pos, self.gather_src, self.gather_sign)
        return sigma


def same_spin_hamiltonian(h1, h2, norb: int, n: int):
    """``H`` of ``n`` electrons of one spin (one-electron part and their pairs; Ha) on
    the strings of :func:`pyscf.fci.cistring.make_strings` (``n`` of ``norb``), dense
    ``(n_str, n_str)``, from PySCF's ``direct_spin1.pspace`` at ``(n, 0)`` electrons."""
    import numpy as np
    from pyscf.fci import cistring, direct_spin1

    n_str = cistring.num_strings(norb, n)
    addr, h0 = direct_spin1.pspace(h1, h2, norb, (n, 0), np=n_str)
    out = np.zeros((n_str, n_str))
    out[np.ix_(addr, addr)] = h0
    return out


def _occupations(norb: int, n: int):
    import numpy as np
    from pyscf.fci import cistring

    strings = cistring.make_strings(range(norb), n)
    return ((np.asarray(strings)[:, None] >> np.arange(norb)) & 1).astype(float)


def build(h1, h2, norb: int, nelec) -> SplitHamiltonian:
    """The :class:`SplitHamiltonian` of active-space integrals.

    Args:
        h1: one-electron integrals (Ha), ``(norb, norb)``.
        h2: two-electron integrals (Ha, chemist notation), ``(norb,) * 4`` (8-fold
            symmetric).
        norb: active spatial orbitals.
        nelec: ``(n_alpha, n_beta)``.

    Raises:
        ValueError: ``nelec`` is outside :func:`applicable`.
    """
    import numpy as np
    from pyscf import ao2mo
    from pyscf.fci import cistring

    na, nb = (int(n) for n in nelec)
    if not applicable(norb, (na, nb)):
        raise ValueError(f"the split H·ψ needs 0 < n < norb electrons of each spin; got "
                         f"nelec {(na, nb)} in {norb} orbitals (use contract_2e)")
    h1 = np.asarray(h1, dtype=float)
    h2 = ao2mo.restore(1, np.asarray(h2, dtype=float), norb)
    v = ao2mo.restore(4, h2, norb)
    npair = norb * (norb + 1) // 2
    diag_pairs = np.array([p * (p + 1) // 2 + p for p in range(norb)])
    is_diag = np.zeros(npair, dtype=bool)
    is_diag[diag_pairs] = True
    off = np.nonzero(~is_diag)[0]
    off_index = np.full(npair, -1)
    off_index[off] = np.arange(off.size)
    occ_a, occ_b = _occupations(norb, na), _occupations(norb, nb)
    diag = occ_a @ v[np.ix_(diag_pairs, diag_pairs)] @ occ_b.T
    u = occ_a @ v[np.ix_(diag_pairs, off)]
    w = np.ascontiguousarray(v[np.ix_(off, diag_pairs)] @ occ_b.T)

    link_a = cistring.gen_linkstr_index_trilidx(range(norb), na)   # [pair, -, str1, sign]
    keep_a = ~is_diag[link_a[:, :, 0]]
    n_links = na * (norb - na)
    pair_a = link_a[:, :, 0][keep_a].reshape(-1, n_links)
    sign_a = link_a[:, :, 3][keep_a].reshape(-1, n_links).astype(float)
    rows = np.empty((pair_a.shape[0], n_links + 1, off.size))
    rows[:, :n_links] = sign_a[:, :, None] * v[pair_a][:, :, off]
    rows[:, n_links] = u
    link_b = cistring.gen_linkstr_index_trilidx(range(norb), nb)
    keep_b = ~is_diag[link_b[:, :, 0]]
    src_b = np.broadcast_to(np.arange(link_b.shape[0])[:, None], keep_b.shape)[keep_b]
    pos_b = off_index[link_b[:, :, 0][keep_b]] * link_b.shape[0] + link_b[:, :, 2][keep_b]
    return SplitHamiltonian(
        h_alpha=same_spin_hamiltonian(h1, h2, norb, na),
        h_beta=same_spin_hamiltonian(h1, h2, norb, nb), diag=diag,
        rows=rows, targets=np.ascontiguousarray(link_a[:, :, 2][keep_a].reshape(-1, n_links),
                                                dtype=np.int64),
        link_pair=np.ascontiguousarray(off_index[pair_a], dtype=np.int64),
        link_sign=np.ascontiguousarray(sign_a), w=w,
        gather_pos=np.ascontiguousarray(pos_b, dtype=np.int64),
        gather_src=np.ascontiguousarray(src_b, dtype=np.int64),
        gather_sign=np.ascontiguousarray(link_b[:, :, 3][keep_b], dtype=float),
        mirror=na == nb)
