"""Rebuild an entry's tapered qubit problem from its declared procedure.

Glue of :mod:`qencode_nb.hamiltonian.chemistry`, :mod:`qencode_nb.hamiltonian.of_bridge`
and :mod:`qencode_nb.hamiltonian.tapering`: the generator's steps 1-3
(``run_pyscf_suite``, ``build_pl_hamiltonian`` through of_bridge,
``apply_tapering``), the light variant above
:data:`~qencode_nb.rules.LIGHT_REBUILD_ABOVE_QUBITS` qubits,
:func:`entry_field` (a dotted field of a raw QEncode entry, never defaulted), and
:class:`Rebuilt`, the rebuilt problem as the audit's stages read it.
Heavy libraries are imported by those modules, inside their functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.rules import LIGHT_REBUILD_ABOVE_QUBITS, OF_BRIDGE_VERIFY_TOL_HA


@dataclass(frozen=True)
class Rebuilt:
    """An entry's rebuilt problem (:func:`qencode_nb.hamiltonian.check.rebuild`).

    Attributes:
        chemistry: the chemistry side, a
            :class:`~qencode_nb.hamiltonian.cache_payload.ChemSummary`: Hartree-Fock,
            CASCI and exact qubit ground energies (Ha), the inputs PySCF ran with,
            and the rebuild cache's ``cache_hit``, ``cache_key``, ``cache_status``.
        tapering: the Z2-tapered qubit problem, a
            :class:`~qencode_nb.hamiltonian.tapering.TaperResult` (built now) or a
            :class:`~qencode_nb.hamiltonian.cache_payload.RestoredTaperResult` (a cache
            hit: its PennyLane operators are built when first read).
    """

    chemistry: object
    tapering: object


def rebuild_tapered(geometry: str, basis: str, charge: int, spin: int,
                    num_electrons: int, num_spatial_orbitals: int,
                    orbital_optimization: str, mapping: str, *,
                    classical: bool = False,
                    verify_tol: float | None = OF_BRIDGE_VERIFY_TOL_HA,
                    tapering_rule: str = "v4"):
    """Chemistry, of_bridge Hamiltonian and Z2 tapering of one problem.

    Args:
        geometry: PySCF atom string, Angstrom (``problem.geometry``).
        basis, charge, spin: ``problem.basis``, ``problem.charge``, ``problem.spin``.
        num_electrons, num_spatial_orbitals: ``problem.active_space``.
        orbital_optimization: ``"hf"`` or ``"casscf"``.
        mapping: ``jordan_wigner``, ``parity`` or ``bravyi_kitaev``.
        classical: also compute MP2/CCSD/CCSD(T).
        verify_tol: of_bridge exact-diagonalisation check against CASCI (Ha);
            ``None`` skips it.
        tapering_rule: the generator's sector search and imaginary strip
            (:func:`qencode_nb.hamiltonian.tapering.taper`).

    Returns:
        ``(ChemistryResult, TaperResult)``; energies in Ha.

    Raises:
        EntryError: a field value is not accepted.
        HamiltonianMismatch: a Hamiltonian check failed.
    """
    from qencode_nb.hamiltonian.chemistry import run_chemistry
    from qencode_nb.hamiltonian.of_bridge import build_of_bridge, check_mapping
    from qencode_nb.hamiltonian.tapering import taper

    check_mapping(mapping)
    chem = run_chemistry(geometry, basis, charge, spin, num_electrons,
                         num_spatial_orbitals, orbital_optimization,
                         classical=classical)
    H, n_qubits = build_of_bridge(chem, mapping, verify_tol=verify_tol)
    tapered = taper(H, n_qubits, num_electrons, chem.e_casci, mapping, tapering_rule)
    return chem, tapered


def entry_field(entry: dict, dotted: str):
    """The value at ``dotted`` (e.g. ``"problem.active_space.num_electrons"``)
    of a raw QEncode entry dict.

    Raises:
        EntryError: a key on the path is missing ("required field is missing
            (never defaulted)", naming ``dotted``).
    """
    from qencode_nb.errors import EntryError

    node = entry
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            raise EntryError("required field is missing (never defaulted)", field=dotted)
        node = node[key]
    return node


def rebuild_tapered_from_entry(entry: dict):
    """:func:`rebuild_tapered` with the fields of a QEncode 4.0.0 entry dict.

    Reads ``problem.{geometry, basis, charge, spin,
    active_space.num_electrons, active_space.num_spatial_orbitals,
    orbital_optimization}`` and ``encoding.mapping``; a missing one raises
    :class:`~qencode_nb.errors.EntryError` (no default is assumed).
    """
    names = ("problem.geometry", "problem.basis", "problem.charge", "problem.spin",
             "problem.active_space.num_electrons",
             "problem.active_space.num_spatial_orbitals",
             "problem.orbital_optimization", "encoding.mapping")
    return rebuild_tapered(*(entry_field(entry, name) for name in names))


def rebuild_tapered_light(geometry: str, basis: str, charge: int, spin: int,
                          num_electrons: int, num_spatial_orbitals: int,
                          orbital_optimization: str, mapping: str, *,
                          classical: bool = False):
    """The rebuild of :func:`rebuild_tapered` without any diagonalisation in
    the qubit space, for active spaces above
    :data:`~qencode_nb.rules.LIGHT_REBUILD_ABOVE_QUBITS` qubits.

    H10 [10e,10o] has 20 qubits: the full path's of_bridge check and sector
    search hold sparse matrices of 8-32 GB.  Here the sector is
    ``qchem.optimal_sector`` (the HF state's eigenvalues of the symmetry
    generators), the of_bridge check is skipped, and the tapered ground energy
    is taken as the CASCI energy: for ``jordan_wigner`` the Z2 tapering is
    exact and the HF sector holds the CASCI ground state, so the two agree
    (the generator's constant correction, 0 for these entries, is not
    formed).  ``TaperResult.e_sector_ground_ha`` is that CASCI energy.

    Raises:
        CapabilityMissing: a mapping other than ``jordan_wigner`` (its
            constant correction needs the sector's exact ground energy).
    """
    import numpy as np
    from pennylane import qchem

    from qencode_nb.hamiltonian.chemistry import run_chemistry
    from qencode_nb.errors import CapabilityMissing
    from qencode_nb.hamiltonian.of_bridge import build_of_bridge, check_mapping
    from qencode_nb.hamiltonian.tapering import TaperResult

    check_mapping(mapping)
    if mapping != "jordan_wigner":
        raise CapabilityMissing(
            f"a {2 * num_spatial_orbitals}-qubit {mapping} rebuild needs the tapered "
            "sector's exact ground energy for the constant correction; only "
            "jordan_wigner is rebuilt without diagonalising above "
            f"{LIGHT_REBUILD_ABOVE_QUBITS} qubits")
    chem = run_chemistry(geometry, basis, charge, spin, num_electrons,
                         num_spatial_orbitals, orbital_optimization, classical=classical)
    H, n_qubits = build_of_bridge(chem, mapping, verify_tol=None)
    generators = qchem.symmetry_generators(H)
    paulixops = qchem.paulix_ops(generators, n_qubits)
    sectors = [int(s) for s in qchem.optimal_sector(H, generators, num_electrons)]
    H_tapered = qchem.taper(H, generators, paulixops, sectors)
    hf = qchem.taper_hf(generators, paulixops, sectors, num_electrons=num_electrons,
                        num_wires=n_qubits)
    tapered = TaperResult(
        H_tapered=H_tapered, hf_tapered=np.asarray(hf), generators=generators,
        paulixops=paulixops, z2_sectors=sectors, n_qubits_full=n_qubits,
        n_qubits_tapered=len(H_tapered.wires), e_sector_ground_ha=chem.e_casci,
        bk_constant_correction_ha=None, bk_imaginary_stripped=False,
        bk_max_imaginary_abs_ha=None, max_imaginary_abs_ha=0.0)
    return chem, tapered
