"""The CI space of the sector engine: states in the fixed (N_alpha, N_beta)
determinant space of an active space (the "CI space"; not a Z2 tapering
sector), H·ψ with PySCF's FCI machinery, states built from excitation
generators (:mod:`qencode_nb.engines.sector.generators`) and their adjoint
energy gradient.

Conventions, written down once (docs/explanations/engines.md describes the engine):

- Basis: PySCF FCI order, ``c[Ia, Ib]`` over alpha and beta strings of
  :func:`pyscf.fci.cistring.make_strings`; a determinant is
  ``A+(Ia) B+(Ib) |vac>`` with the creators of each string in ascending
  orbital order and every alpha creator to the left of every beta one.
- Qubits: OpenFermion's Jordan-Wigner order used by of_bridge
  (:func:`qencode_nb.hamiltonian.of_bridge._spin_orbital_terms`): spin orbital
  ``q = 2p + sigma`` (alpha 0, beta 1), and the qubit basis state
  ``|n_0 ... n_{2no-1}> = prod_q (a+_q)^{n_q} |vac>`` in ascending ``q``.
- Sign between the two: reordering the interleaved creators into "all alpha,
  then all beta" passes every beta creator of orbital ``j`` over each alpha
  creator of orbital ``i > j``, so ``|n> = s(Ia, Ib) A+(Ia) B+(Ib)|vac>`` with
  ``s = (-1)^{#{(i, j): i in Ia, j in Ib, j < i}}``.  A qubit-space vector
  ``psi(n)`` is the CI-space vector ``s * c``.
- Generators: ``B = 2iG`` with ``G = qml.generator(gate(0.0), "observable")``
  of the excitation (the statevector engine's convention, see
  :mod:`qencode_nb.engines.statevector.sparse`), applied as
  ``exp((theta/2) B) = 1 + sin(theta/2) B + (1 - cos(theta/2)) B^2``.
  Each Pauli word acts on a determinant as a bit flip with a phase
  (X|0>=|1>, Y|0>=i|1>, Y|1>=-i|0>, Z|1>=-|1>); contributions leaving the
  CI space cancel between the words of a particle-conserving generator and
  are dropped.

Energies in Ha.  The Z2 tapering of a Jordan-Wigner problem is exact, so a
tapered state built from tapered generators has the energy of the untapered
state built here (tested against the published energies).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CISpace:
    """The (N_alpha, N_beta) determinant space (CI space) of an active space.

    Attributes:
        norb: active spatial orbitals.
        nelec: ``(n_alpha, n_beta)``.
        h2eff: PySCF ``absorb_h1e`` two-electron operator (Ha) for ``contract_2e``.
        ecore: core energy (Ha), added to every energy.
        strings_a, strings_b: occupation bit strings (ints) in PySCF order.
        sign: ``s(Ia, Ib)``, shape ``(na_str, nb_str)``, +1/-1.
        h1, h2: active-space one- and two-electron integrals (Ha, chemist
            notation, ``h2`` of shape ``(norb,)*4``), for the CSR matrix.
        hop_method: ``"csr"``, ``"split"`` or ``"contract_2e"`` (see
            :func:`hop_method_for`).
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
    _split: object = field(default=None, repr=False)

    @property
    def shape(self) -> tuple:
        return (len(self.strings_a), len(self.strings_b))

    @property
    def dim(self) -> int:
        return len(self.strings_a) * len(self.strings_b)

    def hop(self, c):
        """H·c in the CI space (without ``ecore``); ``c`` of shape :attr:`shape`.

        :attr:`hop_method` ``"csr"``: the CI-space matrix (:meth:`csr`);
        ``"split"``: the split by spin of :mod:`qencode_nb.engines.sector.sigma`
        (tables built on the first call); ``"contract_2e"``: PySCF's matrix-free
        ``direct_spin1.contract_2e`` (the engine's H·ψ before the split, kept as
        its reference and for the spaces the split does not cover).  The three
        agree to rounding (tested to 1e-12 Ha)."""
        if self.hop_method == "csr":
            return (self.csr() @ c.reshape(-1)).reshape(self.shape)
        if self.hop_method == "split":
            if self._split is None:
                from qencode_nb.engines.sector import sigma

                self._split = sigma.build(self.h1, self.h2, self.norb, self.nelec)
            return self._split.apply(c.reshape(self.shape))
        from pyscf.fci import cistring, direct_spin1

        if self._link is None:   # string link tables, built once instead of per call
            self._link = (cistring.gen_linkstr_index_trilidx(range(self.norb), self.nelec[0]),
                          cistring.gen_linkstr_index_trilidx(range(self.norb), self.nelec[1]))
        return direct_spin1.contract_2e(self.h2eff, c, self.norb, self.nelec,
                                        link_index=self._link).reshape(self.shape)

    def csr(self):
        """The CI-space Hamiltonian without ``ecore`` as a CSR matrix ``(dim, dim)``
        (Ha), from PySCF's ``direct_spin1.pspace`` over every determinant
        (dense while built: :data:`CSR_BUILD_MAX_DIM` bounds it)."""
        if self._csr is None:
            import numpy as np
            import scipy.sparse as sp
            from pyscf.fci import direct_spin1

            if self.h1 is None:
                raise ValueError("this CISpace has no h1/h2 integrals; build it with "
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
        """<c|H|c> / <c|c> + ecore (Ha) for a real CI-space vector."""
        import numpy as np

        return float(np.vdot(c, self.hop(c)) / np.vdot(c, c)) + self.ecore

    def hf(self):
        """The HF determinant (lowest orbitals of each spin) as a CI-space vector."""
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
"""Largest CI-space dimension for which :meth:`CISpace.hop` picks the CSR
matrix (the faster of the two up to here; measurements in
``benchmarks/engines.py``)."""

CSR_BUILD_MAX_DIM = 5000
"""Largest CI-space dimension :meth:`CISpace.csr` builds (a dense ``dim x dim``
float64 array while built: 190 MB at 4,900)."""


HOP_METHODS = ("csr", "split", "contract_2e")
"""The accepted :attr:`CISpace.hop_method` values."""


def hop_method_for(dim: int, norb: int | None = None, nelec=None) -> str:
    """``"csr"`` up to :data:`CSR_MAX_DIM` determinants; above, ``"split"`` where
    :func:`qencode_nb.engines.sector.sigma.applicable` holds for ``(norb, nelec)``
    (given), else ``"contract_2e"``."""
    if dim <= CSR_MAX_DIM:
        return "csr"
    from qencode_nb.engines.sector.sigma import applicable

    if norb is not None and nelec is not None and applicable(norb, nelec):
        return "split"
    return "contract_2e"


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


def from_integrals(h1, h2, ecore: float, norb: int, nelec,
                   hop_method: str | None = None) -> CISpace:
    """A :class:`CISpace` from active-space integrals.

    Args:
        h1: one-electron integrals (Ha), shape ``(norb, norb)``.
        h2: two-electron integrals (Ha, chemist notation), any PySCF
            ``ao2mo.restore`` symmetry form.
        ecore: core energy (Ha).
        norb: active spatial orbitals.
        nelec: ``(n_alpha, n_beta)``.
        hop_method: one of :data:`HOP_METHODS`; default :func:`hop_method_for`.

    Raises:
        ValueError: an unknown ``hop_method``, or ``"split"`` where
            :func:`qencode_nb.engines.sector.sigma.applicable` does not hold.
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
    method = hop_method or hop_method_for(dim, norb, (na, nb))
    if method not in HOP_METHODS:
        raise ValueError(f"hop_method {method!r} is not accepted; accepted: "
                         f"{', '.join(HOP_METHODS)}")
    if method == "split":
        from qencode_nb.engines.sector.sigma import applicable

        if not applicable(norb, (na, nb)):
            raise ValueError(f"hop_method 'split' needs 0 < n < norb electrons of each "
                             f"spin; got nelec {(na, nb)} in {norb} orbitals")
    return CISpace(norb=norb, nelec=(na, nb), h2eff=h2eff, ecore=float(ecore),
                  strings_a=sa, strings_b=sb, sign=jw_sign(sa, sb, norb), h1=h1, h2=h2,
                  hop_method=method)


def from_chemistry(chem) -> CISpace:
    """The CI space of a :class:`~qencode_nb.hamiltonian.chemistry.ChemistryResult`: the same
    CASCI integrals as the of_bridge Hamiltonian (``get_h1eff``, ``get_h2eff``)."""
    from pyscf import ao2mo, mcscf

    from qencode_nb.hamiltonian.chemistry import active_electron_split, mean_field_for_active_space

    mf = mean_field_for_active_space(chem)
    no, ne = chem.num_spatial_orbitals, chem.num_electrons
    cas = mcscf.CASCI(mf, no, ne)
    h1, ecore = cas.get_h1eff()
    h2 = ao2mo.restore(1, cas.get_h2eff(), no)
    return from_integrals(h1, h2, ecore, no, active_electron_split(ne))


def from_summary(summary, hop_method: str | None = None) -> CISpace:
    """The CI space of a cached rebuild (:class:`qencode_nb.hamiltonian.cache_payload.ChemSummary`
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


def build_state(ci_space: CISpace, gens, selected, params):
    """``prod_j exp((params[j]/2) B[selected[j]]) |HF>`` as a flat vector.

    Args:
        gens: :class:`~qencode_nb.engines.sector.generators.Generator` of the
            pool (list, or dict), indexed by ``selected``.
        selected: pool indices in application order, shape ``(m,)``.
        params: angles in radians, shape ``(m,)``.
    """
    c = ci_space.hf().reshape(-1)
    for k, theta in zip(selected, params, strict=True):
        gens[k].exp_inplace(float(theta), c)
    return c


def energy_and_grad(ci_space: CISpace, gens, selected, params):
    """Energy (Ha) and its exact gradient (Ha/rad) by the adjoint method.

    ``psi`` is built forward; then ``lam = H psi`` and ``phi = psi`` are
    walked back together, un-applying each rotation with
    ``U_j^T = exp(-(theta_j/2) B_j)`` (orthogonal, so no forward state is
    stored), and ``dE/dtheta_j = <lam_j|B_j|phi_j>`` (real vectors: the
    ``Re`` of the statevector engine's formula).  One H·ψ and ``3 m``
    passes over the generators' supports; memory: three CI-space vectors.

    Returns:
        ``(E, grad)`` with ``grad`` float64 of shape ``(len(selected),)``.
    """
    import math

    import numpy as np

    from qencode_nb.engines.sector.kernels import adjoint_step

    phi = build_state(ci_space, gens, selected, params)
    lam = ci_space.hop(phi.reshape(ci_space.shape)).reshape(-1)
    energy = float(np.dot(phi, lam)) + ci_space.ecore
    grad = np.zeros(len(selected))
    for j in range(len(selected) - 1, -1, -1):
        g = gens[selected[j]]
        half = 0.5 * float(params[j])
        grad[j] = adjoint_step(lam, phi, g.a, g.b, g.v, math.cos(half), math.sin(half))
    return energy, grad


def replay_energy(ci_space: CISpace, pauli_generators, selected, params) -> float:
    """Energy (Ha) of ``prod_j exp((params[j]/2) B[selected[j]]) |HF>``.

    Args:
        ci_space: :class:`CISpace`.
        pauli_generators: pool generators (PennyLane Pauli sums on the
            untapered wires), indexed by ``selected``; only the selected ones
            are converted.
        selected: pool indices in application order.
        params: angles (radians), one per selected operator.

    Raises:
        qencode_nb.engines.sector.generators.NotAnExcitation: a selected
            generator is not an excitation on this CI space.
    """
    from qencode_nb.engines.sector.generators import generator

    needed = {}
    for k in selected:
        if k not in needed:
            needed[k] = generator(ci_space, pauli_generators[k])
    c = build_state(ci_space, needed, selected, params)
    return ci_space.energy(c.reshape(ci_space.shape))
