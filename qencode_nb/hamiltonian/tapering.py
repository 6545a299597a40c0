"""Z2 tapering as the generator's ``apply_tapering`` does it.

:class:`TaperResult` (the tapered problem), :func:`find_optimal_sector` (the
Z2 symmetry sector of the ground state), :func:`strip_imaginary` (BK only) and
:func:`taper`.  Source: ``apply_tapering``, ``_find_optimal_sector`` and
``strip_imaginary_from_hamiltonian`` of ``scripts/generate_entry_v4.py``,
qencode-benchmark commit e1f44cd.

"Sector" here is always the Z2 tapering sector (one +1/-1 eigenvalue per
symmetry generator, ``encoding.tapering.sectors``), never the
(N_alpha, N_beta) determinant space of :mod:`qencode_nb.engines.sector.space`.
PennyLane and numpy are imported inside the functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as _dc_field
from typing import Any

from qencode_nb.hamiltonian.exact import exact_ground_energy
from qencode_nb.errors import HamiltonianMismatch
from qencode_nb.hamiltonian.of_bridge import check_mapping
from qencode_nb.rules import (
    Z2_SECTOR_DENSE_MAX_QUBITS,
    STRIP_DROP_REAL_HA,
    STRIP_IMAGINARY_REL,
    STRIP_VERIFY_TOL_HA,
    TAPER_CONSTANT_THRESHOLD_HA,
)


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
        z2_sectors: the Z2 symmetry sector, a list of +1/-1, one per generator
            (``encoding.tapering.sectors``; not the (N_alpha, N_beta) space).
        n_qubits_full, n_qubits_tapered: qubit counts before and after.
        e_sector_ground_ha: ground energy of the tapered operator before any
            correction or strip (dense up to :data:`Z2_SECTOR_DENSE_MAX_QUBITS`
            qubits, sparse above).
        bk_constant_correction_ha: ``e_casci - e_sector_ground_ha`` when its
            magnitude exceeds :data:`~qencode_nb.rules.TAPER_CONSTANT_THRESHOLD_HA`
            (0.1 Ha), else ``None``.  Despite the name the
            generator applies it for every mapping; it is added to VQE energies.
        bk_imaginary_stripped: ``True`` when imaginary parts above 1e-6 of the
            largest |coefficient| were removed (bravyi_kitaev only).
        bk_max_imaginary_abs_ha: largest |Im c| when stripped, else ``None``
            (as the entry stores it).
        max_imaginary_abs_ha: largest |Im c| measured (0.0 when not BK).

    :meth:`tapered_terms` and :meth:`tapered_wires` give the tapered operator
    as Pauli terms and its wires.  A result restored from the rebuild cache
    (:class:`qencode_nb.hamiltonian.cache_payload.RestoredTaperResult`) answers
    both from the stored terms without PennyLane and builds ``H_tapered``,
    ``generators`` and ``paulixops`` only when first read.
    """

    H_tapered: Any
    hf_tapered: Any
    generators: list
    paulixops: list
    z2_sectors: list
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

    def tapered_terms(self) -> list:
        """The tapered Hamiltonian as Pauli terms, ``[(word, coefficient)]``.

        ``word`` is ``{wire: "X"|"Y"|"Z"}`` (``{}`` for the identity, as
        :func:`qencode_nb.entry.pauli_strings.parse_pauli_string` returns),
        ``coefficient`` in Ha: a ``float`` when every coefficient of the
        operator is real, else a ``complex`` (all of them); the order and
        values are those of ``H_tapered.pauli_rep``, exactly.  A new list on
        every call.  Here read from the PennyLane operator; a cache-restored
        result reads its stored terms (no PennyLane).
        """
        import numpy as np

        items = list(self.H_tapered.pauli_rep.items())
        complex_ = any(float(np.imag(c)) != 0.0 for _, c in items)
        return [(dict(word), complex(c) if complex_ else float(np.real(c)))
                for word, c in items]

    def tapered_wires(self) -> list:
        """The wires ``H_tapered`` acts on, sorted (integers)."""
        return sorted(self.H_tapered.wires)


def _sector_ground_energy(H_tapered):
    """Ground energy of a tapered operator, ``None`` when it has no wire."""
    if len(H_tapered.wires) == 0:
        return None
    return exact_ground_energy(H_tapered, dense_max_qubits=Z2_SECTOR_DENSE_MAX_QUBITS)


def find_optimal_sector(H, generators, paulixops, num_electrons: int, *,
                        scan_only: bool = False):
    """Z2 symmetry sector of the ground state: ``(z2_sectors, sector_ground_energy)``.

    ``qchem.optimal_sector`` (from the Jordan-Wigner HF occupation, also for
    parity and BK) and the tapered ground energy; if that raises or yields no
    wire, every sector is tapered and the lowest ground energy wins, sectors
    in ``itertools.product([1, -1])`` order (``_find_optimal_sector``).

    ``scan_only``: skip ``qchem.optimal_sector`` and scan every sector, as QEncode
    schema 3.0.0's ``generate_entry_v3.py`` (a46b4ec, ``_find_optimal_sector``) did.

    Raises:
        HamiltonianMismatch: no sector could be tapered.
    """
    import itertools

    from pennylane import qchem

    try:
        if scan_only:
            raise LookupError("scan every sector (schema 3.0.0)")
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


def strip_imaginary(H, e_reference: float, *, threshold_rel: float = STRIP_IMAGINARY_REL,
                    verify_tol: float = STRIP_VERIFY_TOL_HA):
    """Drop imaginary parts of a tapered operator's coefficients (BK only).

    Reproduces ``strip_imaginary_from_hamiltonian``: if some |Im c| exceeds
    ``threshold_rel * max |c|``, the operator is rebuilt from its real parts
    (terms with |Re c| <= :data:`~qencode_nb.rules.STRIP_DROP_REAL_HA` dropped) through ``PauliSentence.operation()``
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
        if abs(real) > STRIP_DROP_REAL_HA:
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


def real_part(H):
    """The real part of every coefficient of a tapered operator, as QEncode schema
    3.0.0 stored it (``generate_entry_v3.py`` at a46b4ec, ``serialize_hamiltonian``:
    ``float(np.real(coeff))`` per term of ``pauli_rep``, no threshold, no check).

    Returns:
        ``(H_out, stripped, max_imaginary_abs_ha)``: ``stripped`` is True when some
        imaginary part was non-zero (then ``H_out`` is rebuilt from the real parts).
    """
    import numpy as np
    from pennylane.pauli import PauliSentence

    items = list(H.pauli_rep.items())
    max_imag = max((abs(float(np.imag(c))) for _, c in items), default=0.0)
    if max_imag == 0.0:
        return H, False, 0.0
    return (PauliSentence({w: float(np.real(c)) for w, c in items}).operation(), True,
            max_imag)


def taper(H, n_qubits: int, num_electrons: int, e_casci: float,
          mapping: str, tapering_rule: str = "v4") -> TaperResult:
    """Z2-taper an untapered qubit Hamiltonian as ``apply_tapering`` does.

    Steps: ``qchem.symmetry_generators``; ``qchem.paulix_ops``;
    :func:`find_optimal_sector`; ``qchem.taper`` and ``qchem.taper_hf``; the
    constant correction ``e_casci - e_sector_ground`` when it exceeds
    :data:`~qencode_nb.rules.TAPER_CONSTANT_THRESHOLD_HA` (any mapping); for ``bravyi_kitaev`` :func:`strip_imaginary` checked
    against the sector ground energy.

    Args:
        H: untapered operator from
            :func:`~qencode_nb.hamiltonian.of_bridge.build_of_bridge` (Ha).
        n_qubits: its qubit count.
        num_electrons: active electrons (``problem.active_space.num_electrons``).
        e_casci: CASCI ground energy (Ha).
        mapping: ``jordan_wigner``, ``parity`` or ``bravyi_kitaev``.
        tapering_rule: ``"v4"`` (:func:`find_optimal_sector`; :func:`strip_imaginary`,
            BK only, checked) or ``"v3"`` (QEncode schema 3.0.0, ``generate_entry_v3.py``
            at a46b4ec: ``_find_optimal_sector`` scans every sector for the lowest ground
            energy, no ``qchem.optimal_sector`` first; ``serialize_hamiltonian`` kept
            ``float(np.real(coeff))`` of every term on every mapping, unchecked:
            :func:`real_part`); ``Entry.tapering_rule``.

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
    sectors, e_sector = find_optimal_sector(H, generators, paulixops, num_electrons,
                                            scan_only=tapering_rule == "v3")
    H_tapered = qchem.taper(H, generators, paulixops, sectors)
    hf_tapered = qchem.taper_hf(generators, paulixops, sectors,
                                num_electrons=num_electrons, num_wires=n_qubits)
    n_tapered = len(H_tapered.wires)

    shift = e_casci - e_sector
    correction = shift if abs(shift) > TAPER_CONSTANT_THRESHOLD_HA else None

    stripped, max_imag = False, 0.0
    if tapering_rule == "v3":
        H_tapered, stripped, max_imag = real_part(H_tapered)
    elif mapping == "bravyi_kitaev":
        H_tapered, stripped, max_imag = strip_imaginary(H_tapered, e_sector)

    return TaperResult(
        H_tapered=H_tapered,
        hf_tapered=hf_tapered,
        generators=generators,
        paulixops=paulixops,
        z2_sectors=[int(s) for s in sectors],
        n_qubits_full=n_qubits,
        n_qubits_tapered=n_tapered,
        e_sector_ground_ha=e_sector,
        bk_constant_correction_ha=correction,
        bk_imaginary_stripped=stripped,
        bk_max_imaginary_abs_ha=max_imag if stripped else None,
        max_imaginary_abs_ha=max_imag,
    )


def declared_tapering_line(entry, z2_sectors, n_tapered: int) -> str | None:
    """One line naming the tapering field an entry declares, its value, and what the
    rebuild of the declared procedure accepts, or None when the counts agree.

    Args:
        entry: an :class:`~qencode_nb.entry.model.Entry` (its ``tapering_sectors``,
            ``tapered_num_qubits`` and ``kind``).
        z2_sectors: the rebuilt Z2 sectors (one +1/-1 per symmetry generator).
        n_tapered: the rebuilt number of tapered qubits.

    Returns:
        ``"field encoding.tapering.sectors: [1, -1] declares 2 Z2 symmetries (2 tapered
        qubits); the rebuild of the declared procedure finds 3, sectors [1, -1, -1] (1
        tapered qubit); accepted: 3 sectors"`` (``encoding.tapering_sectors`` for a
        params/ YAML), or None.
    """
    declared = [int(x) for x in entry.tapering_sectors]
    found = [int(x) for x in z2_sectors]
    if len(declared) == len(found) and entry.tapered_num_qubits == int(n_tapered):
        return None
    field = ("encoding.tapering_sectors" if entry.kind == "params-yaml"
             else "encoding.tapering.sectors")

    def qubits(n):
        return f"{n} tapered qubit{'' if n == 1 else 's'}"
    stated = "tapered_num_qubits" not in (getattr(entry, "from_rebuild", None) or ())
    count = f" ({qubits(entry.tapered_num_qubits)})" if stated else ""
    return (f"field {field}: {declared} declares {len(declared)} Z2 symmetries"
            f"{count}; the rebuild of the declared procedure "
            f"finds {len(found)}, sectors {found} ({qubits(int(n_tapered))}); accepted: "
            f"{len(found)} sectors")
