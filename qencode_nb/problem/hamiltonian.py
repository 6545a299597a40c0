"""Qubit Hamiltonians: QEncode ``pauli_terms`` serialisation.

QEncode stores a tapered qubit Hamiltonian as a list of
``{"pauli_string": "Z0Z1X3", "coefficient": float}`` (Ha), the identity as
``"I"`` (QEncode schema 4.0.0, artifacts.qubit_hamiltonian.pauli_terms;
written by ``serialize_hamiltonian`` of the public generator).  Wires are
integers; the term order is the order of the generator's ``pauli_rep``.

Numpy and PennyLane are imported inside the functions so that
``import qencode_nb`` stays free of numpy.
"""

from __future__ import annotations

import re

from qencode_nb.errors import EntryError

_TERM = re.compile(r"([XYZ])(\d+)")
_STRING = re.compile(r"^(I|([XYZ]\d+)+)$")


def parse_pauli_string(pauli_string: str) -> dict[int, str]:
    """Parse one QEncode Pauli string into ``{wire: "X"|"Y"|"Z"}``.

    ``"I"`` is the identity (empty dict).  Raises :class:`EntryError` naming
    the value and the accepted form when the string is malformed or a wire
    appears twice.
    """
    if not isinstance(pauli_string, str) or not _STRING.match(pauli_string):
        raise EntryError(
            f"pauli_string {pauli_string!r} is not a QEncode Pauli string; "
            "accepted: 'I' or a product such as 'Z0Z1X3' (letters X/Y/Z, integer wires)",
            field="artifacts.qubit_hamiltonian.pauli_terms[].pauli_string",
        )
    word: dict[int, str] = {}
    for op, wire in _TERM.findall(pauli_string):
        w = int(wire)
        if w in word:
            raise EntryError(
                f"pauli_string {pauli_string!r} names wire {w} twice",
                field="artifacts.qubit_hamiltonian.pauli_terms[].pauli_string",
            )
        word[w] = op
    return word


def format_pauli_word(word: dict) -> str:
    """Inverse of :func:`parse_pauli_string`: wires sorted, ``"I"`` if empty."""
    if not word:
        return "I"
    return "".join(f"{word[w]}{w}" for w in sorted(word))


def validate_pauli_terms(pauli_terms, num_qubits: int) -> list[tuple[dict, float]]:
    """Check QEncode ``pauli_terms`` without importing PennyLane.

    Returns ``[(word, coefficient)]`` in the stored order, ``word`` as from
    :func:`parse_pauli_string`, coefficients in Ha.

    Raises:
        EntryError: a term that is not ``{"pauli_string", "coefficient"}``, a
            non-numeric coefficient, a malformed string, a wire outside
            ``range(num_qubits)``, or a repeated Pauli string.
    """
    field = "artifacts.qubit_hamiltonian.pauli_terms"
    if not isinstance(pauli_terms, list):
        raise EntryError(f"{type(pauli_terms).__name__} is not accepted; accepted: a list",
                         field=field)
    out, seen = [], set()
    for i, term in enumerate(pauli_terms):
        if not isinstance(term, dict) or set(term) != {"pauli_string", "coefficient"}:
            raise EntryError(
                f"term {i} is {term!r}; accepted: an object with exactly "
                "'pauli_string' and 'coefficient'", field=field)
        coeff = term["coefficient"]
        if isinstance(coeff, bool) or not isinstance(coeff, (int, float)):
            raise EntryError(
                f"term {i} coefficient {coeff!r} is not a number (Ha)", field=field)
        word = parse_pauli_string(term["pauli_string"])
        bad = [w for w in word if w >= num_qubits]
        if bad:
            raise EntryError(
                f"term {i} {term['pauli_string']!r} acts on wire {bad[0]}, outside "
                f"range({num_qubits}) of num_qubits", field=field)
        key = format_pauli_word(word)
        if key in seen:
            raise EntryError(
                f"term {i} repeats Pauli string {term['pauli_string']!r}", field=field)
        seen.add(key)
        out.append((word, float(coeff)))
    return out


def from_pauli_terms(pauli_terms: list[dict], num_qubits: int):
    """Build a PennyLane operator from QEncode ``pauli_terms``.

    Args:
        pauli_terms: list of ``{"pauli_string": str, "coefficient": float}``,
            coefficients in Ha.
        num_qubits: the entry's ``artifacts.qubit_hamiltonian.num_qubits``;
            every wire must lie in ``range(num_qubits)``.

    Returns:
        ``pennylane.ops.Sum`` built through ``PauliSentence.operation()``, in
        the stored term order.  This reproduces the generator's energies
        bit-for-bit (measured on LiH PAR/HEA: replay ΔE = 0.0 Ha), whereas a
        ``qml.Hamiltonian`` of the same terms differs by ~1e-14 Ha.

    Raises:
        EntryError: malformed term, duplicate Pauli string, or a wire outside
            ``range(num_qubits)``.
    """
    import pennylane as qml

    sentence = qml.pauli.PauliSentence()
    for word, coeff in validate_pauli_terms(pauli_terms, num_qubits):
        sentence[qml.pauli.PauliWord(word)] = coeff
    return sentence.operation(wire_order=list(range(num_qubits)))


def to_pauli_terms(operator) -> list[dict]:
    """Serialise a PennyLane operator the way QEncode does (real parts, Ha)."""
    import numpy as np

    terms = []
    for word, coeff in operator.pauli_rep.items():
        terms.append({"pauli_string": format_pauli_word(dict(word)),
                      "coefficient": float(np.real(coeff))})
    return terms


# ---------------------------------------------------------------------------
# of_bridge: PySCF active-space integrals -> OpenFermion -> PennyLane
# ---------------------------------------------------------------------------
#
# Source: ``scripts/of_bridge.py`` (``build_qubit_hamiltonian`` and its
# helpers) and ``apply_tapering`` / ``_find_optimal_sector`` /
# ``strip_imaginary_from_hamiltonian`` of ``scripts/generate_entry_v4.py``,
# qencode-benchmark commit e1f44cd.  Floating-point sums depend on the order
# in which terms are accumulated, so every loop below runs in the order the
# generator uses; that is what makes the rebuilt coefficients bit-identical.

from dataclasses import dataclass, field as _dc_field
from typing import Any

from qencode_nb.errors import QencodeNbError

MAPPINGS = ("jordan_wigner", "parity", "bravyi_kitaev")
"""Canonical ``encoding.mapping`` values."""

_DROP_INTEGRAL = 1e-12
"""Integrals (Ha) at or below this magnitude are not added (of_bridge)."""

_DROP_QUBIT_TERM = 1e-12
"""Qubit terms whose real coefficient is below this (Ha) are dropped (of_bridge)."""

BK_CORRECTION_THRESHOLD_HA = 0.1
"""A sector ground energy further than this from CASCI triggers the constant
correction of ``apply_tapering`` (applied for every mapping, not only BK)."""


VERIFY_DENSE_MAX_QUBITS = 10
"""Above this many qubits the of_bridge check uses the sparse eigensolver."""


class HamiltonianMismatch(QencodeNbError, ValueError):
    """A rebuilt qubit Hamiltonian fails its exact-diagonalisation check."""


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
    magnitude <= 1e-12 skipped.
    """
    for p in range(ncas):
        for q in range(ncas):
            value = float(h1eff[p, q])
            if abs(value) < _DROP_INTEGRAL:
                continue
            for sigma in (0, 1):
                yield ((2 * p + sigma, 1), (2 * q + sigma, 0)), value
    for p in range(ncas):
        for q in range(ncas):
            for r in range(ncas):
                for s in range(ncas):
                    value = 0.5 * float(h2e[p, q, r, s])
                    if abs(value) < _DROP_INTEGRAL:
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
    ``mf.mo_coeff`` (pass :func:`qencode_nb.problem.chemistry.mean_field_for_active_space`
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
    ``|Re c| < 1e-12`` dropped; the constant as ``c * Identity(0)``; a word as
    the ``@``-product of its Paulis in increasing wire order.

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
        if abs(real) < _DROP_QUBIT_TERM:
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


#: Up to this many wires the dense matrix comes from ``qml.matrix``, as in the
#: generator, so that sector energies (and the constant corrections derived from
#: them) reproduce its bits; above it is assembled from ``sparse_matrix``.
QML_MATRIX_MAX_QUBITS = 12


def exact_ground_energy(H, wires=None, *, dense_max_qubits: int = 14) -> float:
    """Lowest eigenvalue (Ha) of a qubit Hamiltonian.

    Dense ``numpy.linalg.eigvalsh`` of the real part of ``qml.matrix`` up to
    ``dense_max_qubits`` wires; above, ``scipy.sparse.linalg.eigsh(k=1,
    which="SA")`` on the real part of the sparse matrix.  These are the
    generator's two paths (its entry-level exact diagonalisation switches at
    14 qubits, its sector search at 13).

    Args:
        H: PennyLane operator.
        wires: wire order; default ``sorted(H.wires)``.

    Raises:
        ValueError: ``H`` acts on no wire.
    """
    import numpy as np
    import pennylane as qml

    wires = sorted(H.wires) if wires is None else list(wires)
    if not wires:
        raise ValueError("exact_ground_energy: the operator acts on no wire")
    if len(wires) <= min(dense_max_qubits, QML_MATRIX_MAX_QUBITS):
        matrix = qml.matrix(H, wire_order=wires)
        return float(np.linalg.eigvalsh(np.real(matrix))[0])
    if len(wires) <= dense_max_qubits:
        # Same dense eigvalsh, but the matrix assembled from the sparse one:
        # qml.matrix took >10 min and 4.5 GB for H8's 13 tapered qubits, this
        # ~3 s (eigenvalue agreeing with the stored one to 5e-14 Ha).
        matrix = H.sparse_matrix(wire_order=wires).toarray()
        return float(np.linalg.eigvalsh(np.real(matrix))[0])
    from scipy.sparse.linalg import eigsh

    sparse = H.sparse_matrix(wire_order=wires)
    return float(eigsh(sparse.real, k=1, which="SA", return_eigenvectors=False)[0])


def build_of_bridge(chem, mapping: str, *, verify_tol: float = 1e-4):
    """Untapered qubit Hamiltonian from PySCF integrals via OpenFermion.

    Reproduces ``of_bridge.build_qubit_hamiltonian`` (``hamiltonian_source:
    "of_bridge"``): CASCI active-space integrals of ``chem`` (CASSCF orbitals
    when ``chem`` used them) -> ``FermionOperator`` -> ``mapping`` ->
    ``qml.Hamiltonian``, then an exact-diagonalisation check against
    ``chem.e_casci`` (dense up to 10 qubits, sparse above).

    Args:
        chem: :class:`qencode_nb.problem.chemistry.ChemistryResult`.
        mapping: ``jordan_wigner``, ``parity`` or ``bravyi_kitaev``.
        verify_tol: allowed |exact ground energy - CASCI| in Ha (the
            generator's 1e-4); ``None`` skips the check.

    Returns:
        ``(H, n_qubits)``: ``qml.Hamiltonian`` with real coefficients in Ha,
        and the untapered qubit count (``2 * num_spatial_orbitals`` in
        practice).

    Raises:
        EntryError: unknown mapping.
        HamiltonianMismatch: the ground energy misses CASCI by > ``verify_tol``.
    """
    from qencode_nb.problem.chemistry import mean_field_for_active_space

    check_mapping(mapping)
    mf = mean_field_for_active_space(chem)
    fermion_op, n_modes = active_space_fermion_operator(
        mf, chem.num_electrons, chem.num_spatial_orbitals)
    qubit_op = fermion_to_qubit(fermion_op, mapping, n_modes)
    H, n_qubits = qubit_operator_to_pennylane(qubit_op)
    if verify_tol is not None:
        # A pass/fail check only (its value is stored nowhere), so the sparse
        # solver is used from 11 qubits on; the generator diagonalises densely
        # up to 14 (19 s instead of 1.7 s for N2's 12 qubits).
        e_exact = exact_ground_energy(H, dense_max_qubits=VERIFY_DENSE_MAX_QUBITS)
        if abs(e_exact - chem.e_casci) > verify_tol:
            raise HamiltonianMismatch(
                f"of_bridge {mapping} Hamiltonian ground energy {e_exact:.10f} Ha "
                f"misses CASCI {chem.e_casci:.10f} Ha by "
                f"{abs(e_exact - chem.e_casci):.3e} Ha (tolerance {verify_tol:.1e} Ha)")
    return H, n_qubits


# ---------------------------------------------------------------------------
# Z2 tapering (apply_tapering)
# ---------------------------------------------------------------------------

@dataclass
class TaperResult:
    """The tapered problem, as ``apply_tapering`` of the generator returns it.

    Attributes:
        H_tapered: tapered PennyLane operator (Ha).  For ``bravyi_kitaev``
            with stripped imaginary parts it is the rebuilt real operator.
        hf_tapered: ``qchem.taper_hf`` state, int array of shape
            ``(n_qubits_tapered,)`` (``encoding.tapering.hf_tapered_state``).
        generators, paulixops: ``qchem.symmetry_generators`` and
            ``qchem.paulix_ops`` of the untapered Hamiltonian.
        sectors: list of +1/-1, one per generator (``encoding.tapering.sectors``).
        n_qubits_full, n_qubits_tapered: qubit counts before and after.
        e_sector_ground_ha: ground energy of the tapered operator before any
            correction or strip (dense up to 13 qubits, sparse above).
        bk_constant_correction_ha: ``e_casci - e_sector_ground_ha`` when its
            magnitude exceeds 0.1 Ha, else ``None``.  Despite the name the
            generator applies it for every mapping; it is added to VQE energies.
        bk_imaginary_stripped: ``True`` when imaginary parts above 1e-6 of the
            largest |coefficient| were removed (bravyi_kitaev only).
        bk_max_imaginary_abs_ha: largest |Im c| when stripped, else ``None``
            (as the entry stores it).
        max_imaginary_abs_ha: largest |Im c| measured (0.0 when not BK).
    """

    H_tapered: Any
    hf_tapered: Any
    generators: list
    paulixops: list
    sectors: list
    n_qubits_full: int
    n_qubits_tapered: int
    e_sector_ground_ha: float
    bk_constant_correction_ha: float | None = None
    bk_imaginary_stripped: bool = False
    bk_max_imaginary_abs_ha: float | None = None
    max_imaginary_abs_ha: float = 0.0
    num_symmetries: int = _dc_field(init=False)

    def __post_init__(self):
        self.num_symmetries = len(self.generators)


def _sector_ground_energy(H_tapered):
    """Ground energy of a tapered operator, ``None`` when it has no wire."""
    if len(H_tapered.wires) == 0:
        return None
    return exact_ground_energy(H_tapered, dense_max_qubits=13)


def find_optimal_sector(H, generators, paulixops, num_electrons: int):
    """Symmetry sector of the ground state: ``(sectors, sector_ground_energy)``.

    ``qchem.optimal_sector`` (from the Jordan-Wigner HF occupation, also for
    parity and BK) and the tapered ground energy; if that raises or yields no
    wire, every sector is tapered and the lowest ground energy wins, sectors
    in ``itertools.product([1, -1])`` order (``_find_optimal_sector``).

    Raises:
        HamiltonianMismatch: no sector could be tapered.
    """
    import itertools

    from pennylane import qchem

    try:
        sectors = list(qchem.optimal_sector(H, generators, num_electrons))
        energy = _sector_ground_energy(qchem.taper(H, generators, paulixops, sectors))
        if energy is not None:
            return sectors, energy
    except Exception:  # the generator falls back to the scan on any failure
        pass

    best = None
    for candidate in itertools.product([1, -1], repeat=len(generators)):
        try:
            energy = _sector_ground_energy(
                qchem.taper(H, generators, paulixops, list(candidate)))
        except Exception:
            continue
        if energy is not None and (best is None or energy < best[1]):
            best = (list(candidate), energy)
    if best is None:
        raise HamiltonianMismatch("no symmetry sector of the Hamiltonian could be tapered")
    return best


def strip_imaginary(H, e_reference: float, *, threshold_rel: float = 1e-6,
                    verify_tol: float = 1e-3):
    """Drop imaginary parts of a tapered operator's coefficients (BK only).

    Reproduces ``strip_imaginary_from_hamiltonian``: if some |Im c| exceeds
    ``threshold_rel * max |c|``, the operator is rebuilt from its real parts
    (terms with |Re c| <= 1e-14 dropped) through ``PauliSentence.operation()``
    and its ground energy must stay within ``verify_tol`` (Ha) of
    ``e_reference``; otherwise ``H`` is returned unchanged.

    Returns:
        ``(H_out, stripped, max_imaginary_abs_ha)``.

    Raises:
        HamiltonianMismatch: the stripped operator's ground energy moved.
    """
    import numpy as np
    from pennylane.pauli import PauliSentence

    items = list(H.pauli_rep.items())
    largest = max((abs(c) for _, c in items), default=1.0)
    limit = threshold_rel * largest
    max_imag = 0.0
    stripped = False
    kept = []
    for word, coeff in items:
        imag = abs(float(np.imag(coeff)))
        real = float(np.real(coeff))
        max_imag = max(max_imag, imag)
        stripped = stripped or imag > limit
        if abs(real) > 1e-14:
            kept.append((word, real))
    if not stripped:
        return H, False, max_imag
    H_real = PauliSentence(dict(kept)).operation()
    e_real = exact_ground_energy(H_real)
    if abs(e_real - e_reference) > verify_tol:
        raise HamiltonianMismatch(
            f"stripping imaginary parts (max {max_imag:.3e} Ha) moved the ground "
            f"energy to {e_real:.10f} Ha, {abs(e_real - e_reference):.3e} Ha from "
            f"{e_reference:.10f} Ha (tolerance {verify_tol:.1e} Ha)")
    return H_real, True, max_imag


def taper(H, n_qubits: int, num_electrons: int, e_casci: float,
          mapping: str) -> TaperResult:
    """Z2-taper an untapered qubit Hamiltonian as ``apply_tapering`` does.

    Steps: ``qchem.symmetry_generators``; ``qchem.paulix_ops``;
    :func:`find_optimal_sector`; ``qchem.taper`` and ``qchem.taper_hf``; the
    constant correction ``e_casci - e_sector_ground`` when it exceeds 0.1 Ha
    (any mapping); for ``bravyi_kitaev`` :func:`strip_imaginary` checked
    against the sector ground energy.

    Args:
        H: untapered operator from :func:`build_of_bridge` (Ha).
        n_qubits: its qubit count.
        num_electrons: active electrons (``problem.active_space.num_electrons``).
        e_casci: CASCI ground energy (Ha).
        mapping: ``jordan_wigner``, ``parity`` or ``bravyi_kitaev``.

    Returns:
        :class:`TaperResult`.

    Raises:
        EntryError: unknown mapping.
        HamiltonianMismatch: no sector, or a failed imaginary-strip check.
    """
    from pennylane import qchem

    check_mapping(mapping)
    generators = qchem.symmetry_generators(H)
    paulixops = qchem.paulix_ops(generators, n_qubits)
    sectors, e_sector = find_optimal_sector(H, generators, paulixops, num_electrons)
    H_tapered = qchem.taper(H, generators, paulixops, sectors)
    hf_tapered = qchem.taper_hf(generators, paulixops, sectors,
                                num_electrons=num_electrons, num_wires=n_qubits)
    n_tapered = len(H_tapered.wires)

    shift = e_casci - e_sector
    correction = shift if abs(shift) > BK_CORRECTION_THRESHOLD_HA else None

    stripped, max_imag = False, 0.0
    if mapping == "bravyi_kitaev":
        H_tapered, stripped, max_imag = strip_imaginary(H_tapered, e_sector)

    return TaperResult(
        H_tapered=H_tapered,
        hf_tapered=hf_tapered,
        generators=generators,
        paulixops=paulixops,
        sectors=[int(s) for s in sectors],
        n_qubits_full=n_qubits,
        n_qubits_tapered=n_tapered,
        e_sector_ground_ha=e_sector,
        bk_constant_correction_ha=correction,
        bk_imaginary_stripped=stripped,
        bk_max_imaginary_abs_ha=max_imag if stripped else None,
        max_imaginary_abs_ha=max_imag,
    )
