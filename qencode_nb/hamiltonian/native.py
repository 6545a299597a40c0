"""The ``pennylane_native`` Hamiltonian path, rebuilt as QEncode's generator built it.

Source: ``scripts/generate_entry_v4.py`` of qencode-benchmark (branch master,
commit a46b4ec): ``build_pl_hamiltonian`` calls
``qchem.molecular_hamiltonian(symbols=..., coordinates=..., basis=...,
mapping=..., active_electrons=..., active_orbitals=...)`` with coordinates in
Bohr (``pyscf_geom_to_symbols_coords``: Angstrom times
:data:`~qencode_nb.rules.GENERATOR_ANG_TO_BOHR`) and nothing else: no charge,
no multiplicity (PennyLane's defaults, 0 and 1), PennyLane's own differentiable
Hartree-Fock (method ``"dhf"``).  The generator routes ``parity`` and CASSCF
orbitals through of_bridge instead (:func:`not_used_because`).  The untapered
operator is then tapered by the same step as of_bridge's
(:func:`qencode_nb.hamiltonian.tapering.taper`).

PennyLane's own integrals are slow in cc-pVDZ (the generator's comment: "stalled
>11 min on H2CO/C4H6"; 1,679 s for LiH cc-pVDZ here), so the audit builds the same
operator from PySCF's integrals over PennyLane's basis functions
(:mod:`qencode_nb.hamiltonian.native_integrals`, method ``"integrals"``, seconds) and
keeps ``qchem.molecular_hamiltonian`` itself (method ``"pennylane"``) as the test
oracle.  The result is kept beside the rebuild cache (``native-<key>.json``, keyed
by the procedure, the method and the environment) and built only when the stored
Hamiltonian does not equal the of_bridge rebuild (:mod:`qencode_nb.hamiltonian.sources`).
"""

from __future__ import annotations

from qencode_nb.rules import GENERATOR_ANG_TO_BOHR

NATIVE_FORMAT = 1
"""Format of ``native-<key>.json``."""

METHODS = ("integrals", "pennylane")
"""How the operator is built: ``integrals`` (PySCF's integrals in PennyLane's basis,
:func:`qencode_nb.hamiltonian.native_integrals.native_hamiltonian`) or ``pennylane``
(``qchem.molecular_hamiltonian``, the generator's own call; the slow oracle)."""


def not_used_because(mapping: str, orbital_optimization: str) -> str | None:
    """Why the generator would not have built this problem natively, or None.

    Source: ``build_pl_hamiltonian`` (see the module docstring): CASSCF
    ``mo_coeff`` "always route[s] through of_bridge"; ``parity`` requires the
    bridge ("Ignored for parity, which requires the bridge").
    """
    if orbital_optimization == "casscf":
        return ("the generator routes CASSCF orbitals through of_bridge "
                "(molecular_hamiltonian takes no mo_coeff)")
    if mapping == "parity":
        return "the generator routes parity through of_bridge"
    return None


def symbols_and_bohr(geometry: str) -> tuple[list[str], list[float]]:
    """``(symbols, flat coordinates in Bohr)`` of a PySCF atom string in Angstrom,
    as the generator's ``pyscf_geom_to_symbols_coords`` converts it."""
    symbols, coords = [], []
    for atom in (a.strip() for a in geometry.strip().split(";")):
        if atom:
            parts = atom.split()
            symbols.append(parts[0])
            coords.extend(float(x) * GENERATOR_ANG_TO_BOHR for x in parts[1:4])
    return symbols, coords


def build_native(geometry: str, basis: str, num_electrons: int,
                 num_spatial_orbitals: int, mapping: str, e_casci: float,
                 tapering_rule: str = "v4", method: str = "integrals"):
    """The tapered ``pennylane_native`` Hamiltonian: a
    :class:`~qencode_nb.hamiltonian.tapering.TaperResult`.

    Args:
        geometry: PySCF atom string, Angstrom.
        basis: e.g. ``"cc-pvdz"``.
        num_electrons, num_spatial_orbitals: the active space.
        mapping: ``jordan_wigner`` or ``bravyi_kitaev``.
        e_casci: CASCI energy (Ha) for the tapering's constant correction, as the
            generator passes its own.
        tapering_rule: as :func:`qencode_nb.hamiltonian.tapering.taper`.
        method: one of :data:`METHODS`.

    Raises:
        ValueError: ``method`` not in :data:`METHODS`.
    """
    import numpy as np

    from qencode_nb.hamiltonian.tapering import taper

    if method not in METHODS:
        raise ValueError(f"method {method!r} is not one of {', '.join(METHODS)}")
    symbols, coords = symbols_and_bohr(geometry)
    if method == "integrals":
        from qencode_nb.hamiltonian.native_integrals import native_hamiltonian

        H, n_qubits = native_hamiltonian(symbols, coords, basis, mapping,
                                         num_electrons, num_spatial_orbitals)
    else:
        from pennylane import qchem

        H, n_qubits = qchem.molecular_hamiltonian(
            symbols=symbols, coordinates=np.array(coords), basis=basis, mapping=mapping,
            active_electrons=num_electrons, active_orbitals=num_spatial_orbitals)
    return taper(H, n_qubits, num_electrons, e_casci, mapping, tapering_rule)


def estimate_seconds(geometry: str, basis: str, num_spatial_orbitals: int,
                     tapering_rule: str = "v4") -> float:
    """Estimated seconds of a cold :func:`build_native` by method ``integrals``
    (:data:`~qencode_nb.rules.NATIVE_ESTIMATE`; the model and what it was fitted on).

    Args:
        geometry: PySCF atom string, Angstrom.
        basis: PennyLane's basis name.
        num_spatial_orbitals: the active orbitals.
        tapering_rule: ``"v4"`` or ``"v3"`` (schema 3.0.0's sector search).
    """
    from qencode_nb.hamiltonian.native_integrals import pennylane_molecule
    from qencode_nb.rules import NATIVE_ESTIMATE as c

    symbols, coords = symbols_and_bohr(geometry)
    n_ao = len(pennylane_molecule(symbols, coords, basis).basis_set)
    qubits4 = (2 * int(num_spatial_orbitals) / 10) ** 4
    per_qubit = c["qubit4_s"] + (c["v3_qubit4_s"] if tapering_rule == "v3" else 0.0)
    return c["constant_s"] + c["ao4_s"] * n_ao ** 4 + per_qubit * qubits4


def cached_native(geometry: str, basis: str, num_electrons: int,
                  num_spatial_orbitals: int, mapping: str, e_casci: float, *,
                  cache_dir=None, tapering_rule: str = "v4",
                  method: str = "integrals",
                  budget_s: float | None = None) -> tuple[dict, str]:
    """:func:`build_native` through ``native-<key>.json`` beside the rebuild cache.

    ``method`` as :func:`build_native`; the key holds it (``"method"``) except for
    ``"pennylane"``, whose files predate the choice.  ``budget_s`` (seconds, None: no
    limit) bounds a cold build by method ``integrals``: a cache hit is always served;
    a miss whose :func:`estimate_seconds` exceeds it raises
    :class:`~qencode_nb.errors.ProofSkipped` before anything is built.

    Returns:
        ``(fields, status)``: ``fields`` holds ``terms`` (``[[pauli_string,
        coefficient (Ha)], ...]`` in ``pauli_rep`` order, real parts),
        ``constant_ha`` (the tapering's constant correction, 0.0 when none),
        ``sectors``, ``num_qubits`` (tapered) and ``seconds`` (the build's
        time); ``status`` as :func:`qencode_nb.hamiltonian.cache.side_file` says
        (``"hit"`` or ``"built"``).
    """
    import time

    from qencode_nb.entry.pauli_strings import format_pauli_word
    from qencode_nb.hamiltonian import cache
    from qencode_nb.hamiltonian.cache_key import environment_material

    def compute():
        if budget_s is not None and method == "integrals":
            estimate = estimate_seconds(geometry, basis, num_spatial_orbitals, tapering_rule)
            if estimate > budget_s:
                from qencode_nb.errors import ProofSkipped

                raise ProofSkipped(estimate, budget_s)
        start = time.perf_counter()
        tap = build_native(geometry, basis, num_electrons, num_spatial_orbitals,
                           mapping, e_casci, tapering_rule, method)
        return {"terms": [[format_pauli_word(word), complex(c).real]
                          for word, c in tap.tapered_terms()],
                "constant_ha": float(tap.bk_constant_correction_ha or 0.0),
                "sectors": [int(s) for s in tap.z2_sectors],
                "num_qubits": int(tap.n_qubits_tapered),
                "seconds": time.perf_counter() - start}

    material = {"kind": "pennylane_native", "format": NATIVE_FORMAT,
                "problem": {"geometry": geometry, "basis": basis,
                            "num_electrons": int(num_electrons),
                            "num_spatial_orbitals": int(num_spatial_orbitals),
                            "mapping": mapping, "e_casci": float(e_casci)},
                "environment": environment_material()}
    if tapering_rule != "v4":     # schema 3.0.0's strip; v4 keys unchanged
        material["problem"]["tapering_rule"] = tapering_rule
    if method != "pennylane":
        material["method"] = method
    return cache.side_file("native", material, compute, cache_dir_=cache_dir)
