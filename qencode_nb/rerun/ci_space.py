"""Sector engine (first part): states in the fixed (N_alpha, N_beta) determinant
sector, H·ψ with PySCF's FCI machinery, excitation generators as signed
permutations, and the replay of QEncode's statevector-engine ADAPT entries.

Conventions, written down once (see ../shared/ENGINE.md):

- Basis: PySCF FCI order, ``c[Ia, Ib]`` over alpha and beta strings of
  :func:`pyscf.fci.cistring.make_strings`; a determinant is
  ``A+(Ia) B+(Ib) |vac>`` with the creators of each string in ascending
  orbital order and every alpha creator to the left of every beta one.
- Qubits: OpenFermion's Jordan-Wigner order used by of_bridge
  (:func:`qencode_nb.problem.of_bridge._spin_orbital_terms`): spin orbital
  ``q = 2p + sigma`` (alpha 0, beta 1), and the qubit basis state
  ``|n_0 ... n_{2no-1}> = prod_q (a+_q)^{n_q} |vac>`` in ascending ``q``.
- Sign between the two: reordering the interleaved creators into "all alpha,
  then all beta" passes every beta creator of orbital ``j`` over each alpha
  creator of orbital ``i > j``, so ``|n> = s(Ia, Ib) A+(Ia) B+(Ib)|vac>`` with
  ``s = (-1)^{#{(i, j): i in Ia, j in Ib, j < i}}``.  A qubit-space vector
  ``psi(n)`` is the sector vector ``s * c``.
- Generators: ``B = 2iG`` with ``G = qml.generator(gate(0.0), "observable")``
  of the excitation (the statevector engine's convention, see
  :mod:`qencode_nb.rerun.statevector`), applied as
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
        h1, h2: active-space one- and two-electron integrals (Ha, chemist
            notation, ``h2`` of shape ``(norb,)*4``), for the CSR matrix.
        hop_method: ``"csr"`` or ``"contract_2e"`` (see :func:`hop_method_for`).
    """

    norb: int
    nelec: tuple
    h2eff: object
    ecore: float
    strings_a: object
    strings_b: object
    sign: object
    h1: object = None
    h2: object = None
    hop_method: str = "contract_2e"
    _occ: object = field(default=None, repr=False)
    _csr: object = field(default=None, repr=False)
    _link: object = field(default=None, repr=False)

    @property
    def shape(self) -> tuple:
        return (len(self.strings_a), len(self.strings_b))

    @property
    def dim(self) -> int:
        return len(self.strings_a) * len(self.strings_b)

    def hop(self, c):
        """H·c in the sector (without ``ecore``); ``c`` of shape :attr:`shape`.

        :attr:`hop_method` ``"csr"``: the sector matrix (:meth:`csr`);
        ``"contract_2e"``: PySCF's matrix-free ``direct_spin1.contract_2e``.
        The two agree to rounding (tested to 1e-12 Ha)."""
        if self.hop_method == "csr":
            return (self.csr() @ c.reshape(-1)).reshape(self.shape)
        from pyscf.fci import cistring, direct_spin1

        if self._link is None:   # string link tables, built once instead of per call
            self._link = (cistring.gen_linkstr_index_trilidx(range(self.norb), self.nelec[0]),
                          cistring.gen_linkstr_index_trilidx(range(self.norb), self.nelec[1]))
        return direct_spin1.contract_2e(self.h2eff, c, self.norb, self.nelec,
                                        link_index=self._link).reshape(self.shape)

    def csr(self):
        """The sector Hamiltonian without ``ecore`` as a CSR matrix ``(dim, dim)``
        (Ha), from PySCF's ``direct_spin1.pspace`` over every determinant
        (dense while built: :data:`CSR_BUILD_MAX_DIM` bounds it)."""
        if self._csr is None:
            import numpy as np
            import scipy.sparse as sp
            from pyscf.fci import direct_spin1

            if self.h1 is None:
                raise ValueError("this Sector has no h1/h2 integrals; build it with "
                                 "from_integrals to use the CSR matrix")
            if self.dim > CSR_BUILD_MAX_DIM:
                raise ValueError(f"sector dimension {self.dim} > CSR_BUILD_MAX_DIM="
                                 f"{CSR_BUILD_MAX_DIM}: "
                                 "use hop_method='contract_2e'")
            addr, h0 = direct_spin1.pspace(self.h1, self.h2, self.norb, self.nelec,
                                           np=self.dim)
            full = np.zeros((self.dim, self.dim))
            full[np.ix_(addr, addr)] = h0
            self._csr = sp.csr_matrix(full)
        return self._csr

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


CSR_MAX_DIM = 1000
"""Largest sector dimension for which :meth:`Sector.hop` picks the CSR matrix.
Measured per H·ψ on this machine at 1 thread (H_n chains, STO-3G): dim 36
CSR 3.8 µs vs contract_2e 118 µs; dim 400 31 µs vs 77 µs; dim 4,900 1.45 ms
(plus 1.6 s to build) vs 1.05 ms."""

CSR_BUILD_MAX_DIM = 5000
"""Largest sector dimension :meth:`Sector.csr` builds (a dense ``dim x dim``
float64 array while built: 190 MB at 4,900)."""


def hop_method_for(dim: int) -> str:
    """``"csr"`` up to :data:`CSR_MAX_DIM` determinants, else ``"contract_2e"``."""
    return "csr" if dim <= CSR_MAX_DIM else "contract_2e"


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


def from_integrals(h1, h2, ecore: float, norb: int, nelec, hop_method: str | None = None) -> Sector:
    """A :class:`Sector` from active-space integrals.

    Args:
        h1: one-electron integrals (Ha), shape ``(norb, norb)``.
        h2: two-electron integrals (Ha, chemist notation), any PySCF
            ``ao2mo.restore`` symmetry form.
        ecore: core energy (Ha).
        norb: active spatial orbitals.
        nelec: ``(n_alpha, n_beta)``.
        hop_method: ``"csr"`` or ``"contract_2e"``; default
            :func:`hop_method_for` of the dimension.
    """
    import numpy as np
    from pyscf import ao2mo
    from pyscf.fci import cistring, direct_spin1

    na, nb = nelec
    h1 = np.asarray(h1, dtype=float)
    h2 = ao2mo.restore(1, np.asarray(h2, dtype=float), norb)
    sa = cistring.make_strings(range(norb), na)
    sb = cistring.make_strings(range(norb), nb)
    h2eff = direct_spin1.absorb_h1e(h1, h2, norb, (na, nb), 0.5)
    dim = len(sa) * len(sb)
    method = hop_method or hop_method_for(dim)
    if method not in ("csr", "contract_2e"):
        raise ValueError(f"hop_method {method!r} is not accepted; accepted: csr, contract_2e")
    return Sector(norb=norb, nelec=(na, nb), h2eff=h2eff, ecore=float(ecore),
                  strings_a=sa, strings_b=sb, sign=jw_sign(sa, sb, norb), h1=h1, h2=h2,
                  hop_method=method)


def from_chemistry(chem) -> Sector:
    """The sector of a :class:`~qencode_nb.problem.chemistry.ChemistryResult`: the same
    CASCI integrals as the of_bridge Hamiltonian (``get_h1eff``, ``get_h2eff``)."""
    from pyscf import ao2mo, mcscf

    from qencode_nb.problem.chemistry import active_electron_split, mean_field_for_active_space

    mf = mean_field_for_active_space(chem)
    no, ne = chem.num_spatial_orbitals, chem.num_electrons
    cas = mcscf.CASCI(mf, no, ne)
    h1, ecore = cas.get_h1eff()
    h2 = ao2mo.restore(1, cas.get_h2eff(), no)
    return from_integrals(h1, h2, ecore, no, active_electron_split(ne))


def from_summary(summary, hop_method: str | None = None) -> Sector:
    """The sector of a cached rebuild (:class:`qencode_nb.problem.cache.ChemSummary`
    with ``integrals``): no PySCF mean-field calculation is repeated.

    Raises:
        ValueError: the summary carries no integrals.
    """
    ints = getattr(summary, "integrals", None)
    if not ints:
        raise ValueError("this rebuild summary has no active-space integrals (a cache "
                         "file older than format 2); rebuild it")
    return from_integrals(ints["h1"], ints["h2"], ints["ecore"], ints["norb"],
                          tuple(ints["nelec"]), hop_method)


def generator_matrix_reference(sector: Sector, generator):
    """``B = 2iG`` of a Pauli-sum generator as a real sparse ``(dim, dim)`` matrix
    acting on sector vectors (signs of the module docstring included).

    The slow reference (every Pauli word applied to every determinant); the
    test oracle of :func:`generator`.

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


@dataclass(frozen=True)
class Generator:
    """An excitation generator ``B = 2iG`` on the sector as a signed permutation.

    ``B`` maps determinant ``src[i]`` to ``tgt[i]`` with weight ``val[i]``
    (+1 or -1), and ``B^2 = -P`` with ``P`` the projector on its support (the
    set of ``src``, equal to the set of ``tgt``).  Hence ``B^3 = -B`` and the
    closed form of the module docstring needs only the support.

    Attributes:
        src, tgt: flat determinant indices (int64), shape ``(m,)``, ``m`` the
            support size.
        val: float64 weights +1/-1, shape ``(m,)``.
        a, b, v: the same as ``m/2`` pairs, ``B[b, a] = v``, ``B[a, b] = -v``
            (the compiled loops of :mod:`qencode_nb.rerun.ci_space_kernels`).
    """

    src: object
    tgt: object
    val: object
    a: object = None
    b: object = None
    v: object = None

    @property
    def support(self) -> int:
        return len(self.src)

    def apply(self, c):
        """``B c`` for a flat sector vector ``c`` (length ``dim``)."""
        import numpy as np

        out = np.zeros_like(c)
        out[self.tgt] = self.val * c[self.src]
        return out

    def expval(self, lam, phi) -> float:
        """``<lam|B|phi>`` for real flat vectors (one compiled pass over the pairs)."""
        from qencode_nb.rerun.ci_space_kernels import expval

        return float(expval(lam, phi, self.a, self.b, self.v))

    def exp(self, theta: float, c):
        """``exp((theta/2) B) c = c + sin(theta/2) Bc - (1 - cos(theta/2)) P c``
        (radians; returns a new flat vector)."""
        import numpy as np

        half = 0.5 * theta
        out = c.copy()
        out[self.tgt] = np.cos(half) * c[self.tgt] + np.sin(half) * (self.val * c[self.src])
        return out

    def exp_inplace(self, theta: float, c) -> None:
        """:meth:`exp` written into ``c`` (same arithmetic, bit for bit; a
        compiled loop over the pairs of the support)."""
        import math

        from qencode_nb.rerun.ci_space_kernels import rotate

        half = 0.5 * theta
        rotate(c, self.a, self.b, self.v, math.cos(half), math.sin(half))

    def matrix(self, dim: int):
        """``B`` as a CSR matrix of shape ``(dim, dim)``."""
        import scipy.sparse as sp

        return sp.csr_matrix((self.val, (self.tgt, self.src)), shape=(dim, dim))


class NotAnExcitation(ValueError):
    """A generator that is not a particle-conserving excitation on the sector."""


def generator(sector: Sector, pauli_generator) -> Generator:
    """The :class:`Generator` of a Pauli-sum excitation generator ``G``.

    Every Pauli word of an excitation flips the same wires (X or Y); so the
    flipped determinants are found once, only those that stay in the
    ``(N_alpha, N_beta)`` sector are kept, and each word contributes its
    phase there (the sign map of the module docstring).  Agrees with
    :func:`generator_matrix_reference` exactly (tested).

    Args:
        sector: :class:`Sector`.
        pauli_generator: PennyLane operator with a ``pauli_rep`` on the
            untapered Jordan-Wigner wires (``qml.generator(gate, "observable")``).

    Raises:
        NotAnExcitation: the words flip different wires, ``2iG`` is not real
            on the sector, or ``B^2 != -P`` (not a single excitation's generator).
    """
    import numpy as np
    from pyscf.fci import cistring

    words = list(pauli_generator.pauli_rep.items())
    flips = {tuple(sorted(w for w, p in word.items() if p in "XY")) for word, _ in words}
    if len(flips) != 1:
        raise NotAnExcitation(f"the Pauli words of {pauli_generator!r} flip different wire "
                              "sets; not an excitation generator")
    if not next(iter(flips)):
        raise NotAnExcitation(f"{pauli_generator!r} flips no wire (only Z and I); not an "
                              "excitation generator")
    fw = list(next(iter(flips)))
    occ = sector.occupations()
    na, nb = sector.nelec
    sub = occ[:, fw].astype(np.int64)
    delta = 1 - 2 * sub                       # occupation change of each flipped wire
    alpha = np.array([w % 2 == 0 for w in fw])
    keep = (delta[:, alpha].sum(1) == 0) & (delta[:, ~alpha].sum(1) == 0)
    src = np.nonzero(keep)[0]
    if src.size == 0:
        raise NotAnExcitation(f"{pauli_generator!r} has no support in the sector {sector.nelec}")
    occ_k = occ[src]
    new = occ_k.copy()
    new[:, fw] ^= 1
    weights = 1 << np.arange(sector.norb)
    ia = cistring.strs2addr(sector.norb, na, new[:, 0::2] @ weights)
    ib = cistring.strs2addr(sector.norb, nb, new[:, 1::2] @ weights)
    tgt = ia * sector.shape[1] + ib
    val = np.zeros(src.size, dtype=complex)
    for word, coeff in words:
        phase = np.full(src.size, 2j * complex(coeff))
        for wire, pauli in word.items():
            n = occ_k[:, wire]
            if pauli == "Y":
                phase = phase * np.where(n == 0, 1j, -1j)
            elif pauli == "Z":
                phase = phase * np.where(n == 0, 1.0, -1.0)
        val += phase
    sign = sector.sign.reshape(-1)
    val = val * sign[src] * sign[tgt]
    if abs(val.imag).max() > 1e-12:
        raise NotAnExcitation(f"2iG of {pauli_generator!r} is not real on the sector")
    val = val.real
    nz = val != 0
    src, tgt, val = src[nz], tgt[nz], val[nz]
    if (np.abs(np.abs(val) - 1.0).max() > 1e-12 or not np.array_equal(np.sort(src), np.sort(tgt))
            or val.size == 0):
        raise NotAnExcitation(f"B = 2iG of {pauli_generator!r} is not a signed permutation "
                              "of its support (B^2 != -P)")
    val = np.sign(val)
    pair = src < tgt
    a, b, v = src[pair], tgt[pair], val[pair]
    partner = np.full(sector.dim, -1)
    partner[tgt] = src
    weight = np.zeros(sector.dim)
    weight[tgt] = val
    if (2 * a.size != src.size or not np.array_equal(partner[a], b)
            or not np.array_equal(weight[a], -v)):
        raise NotAnExcitation(f"B = 2iG of {pauli_generator!r} does not pair its support "
                              "antisymmetrically (B[a, b] != -B[b, a])")
    return Generator(src=src, tgt=tgt, val=val, a=np.ascontiguousarray(a),
                     b=np.ascontiguousarray(b), v=np.ascontiguousarray(v))


def generators(sector: Sector, pauli_generators) -> list:
    """:func:`generator` of each operator, in order (a list of :class:`Generator`)."""
    return [generator(sector, g) for g in pauli_generators]


def apply_exp(B, theta: float, c):
    """``exp((theta/2) B) c`` in closed form (``B^3 = -B``); ``c`` flat; ``B`` a
    sparse matrix (the reference path) or a :class:`Generator`."""
    import numpy as np

    if isinstance(B, Generator):
        return B.exp(theta, c)
    half = 0.5 * theta
    Bc = B @ c
    return c + np.sin(half) * Bc + (1.0 - np.cos(half)) * (B @ Bc)


def build_state(sector: Sector, gens, selected, params):
    """``prod_j exp((params[j]/2) B[selected[j]]) |HF>`` as a flat vector.

    Args:
        gens: list of :class:`Generator` (the pool), indexed by ``selected``.
        selected: pool indices in application order, shape ``(m,)``.
        params: angles in radians, shape ``(m,)``.
    """
    c = sector.hf().reshape(-1)
    for k, theta in zip(selected, params, strict=True):
        gens[k].exp_inplace(float(theta), c)
    return c


def energy_and_grad(sector: Sector, gens, selected, params):
    """Energy (Ha) and its exact gradient (Ha/rad) by the adjoint method.

    ``psi`` is built forward; then ``lam = H psi`` and ``phi = psi`` are
    walked back together, un-applying each rotation with
    ``U_j^T = exp(-(theta_j/2) B_j)`` (orthogonal, so no forward state is
    stored), and ``dE/dtheta_j = <lam_j|B_j|phi_j>`` (real vectors: the
    ``Re`` of the statevector engine's formula).  One H·ψ and ``3 m``
    passes over the generators' supports; memory: three sector vectors.

    Returns:
        ``(E, grad)`` with ``grad`` float64 of shape ``(len(selected),)``.
    """
    import numpy as np

    import math

    from qencode_nb.rerun.ci_space_kernels import adjoint_step

    phi = build_state(sector, gens, selected, params)
    lam = sector.hop(phi.reshape(sector.shape)).reshape(-1)
    energy = float(np.dot(phi, lam)) + sector.ecore
    grad = np.zeros(len(selected))
    for j in range(len(selected) - 1, -1, -1):
        g = gens[selected[j]]
        half = 0.5 * float(params[j])
        grad[j] = adjoint_step(lam, phi, g.a, g.b, g.v, math.cos(half), math.sin(half))
    return energy, grad


def replay_energy(sector: Sector, pauli_generators, selected, params) -> float:
    """Energy (Ha) of ``prod_j exp((params[j]/2) B[selected[j]]) |HF>``.

    Args:
        sector: :class:`Sector`.
        pauli_generators: pool generators (PennyLane Pauli sums on the
            untapered wires), indexed by ``selected``; only the selected ones
            are converted.
        selected: pool indices in application order.
        params: angles (radians), one per selected operator.
    """
    needed = {}
    for k in selected:
        if k not in needed:
            needed[k] = generator(sector, pauli_generators[k])
    c = build_state(sector, needed, selected, params)
    return sector.energy(c.reshape(sector.shape))
