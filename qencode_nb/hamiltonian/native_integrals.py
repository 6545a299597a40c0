"""PennyLane's ``dhf`` Hamiltonian in seconds: its integrals from PySCF, its SCF replayed.

``qchem.molecular_hamiltonian(..., method="dhf")`` (PennyLane 0.45.0,
``pennylane/qchem/hamiltonian.py``) computes every one- and two-electron integral in
differentiable pure Python (``qchem.integrals``): 1,679 s for LiH cc-pVDZ.  The
operator it returns depends only on

1. the atomic-orbital integrals ``S``, ``H_core`` and ``(pq|rs)`` over PennyLane's
   basis functions (``Molecule.basis_set``: Cartesian Gaussians from PennyLane's own
   basis data, each primitive normalised by ``primitive_norm`` and the contraction
   *not* renormalised when nothing is differentiated; ``overlap_matrix`` starts from
   ``eye(n)``, so ``S_ii = 1`` exactly);
2. the orbitals of its SCF (``qchem.hartree_fock.scf``: ``S`` plus a 1e-12 diagonal
   from ``default_rng(2030)``, symmetric orthogonalisation, core-Hamiltonian guess,
   plain Roothaan steps, at most 50, stop when ``|P_new - P| <= 1e-8``);
3. ``electron_integrals``' core folding, ``fermionic_observable`` (cutoff 1e-12) and
   ``qubit_observable``.

Here (1) is computed by PySCF's libcint over the *same* functions (a PySCF molecule
built from PennyLane's basis data, ``cart=True``, each function rescaled to PennyLane's
norm and put in PennyLane's order), (2) is the same algorithm in numpy, and (3) calls
PennyLane's own functions.  Measured on this project's cached slow builds
(``tests/hamiltonian/test_native_integrals.py``): the integrals agree to ~1e-14, the
operators' coefficients to ~1e-13 Ha after
:func:`qencode_nb.hamiltonian.equivalence.compare_terms` (an eigenvector's sign is
LAPACK's choice on noise-level matrix elements in symmetric molecules, in PennyLane
as here; the comparison accepts a Pauli conjugation, as it does for stored terms).
"""

from __future__ import annotations

PENNYLANE_SCF_STEPS = 50
"""``qchem.hartree_fock.scf``'s ``n_steps`` default (PennyLane 0.45.0)."""

PENNYLANE_SCF_TOL = 1e-8
"""``qchem.hartree_fock.scf``'s ``tol`` default: Frobenius norm of the density change."""

PENNYLANE_SCF_SEED = 2030
"""The ``default_rng`` seed of the 1e-12 overlap diagonal in ``qchem.hartree_fock.scf``."""

PENNYLANE_CUTOFF = 1.0e-12
"""``qchem.fermionic_observable``'s cutoff as ``diff_hamiltonian`` passes it (Ha)."""


def pennylane_molecule(symbols, coordinates_bohr, basis: str):
    """PennyLane's :class:`~pennylane.qchem.Molecule` as ``molecular_hamiltonian``
    builds it (charge 0, multiplicity 1, no data loaded).

    Args:
        symbols: element symbols, length ``n_atoms``.
        coordinates_bohr: flat coordinates, length ``3 * n_atoms`` (Bohr).
        basis: ``sto-3g``, ``6-31g``, ``6-311g`` or ``cc-pvdz`` (PennyLane's basis data).
    """
    import numpy as np
    from pennylane import qchem

    return qchem.Molecule(list(symbols), np.asarray(coordinates_bohr, dtype=float).reshape(-1, 3),
                          basis_name=basis, unit="bohr")


def _cartesian_order(L: int) -> list[tuple[int, int, int]]:
    """PySCF's order of the Cartesian components of a shell of angular momentum ``L``
    (xx, xy, xz, yy, yz, zz for d)."""
    return [(lx, ly, L - lx - ly) for lx in range(L, -1, -1) for ly in range(L - lx, -1, -1)]


def pyscf_twin(mol):
    """A PySCF molecule over PennyLane's basis functions and the permutation to PennyLane's order.

    Consecutive functions of an atom with the same total angular momentum, exponents
    and coefficients form one Cartesian shell.

    Returns:
        ``(pyscf_mole, perm)``: ``perm[i]`` the PySCF index of PennyLane's function ``i``.

    Raises:
        ValueError: PennyLane's functions do not group into whole Cartesian shells.
    """
    import numpy as np
    from pyscf import gto

    atoms, basis, perm = [], {}, []
    first, offset = 0, 0
    for ia, (symbol, count) in enumerate(zip(mol.symbols, mol.n_basis)):
        label = f"{symbol}@{ia}"
        atoms.append([label, tuple(float(x) for x in mol.coordinates[ia])])
        data, shells, i = mol.basis_data[first:first + count], [], 0
        while i < count:
            l, alpha, coeff = data[i]
            L = sum(l)
            order = _cartesian_order(L)
            group = data[i:i + len(order)]
            if (len(group) != len(order) or {tuple(g[0]) for g in group} != set(order)
                    or any(list(g[1]) != list(alpha) or list(g[2]) != list(coeff)
                           for g in group)):
                raise ValueError(f"PennyLane's {mol.basis_name} functions of {symbol} "
                                 f"(atom {ia}) from {i} do not form a Cartesian shell")
            shells.append([L] + [[float(a), float(c)] for a, c in zip(alpha, coeff)])
            perm.extend(offset + order.index(tuple(g[0])) for g in group)
            offset += len(order)
            i += len(order)
        basis[label] = shells
        first += count
    twin = gto.M(atom=atoms, basis=basis, unit="bohr", cart=True, charge=0, spin=0,
                 verbose=0)
    return twin, np.array(perm)


def ao_integrals(mol):
    """``(S, H_core, eri)`` over PennyLane's basis functions, as PennyLane's
    ``overlap_matrix``, ``core_matrix`` and ``repulsion_tensor`` give them.

    Shapes ``(n, n)``, ``(n, n)``, ``(n, n, n, n)`` (``n = len(mol.basis_set)``), Ha;
    ``eri[p, q, r, s] = (pq|rs)`` (chemists' order, PennyLane's ``repulsion_tensor``).
    Each PySCF function is scaled to the norm of PennyLane's
    (``1 / qchem.integrals.contracted_norm``, the contraction of normalised primitives
    not renormalised); ``S``'s diagonal is set to 1 as ``overlap_matrix`` does.
    """
    import numpy as np
    from pennylane.qchem.integrals import contracted_norm

    twin, perm = pyscf_twin(mol)
    ix = np.ix_(perm, perm)
    s = twin.intor("int1e_ovlp_cart")[ix]
    h = (twin.intor("int1e_kin_cart") + twin.intor("int1e_nuc_cart"))[ix]
    eri = twin.intor("int2e_cart")[np.ix_(perm, perm, perm, perm)]
    norms = np.array([1.0 / float(contracted_norm(b.l, np.asarray(b.alpha), np.asarray(b.coeff)))
                      for b in mol.basis_set])
    d = norms / np.sqrt(np.diag(s))
    s = s * np.outer(d, d)
    h = h * np.outer(d, d)
    eri = eri * d[:, None, None, None] * d[None, :, None, None] * d[None, None, :, None] * d
    np.fill_diagonal(s, 1.0)
    return s, h, eri


def scf_coefficients(n_electrons: int, s, h, eri, *, n_steps: int = PENNYLANE_SCF_STEPS,
                     tol: float = PENNYLANE_SCF_TOL):
    """The MO coefficients, shape ``(n, n)``, of ``qchem.hartree_fock.scf``'s algorithm
    (PennyLane 0.45.0) on the given integrals (:func:`ao_integrals`)."""
    import numpy as np

    occ = n_electrons // 2
    rng = np.random.default_rng(PENNYLANE_SCF_SEED)
    s = s + np.diag(rng.random(len(s)) * 1.0e-12)
    w, v = np.linalg.eigh(s)
    x = v @ np.diag(1.0 / np.sqrt(w)) @ v.T
    _, w_fock = np.linalg.eigh(x.T @ h @ x)
    c = x @ w_fock
    p = c[:, :occ] @ c[:, :occ].T
    for _ in range(n_steps):
        j = np.einsum("pqrs,rs->pq", eri, p)
        k = np.einsum("psqr,rs->pq", eri, p)
        _, w_fock = np.linalg.eigh(x.T @ (h + 2 * j - k) @ x)
        c = x @ w_fock
        p_new = c[:, :occ] @ c[:, :occ].T
        if np.linalg.norm(p_new - p) <= tol:
            break
        p = p_new
    return c


def active_integrals(mol, c, h, eri, active_electrons: int, active_orbitals: int):
    """``(core_constant, one, two)`` of ``qchem.electron_integrals`` (Ha): the nuclear
    repulsion plus the frozen core's energy, the active one-electron integrals with the
    core folded in, shape ``(m, m)``, and the active two-electron tensor ``(m, m, m, m)``
    in PennyLane's order (``m = active_orbitals``)."""
    import numpy as np
    from pennylane import qchem

    core, active = qchem.active_space(mol.n_electrons, mol.n_orbitals, 1,
                                      active_electrons, active_orbitals)
    # Only the core and active orbitals enter: transform those (PennyLane's
    # unfactored einsum over all orbitals is O(n^8); this is O(n^5) on a subset).
    kept = list(core) + list(active)
    ck = c[:, kept]
    one = ck.T @ h @ ck
    # two[p, q, r, s] = (p s | r q) in MO, PennyLane's ``electron_integrals`` order.
    chem = np.einsum("bdeg,ba,dc,ef,gh->acfh", eri, ck, ck, ck, ck, optimize=True)
    two = np.swapaxes(chem, 1, 3)
    constant = float(np.asarray(qchem.nuclear_energy(mol.nuclear_charges,
                                                     mol.coordinates)()).reshape(-1)[0])
    nc = len(core)
    for i in range(nc):
        constant += 2 * one[i, i]
        for j in range(nc):
            constant += 2 * two[i, j, j, i] - two[i, j, i, j]
    folded = one.copy()
    for i in range(nc):
        folded += 2 * two[i, :, :, i] - two[i, :, i, :]
    act = np.arange(nc, nc + len(active))
    return (constant, folded[np.ix_(act, act)], two[np.ix_(act, act, act, act)])


def native_hamiltonian(symbols, coordinates_bohr, basis: str, mapping: str,
                       active_electrons: int, active_orbitals: int):
    """``(H, n_qubits)`` as ``qchem.molecular_hamiltonian(symbols, coordinates, basis=basis,
    mapping=mapping, active_electrons=..., active_orbitals=...)`` returns them, built from
    PySCF's integrals over PennyLane's basis (module docstring).

    Args:
        symbols, coordinates_bohr, basis: as :func:`pennylane_molecule`.
        mapping: ``jordan_wigner`` or ``bravyi_kitaev`` (``qchem.qubit_observable``).
        active_electrons, active_orbitals: the active space.

    Raises:
        ValueError: an open-shell molecule (PennyLane's SCF refuses it too).
    """
    import numpy as np
    import pennylane as qml
    from pennylane import qchem

    mol = pennylane_molecule(symbols, coordinates_bohr, basis)
    if mol.n_electrons % 2:
        raise ValueError("Open-shell systems are not supported (PennyLane's dhf SCF)")
    s, h, eri = ao_integrals(mol)
    c = scf_coefficients(mol.n_electrons, s, h, eri)
    constant, one, two = active_integrals(mol, c, h, eri, active_electrons, active_orbitals)
    fermionic = qchem.fermionic_observable(np.array([constant]), one, two, PENNYLANE_CUTOFF)
    H = qchem.qubit_observable(fermionic, mapping=mapping)
    ps = qml.pauli.pauli_sentence(H)       # real coefficients, as molecular_hamiltonian keeps
    H = qml.pauli.PauliSentence({k: float(np.real(v)) for k, v in ps.items()}).operation()
    return H, 2 * active_orbitals
