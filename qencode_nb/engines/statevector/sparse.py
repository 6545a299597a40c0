"""Sparse statevector engine for ADAPT-VQE, as QEncode's generator runs it.

Reproduces the ``_sv_*`` helpers and the matrix set-up of
``run_vqe_adapt_statevector`` (``scripts/generate_entry_v4.py``,
qencode-benchmark commit e1f44cd): the state is an explicit complex vector
of length ``2**n`` (big-endian, wire ``wires[0]`` the most significant bit,
as PennyLane orders it), the Hamiltonian and every pool generator are
``scipy.sparse`` CSR matrices, and an operator is applied in closed form
from its generator ``B = 2iG`` (``B**3 = -B`` for an excitation), without
``expm_multiply``::

    exp((theta/2) B) |psi> = |psi> + sin(theta/2) B|psi> + (1 - cos(theta/2)) B^2|psi>

The floating-point operations are performed in the generator's order so that
energies, gradients and hence L-BFGS-B trajectories agree bit for bit.

Units: energies in Hartree (Ha), angles in radians.  Numpy, scipy and
PennyLane are imported inside the functions (``import qencode_nb`` stays
free of numpy).
"""

from __future__ import annotations


def pauli_csr(operator, wires):
    """CSR matrix of an operator from its ``pauli_rep``, summed term by term.

    Starts from an empty complex ``2**n x 2**n`` CSR matrix and adds
    ``complex(c) * word.to_mat(wire_order=wires, format="csr")`` for each
    ``(word, c)`` of ``operator.pauli_rep`` in its iteration order (the
    generator's ``_op_csr``).  Scipy's CSR addition drops entries that cancel
    to exactly zero, so ``nnz`` counts structural non-zeros only.

    Args:
        operator: PennyLane operator with a ``pauli_rep`` (coefficients in Ha
            for a Hamiltonian, dimensionless for a generator).
        wires: wire order, length ``n``.

    Returns:
        ``scipy.sparse.csr_matrix`` of shape ``(2**n, 2**n)``, complex128.

    Raises:
        ValueError: ``operator.pauli_rep`` is ``None``.
    """
    import scipy.sparse as sp

    sentence = operator.pauli_rep
    if sentence is None:
        raise ValueError(f"pauli_csr: {operator!r} has no Pauli representation")
    wire_order = list(wires)
    dim = 2 ** len(wire_order)
    total = sp.csr_matrix((dim, dim), dtype=complex)
    for word, coeff in sentence.items():
        total = total + complex(coeff) * word.to_mat(wire_order=wire_order, format="csr")
    return total.tocsr()


def hamiltonian_csr(H, wires):
    """The Hamiltonian as a CSR matrix, the generator's way.

    ``H.sparse_matrix(wire_order=wires).tocsr()``; when PennyLane cannot build
    it, :func:`pauli_csr` (the commutator screening of the QNode engine has
    that fallback; the statevector engine uses ``sparse_matrix`` only, which
    succeeds for every Pauli-sum Hamiltonian).

    Args:
        H: PennyLane operator (Ha).
        wires: wire order, length ``n`` (the sorted Hamiltonian wires).

    Returns:
        complex CSR matrix of shape ``(2**n, 2**n)``.
    """
    try:
        return H.sparse_matrix(wire_order=list(wires)).tocsr()
    except Exception:  # the generator's fallback (run_vqe_adapt)
        return pauli_csr(H, wires)


def generator_of(op):
    """Hermitian generator ``G`` of a pool operator (``op.base`` for ``Exp``).

    The generator uses ``op.base`` when the operator has one, otherwise
    ``qml.generator(op, format="observable")``.
    """
    base = getattr(op, "base", None)
    if base is not None:
        return base
    import pennylane as qml

    return qml.generator(op, format="observable")


def pool_matrices(pool, wires):
    """Sparse ``B_k = 2i G_k`` and ``B_k @ B_k`` for every pool operator.

    As ``run_vqe_adapt_statevector`` builds them (``(2j * G_csr).tocsr()``,
    ``(B @ B).tocsr()``).

    Args:
        pool: list of PennyLane operators (the ADAPT pool).
        wires: wire order, length ``n``.

    Returns:
        ``(Bs, B2s)``: two lists of CSR matrices of shape ``(2**n, 2**n)``,
        one entry per pool operator, in pool order.
    """
    Bs, B2s = [], []
    for op in pool:
        B = (2j * pauli_csr(generator_of(op), wires)).tocsr()
        Bs.append(B)
        B2s.append((B @ B).tocsr())
    return Bs, B2s


def hf_statevector(hf_state):
    """Basis state ``|hf_state>`` as a complex vector of length ``2**n``.

    Args:
        hf_state: occupation bits, shape ``(n,)``; ``hf_state[0]`` is the most
            significant bit of the index.

    Returns:
        complex128 array of shape ``(2**n,)`` with a single 1.
    """
    import numpy as np

    bits = [int(b) for b in hf_state]
    psi = np.zeros(2 ** len(bits), dtype=complex)
    psi[int("".join(str(b) for b in bits), 2)] = 1.0
    return psi


def apply_exp(B, B2, theta, psi):
    """``exp((theta/2) B)|psi>`` for an excitation generator ``B = 2iG``.

    Closed form ``psi + sin(theta/2) B psi + (1 - cos(theta/2)) B^2 psi``
    (exact when ``B**3 = -B``; ``_sv_apply_exp``).  ``theta`` in radians.
    Two sparse matrix-vector products.
    """
    import numpy as np

    half = 0.5 * theta
    return psi + np.sin(half) * (B @ psi) + (1.0 - np.cos(half)) * (B2 @ psi)


def energy(H_sp, psi) -> float:
    """``Re <psi|H|psi>`` in Ha (``_sv_energy``); ``psi`` need not be normalised."""
    import numpy as np

    return float(np.real(np.vdot(psi, H_sp @ psi)))


def build_state(psi0, Bs, B2s, selected, params):
    """``U_N ... U_1 |psi0>`` with ``U_j = exp((params[j]/2) B[selected[j]])``.

    ``_sv_build_state``.  ``selected``: pool indices, ``params``: radians,
    equal lengths (extra entries of either are ignored, as ``zip`` does).
    """
    psi = psi0
    for k, theta in zip(selected, params):
        psi = apply_exp(Bs[k], B2s[k], theta, psi)
    return psi


def energy_and_grad(H_sp, Bs, B2s, psi0, selected, params):
    """Energy and its exact gradient in all parameters (adjoint method).

    ``_sv_energy_and_grad``: forward states ``phi_j = U_j ... U_1 psi0`` are
    kept; ``lambda = H psi`` is propagated back with ``U_j^dagger =
    U_j(-theta_j)`` and ``dE/dtheta_j = Re <lambda_j| B_j |phi_j>``.

    Args:
        H_sp: Hamiltonian CSR matrix (Ha).
        Bs, B2s: from :func:`pool_matrices`.
        psi0: initial state, shape ``(2**n,)``.
        selected: pool indices of the ansatz operators, in circuit order.
        params: angles in radians, ``len(selected)`` of them.

    Returns:
        ``(E, grad)``: float (Ha) and float64 array of shape
        ``(len(selected),)`` (Ha/rad).
    """
    import numpy as np

    forward = [psi0]
    psi = psi0
    for k, theta in zip(selected, params):
        psi = apply_exp(Bs[k], B2s[k], theta, psi)
        forward.append(psi)
    Hpsi = H_sp @ psi
    E = float(np.real(np.vdot(psi, Hpsi)))
    grad = np.zeros(len(selected))
    lam = Hpsi
    for j in range(len(selected) - 1, -1, -1):
        k = selected[j]
        grad[j] = float(np.real(np.vdot(lam, Bs[k] @ forward[j + 1])))
        lam = apply_exp(Bs[k], B2s[k], -params[j], lam)
    return E, grad
