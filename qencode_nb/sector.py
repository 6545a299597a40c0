"""Sector engine (first part): states in the fixed (N_alpha, N_beta) determinant
sector, H·ψ with PySCF's FCI machinery, excitation generators as signed
permutations, and the replay of QEncode's statevector-engine ADAPT entries.

Conventions, written down once (see ../shared/ENGINE.md):

- Basis: PySCF FCI order, ``c[Ia, Ib]`` over alpha and beta strings of
  :func:`pyscf.fci.cistring.make_strings`; a determinant is
  ``A+(Ia) B+(Ib) |vac>`` with the creators of each string in ascending
  orbital order and every alpha creator to the left of every beta one.
- Qubits: OpenFermion's Jordan-Wigner order used by of_bridge
  (:func:`qencode_nb.hamiltonian._spin_orbital_terms`): spin orbital
  ``q = 2p + sigma`` (alpha 0, beta 1), and the qubit basis state
  ``|n_0 ... n_{2no-1}> = prod_q (a+_q)^{n_q} |vac>`` in ascending ``q``.
- Sign between the two: reordering the interleaved creators into "all alpha,
  then all beta" passes every beta creator of orbital ``j`` over each alpha
  creator of orbital ``i > j``, so ``|n> = s(Ia, Ib) A+(Ia) B+(Ib)|vac>`` with
  ``s = (-1)^{#{(i, j): i in Ia, j in Ib, j < i}}``.  A qubit-space vector
  ``psi(n)`` is the sector vector ``s * c``.
- Generators: ``B = 2iG`` with ``G = qml.generator(gate(0.0), "observable")``
  of the excitation (the statevector engine's convention, see
  :mod:`qencode_nb.statevector`), applied as
  ``exp((theta/2) B) = 1 + sin(theta/2) B + (1 - cos(theta/2)) B^2``.
  Each Pauli word acts on a determinant as a bit flip with a phase
  (X|0>=|1>, Y|0>=i|1>, Y|1>=-i|0>, Z|1>=-|1>); contributions leaving the
  sector cancel between the words of a particle-conserving generator and
  are dropped.

Energies in Ha.  The Z2 tapering of a Jordan-Wigner problem is exact, so a
tapered state built from tapered generators has the energy of the untapered
state built here (tested against the published energies).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Sector:
    """The (N_alpha, N_beta) sector of an active space.

    Attributes:
        norb: active spatial orbitals.
        nelec: ``(n_alpha, n_beta)``.
        h2eff: PySCF ``absorb_h1e`` two-electron operator (Ha) for ``contract_2e``.
        ecore: core energy (Ha), added to every energy.
        strings_a, strings_b: occupation bit strings (ints) in PySCF order.
        sign: ``s(Ia, Ib)``, shape ``(na_str, nb_str)``, +1/-1.
    """

    norb: int
    nelec: tuple
    h2eff: object
    ecore: float
    strings_a: object
    strings_b: object
    sign: object
    _occ: object = field(default=None, repr=False)

    @property
    def shape(self) -> tuple:
        return (len(self.strings_a), len(self.strings_b))

    @property
    def dim(self) -> int:
        return len(self.strings_a) * len(self.strings_b)

    def hop(self, c):
        """H·c in the sector (without ``ecore``); ``c`` of shape :attr:`shape`."""
        from pyscf.fci import direct_spin1

        return direct_spin1.contract_2e(self.h2eff, c, self.norb, self.nelec).reshape(self.shape)

    def energy(self, c) -> float:
        """<c|H|c> / <c|c> + ecore (Ha) for a real sector vector."""
        import numpy as np

        return float(np.vdot(c, self.hop(c)) / np.vdot(c, c)) + self.ecore

    def hf(self):
        """The HF determinant (lowest orbitals of each spin) as a sector vector."""
        import numpy as np

        c = np.zeros(self.shape)
        c[0, 0] = 1.0
        return c

    def occupations(self):
        """Qubit occupations ``n_q`` of every determinant, shape ``(dim, 2*norb)``."""
        import numpy as np

        if self._occ is None:
            na, nb = self.shape
            bits = np.arange(self.norb)
            occ_a = (np.asarray(self.strings_a)[:, None] >> bits) & 1
            occ_b = (np.asarray(self.strings_b)[:, None] >> bits) & 1
            occ = np.zeros((na, nb, 2 * self.norb), dtype=np.int8)
            occ[:, :, 0::2] = occ_a[:, None, :]
            occ[:, :, 1::2] = occ_b[None, :, :]
            self._occ = occ.reshape(na * nb, 2 * self.norb)
        return self._occ


def jw_sign(strings_a, strings_b, norb: int):
    """``s(Ia, Ib)`` of the module docstring, shape ``(len(a), len(b))``."""
    import numpy as np

    bits = np.arange(norb)
    occ_a = (np.asarray(strings_a)[:, None] >> bits) & 1          # (na, norb)
    occ_b = (np.asarray(strings_b)[:, None] >> bits) & 1
    # number of beta orbitals j < i for each i: cumulative count shifted by one
    below_b = np.cumsum(occ_b, axis=1) - occ_b                     # (nb, norb): j < i
    crossings = occ_a @ below_b.T                                  # (na, nb)
    return np.where(crossings % 2, -1.0, 1.0)


def from_integrals(h1, h2, ecore: float, norb: int, nelec) -> Sector:
    """A :class:`Sector` from active-space integrals (Ha, chemist notation)."""
    from pyscf.fci import cistring, direct_spin1

    na, nb = nelec
    sa = cistring.make_strings(range(norb), na)
    sb = cistring.make_strings(range(norb), nb)
    h2eff = direct_spin1.absorb_h1e(h1, h2, norb, (na, nb), 0.5)
    return Sector(norb=norb, nelec=(na, nb), h2eff=h2eff, ecore=float(ecore),
                  strings_a=sa, strings_b=sb, sign=jw_sign(sa, sb, norb))


def from_chemistry(chem) -> Sector:
    """The sector of a :class:`~qencode_nb.chemistry.ChemistryResult`: the same
    CASCI integrals as the of_bridge Hamiltonian (``get_h1eff``, ``get_h2eff``)."""
    from pyscf import ao2mo, mcscf

    from qencode_nb.chemistry import active_electron_split, mean_field_for_active_space

    mf = mean_field_for_active_space(chem)
    no, ne = chem.num_spatial_orbitals, chem.num_electrons
    cas = mcscf.CASCI(mf, no, ne)
    h1, ecore = cas.get_h1eff()
    h2 = ao2mo.restore(1, cas.get_h2eff(), no)
    return from_integrals(h1, h2, ecore, no, active_electron_split(ne))


def generator_matrix(sector: Sector, generator):
    """``B = 2iG`` of a Pauli-sum generator as a real sparse ``(dim, dim)`` matrix
    acting on sector vectors (signs of the module docstring included).

    Raises:
        ValueError: ``B`` has an imaginary part, i.e. ``G`` is not an
            excitation generator.
    """
    import numpy as np
    import scipy.sparse as sp
    from pyscf.fci import cistring

    occ = sector.occupations()
    na_str, nb_str = sector.shape
    na, nb = sector.nelec
    sign = sector.sign.reshape(-1)
    rows, cols, vals = [], [], []
    src = np.arange(sector.dim)
    for word, coeff in generator.pauli_rep.items():
        flip = np.zeros(occ.shape[1], dtype=np.int8)
        phase = np.full(sector.dim, 2j * complex(coeff))
        for wire, pauli in word.items():
            n = occ[:, wire]
            if pauli == "X":
                flip[wire] = 1
            elif pauli == "Y":
                flip[wire] = 1
                phase = phase * np.where(n == 0, 1j, -1j)
            elif pauli == "Z":
                phase = phase * np.where(n == 0, 1.0, -1.0)
        new = occ ^ flip
        keep = (new[:, 0::2].sum(1) == na) & (new[:, 1::2].sum(1) == nb)
        if not keep.any():
            continue
        new = new[keep]
        weights = 1 << np.arange(sector.norb)
        ia = cistring.strs2addr(sector.norb, na, new[:, 0::2] @ weights)
        ib = cistring.strs2addr(sector.norb, nb, new[:, 1::2] @ weights)
        tgt = ia * nb_str + ib
        rows.append(tgt)
        cols.append(src[keep])
        vals.append(phase[keep] * sign[src[keep]] * sign[tgt])
    if not rows:
        return sp.csr_matrix((sector.dim, sector.dim))
    M = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(sector.dim, sector.dim))
    M.sum_duplicates()
    if M.nnz and abs(M.data.imag).max() > 1e-12:
        raise ValueError("generator_matrix: 2iG is not real on the sector; not an "
                         "excitation generator")
    M = sp.csr_matrix(M.real)
    M.eliminate_zeros()
    return M


def apply_exp(B, theta: float, c):
    """``exp((theta/2) B) c`` in closed form (``B^3 = -B``); ``c`` flat."""
    import numpy as np

    half = 0.5 * theta
    Bc = B @ c
    return c + np.sin(half) * Bc + (1.0 - np.cos(half)) * (B @ Bc)


def replay_energy(sector: Sector, generators, selected, params) -> float:
    """Energy (Ha) of ``prod_j exp((params[j]/2) B[selected[j]]) |HF>``.

    Args:
        sector: :class:`Sector`.
        generators: pool generators (PennyLane Pauli sums on the untapered
            wires), indexed by ``selected``.
        selected: pool indices in application order.
        params: angles (radians), one per selected operator.
    """
    c = sector.hf().reshape(-1)
    cache = {}
    for k, theta in zip(selected, params, strict=True):
        if k not in cache:
            cache[k] = generator_matrix(sector, generators[k])
        c = apply_exp(cache[k], float(theta), c)
    return sector.energy(c.reshape(sector.shape))
