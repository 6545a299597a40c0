"""of_bridge: PySCF active-space integrals -> OpenFermion -> qubit mapping -> PennyLane.

The untapered qubit Hamiltonian of ``hamiltonian_source: "of_bridge"``, the
generator's default since v4.4.  Source: ``scripts/of_bridge.py``
(``build_qubit_hamiltonian`` and its helpers) of qencode-benchmark, commit
e1f44cd.  Floating-point sums depend on the order in which terms are
accumulated, so every loop below runs in the order the generator uses; that is
what makes the rebuilt coefficients bit-identical.

Also here: the canonical mapping names (:data:`MAPPINGS`, :func:`check_mapping`)
and :class:`HamiltonianMismatch`, raised when a rebuilt Hamiltonian fails an
exact-diagonalisation check.  PySCF, OpenFermion, numpy and PennyLane are
imported inside the functions.
"""

from __future__ import annotations

from qencode_nb.errors import EntryError, HamiltonianMismatch
from qencode_nb.hamiltonian.exact import exact_ground_energy
from qencode_nb.rules import (
    DROP_INTEGRAL_HA,
    DROP_QUBIT_TERM_HA,
    OF_BRIDGE_VERIFY_TOL_HA,
    VERIFY_DENSE_MAX_QUBITS,
)

MAPPINGS = ("jordan_wigner", "parity", "bravyi_kitaev")
"""Canonical ``encoding.mapping`` values."""


def check_mapping(mapping: str) -> str:
    """Return ``mapping`` if it is a canonical mapping name, else raise.

    Raises:
        EntryError: naming ``encoding.mapping`` and the accepted values.
    """
    if mapping not in MAPPINGS:
        raise EntryError(
            f"mapping {mapping!r} is not accepted; accepted: {', '.join(MAPPINGS)}",
            field="encoding.mapping")
    return mapping


def _spin_orbital_terms(h1eff, h2e, ncas):
    """Yield ``(fermion_term, coefficient)`` of the active-space Hamiltonian.

    Interleaved spin orbitals (``2p + sigma``, alpha = 0).  One-body terms
    ``h1eff[p, q] a+_{p s} a_{q s}``, then two-body terms
    ``0.5 (pq|rs) a+_{p s} a+_{r t} a_{s t} a_{q s}`` with chemist-notation
    ``h2e``; loops over p, q (r, s) outermost, spins innermost; integrals with
    magnitude below :data:`~qencode_nb.rules.DROP_INTEGRAL_HA` (1e-12 Ha) skipped.
    """
    for p in range(ncas):
        for q in range(ncas):
            value = float(h1eff[p, q])
            if abs(value) < DROP_INTEGRAL_HA:
                continue
            for sigma in (0, 1):
                yield ((2 * p + sigma, 1), (2 * q + sigma, 0)), value
    for p in range(ncas):
        for q in range(ncas):
            for r in range(ncas):
                for s in range(ncas):
                    value = 0.5 * float(h2e[p, q, r, s])
                    if abs(value) < DROP_INTEGRAL_HA:
                        continue
                    for sigma in (0, 1):
                        for tau in (0, 1):
                            yield ((2 * p + sigma, 1), (2 * r + tau, 1),
                                   (2 * s + tau, 0), (2 * q + sigma, 0)), value


def active_space_fermion_operator(mf, num_electrons: int, num_spatial_orbitals: int):
    """OpenFermion ``FermionOperator`` of the CASCI active space of ``mf``.

    Integrals come from ``pyscf.mcscf.CASCI(mf, no, ne)``: ``get_h1eff()``
    (effective one-body operator and core energy, Ha) and ``get_h2eff()``
    restored to the full ``(no,)*4`` chemist tensor.  The orbitals are
    ``mf.mo_coeff`` (pass :func:`qencode_nb.hamiltonian.chemistry.mean_field_for_active_space`
    for CASSCF orbitals).

    Returns:
        ``(fermion_operator, num_spin_orbitals)``.
    """
    from openfermion import FermionOperator
    from pyscf import ao2mo, mcscf

    cas = mcscf.CASCI(mf, num_spatial_orbitals, num_electrons)
    h1eff, e_core = cas.get_h1eff()
    h2e = ao2mo.restore(1, cas.get_h2eff(), num_spatial_orbitals)

    fermion_op = FermionOperator("", float(e_core))
    # Term-by-term += as of_bridge does: OpenFermion drops a key whose running
    # sum becomes small and re-inserts it later, which changes the order.
    for term, value in _spin_orbital_terms(h1eff, h2e, num_spatial_orbitals):
        fermion_op += FermionOperator(term, value)
    return fermion_op, 2 * num_spatial_orbitals


def fermion_to_qubit(fermion_op, mapping: str, num_spin_orbitals: int):
    """OpenFermion ``QubitOperator`` under ``mapping``.

    ``jordan_wigner`` and ``bravyi_kitaev`` are OpenFermion's transforms of
    the same names; ``parity`` is ``binary_code_transform`` with
    ``parity_code(num_spin_orbitals)``.
    """
    check_mapping(mapping)
    if mapping == "jordan_wigner":
        from openfermion.transforms import jordan_wigner

        return jordan_wigner(fermion_op)
    if mapping == "bravyi_kitaev":
        from openfermion.transforms import bravyi_kitaev

        return bravyi_kitaev(fermion_op)
    from openfermion.transforms import binary_code_transform, parity_code

    return binary_code_transform(fermion_op, parity_code(num_spin_orbitals))


def qubit_operator_to_pennylane(qubit_op):
    """PennyLane ``qml.Hamiltonian`` of an OpenFermion ``QubitOperator``.

    Terms in the operator's own order; real parts only; terms with
    ``|Re c|`` below :data:`~qencode_nb.rules.DROP_QUBIT_TERM_HA` (1e-12 Ha)
    dropped; the constant as ``c * Identity(0)``; a word as the ``@``-product
    of its Paulis in increasing wire order.

    Returns:
        ``(H, n_qubits)`` with ``n_qubits = max wire + 1`` (not the number of
        spin orbitals: a mode no kept term touches is not counted).  An
        operator with no kept term gives ``(0 * Identity(0), 1)``.
    """
    import numpy as np
    import pennylane as qml

    paulis = {"X": qml.PauliX, "Y": qml.PauliY, "Z": qml.PauliZ}
    coeffs, ops = [], []
    top_wire = -1
    for word, coeff in qubit_op.terms.items():
        real = float(np.real(coeff))
        if abs(real) < DROP_QUBIT_TERM_HA:
            continue
        if not word:
            ops.append(qml.Identity(0))
        else:
            factors = [paulis[letter](wire) for wire, letter in sorted(word)]
            top_wire = max([top_wire] + [wire for wire, _ in word])
            product = factors[0]
            for factor in factors[1:]:
                product = product @ factor
            ops.append(product)
        coeffs.append(real)
    if not ops:
        return qml.Hamiltonian(np.array([0.0]), [qml.Identity(0)]), 1
    return qml.Hamiltonian(np.array(coeffs), ops), top_wire + 1


def build_of_bridge(chem, mapping: str, *,
                    verify_tol: float | None = OF_BRIDGE_VERIFY_TOL_HA):
    """Untapered qubit Hamiltonian from PySCF integrals via OpenFermion.

    Reproduces ``of_bridge.build_qubit_hamiltonian`` (``hamiltonian_source:
    "of_bridge"``): CASCI active-space integrals of ``chem`` (CASSCF orbitals
    when ``chem`` used them) -> ``FermionOperator`` -> ``mapping`` ->
    ``qml.Hamiltonian``, then an exact-diagonalisation check against
    ``chem.e_casci`` (dense up to :data:`~qencode_nb.rules.VERIFY_DENSE_MAX_QUBITS`
    qubits, sparse above; :func:`~qencode_nb.hamiltonian.exact.exact_ground_energy`).

    Args:
        chem: :class:`qencode_nb.hamiltonian.chemistry.ChemistryResult`.
        mapping: ``jordan_wigner``, ``parity`` or ``bravyi_kitaev``.
        verify_tol: allowed |exact ground energy - CASCI| in Ha (the
            generator's :data:`~qencode_nb.rules.OF_BRIDGE_VERIFY_TOL_HA`);
            ``None`` skips the check.

    Returns:
        ``(H, n_qubits)``: ``qml.Hamiltonian`` with real coefficients in Ha,
        and the untapered qubit count (``2 * num_spatial_orbitals`` in
        practice).

    Raises:
        EntryError: unknown mapping.
        HamiltonianMismatch: the ground energy misses CASCI by > ``verify_tol``.
    """
    from qencode_nb.hamiltonian.chemistry import mean_field_for_active_space

    check_mapping(mapping)
    mf = mean_field_for_active_space(chem)
    fermion_op, n_modes = active_space_fermion_operator(
        mf, chem.num_electrons, chem.num_spatial_orbitals)
    qubit_op = fermion_to_qubit(fermion_op, mapping, n_modes)
    H, n_qubits = qubit_operator_to_pennylane(qubit_op)
    if verify_tol is not None:
        # A pass/fail check only (its value is stored nowhere), so the sparse
        # solver is used from 11 qubits on; the generator diagonalises densely
        # up to 14.
        e_exact = exact_ground_energy(H, dense_max_qubits=VERIFY_DENSE_MAX_QUBITS)
        if abs(e_exact - chem.e_casci) > verify_tol:
            raise HamiltonianMismatch(
                f"of_bridge {mapping} Hamiltonian ground energy {e_exact:.10f} Ha "
                f"misses CASCI {chem.e_casci:.10f} Ha by "
                f"{abs(e_exact - chem.e_casci):.3e} Ha (tolerance {verify_tol:.1e} Ha); the "
                "check, as QEncode's generator runs it, takes the lowest eigenvalue over "
                "every electron number, so it cannot pass when a state with another "
                f"number of electrons lies lower than the {chem.num_electrons}-electron "
                "ground state (e.g. a cation); accepted: a neutral or anionic "
                "molecule, or an active space whose N-electron ground state is lowest")
    return H, n_qubits
