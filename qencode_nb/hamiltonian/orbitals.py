"""Is the active space's boundary well defined?  RHF orbital energies around it.

An entry's active space ``[ne, no]`` takes the ``no`` canonical RHF orbitals
after the ``n_core = (N - ne) / 2`` lowest (``N`` the molecule's electrons), as
the generator's PySCF CASCI/CASSCF does (CASSCF starts from them).  When an
orbital inside and one outside lie within
:data:`qencode_nb.rules.ACTIVE_BOUNDARY_TOL_HA`, which one is active is decided
by the last digits: :func:`boundary_check` names such pairs.

The orbital energies are cached beside the rebuild cache (``orbitals-<key>.json``,
:func:`qencode_nb.hamiltonian.cache.side_file`), so a warm audit runs no PySCF.
"""

from __future__ import annotations

from qencode_nb.rules import ACTIVE_BOUNDARY_TOL_HA

#: Bump when what :func:`orbital_energies` stores or its key changes (2: the key holds the
#: measured numeric environment).
FORMAT = 2


def boundary_pairs(mo_energy, n_core: int, n_active: int,
                   tol: float = ACTIVE_BOUNDARY_TOL_HA) -> list[dict]:
    """Pairs (one orbital inside the active space, one outside) closer than ``tol``.

    Args:
        mo_energy: RHF orbital energies (Ha), ascending, shape (n_mo,).
        n_core: doubly occupied orbitals below the active space.
        n_active: active spatial orbitals.
        tol: the gap below which a pair is reported (Ha).

    Returns:
        ``[{"inside": i, "outside": j, "side": "core"|"virtual", "e_inside_ha",
        "e_outside_ha", "gap_ha"}]`` (0-based MO indices), closest first.
    """
    e = [float(x) for x in mo_energy]
    inside = range(n_core, min(n_core + n_active, len(e)))
    out = []
    for j in [*range(0, n_core), *range(n_core + n_active, len(e))]:
        for i in inside:
            gap = abs(e[i] - e[j])
            if gap < tol:
                out.append({"inside": i, "outside": j,
                            "side": "core" if j < n_core else "virtual",
                            "e_inside_ha": e[i], "e_outside_ha": e[j], "gap_ha": gap})
    return sorted(out, key=lambda p: p["gap_ha"])


def _rhf_orbitals(entry) -> dict:
    """RHF of the entry's molecule with PySCF, as :func:`qencode_nb.hamiltonian.chemistry.run_chemistry`
    runs it: ``{"mo_energy": [...] (Ha), "n_electrons": N}``."""
    from pyscf import gto, scf

    mol = gto.Mole()
    mol.atom, mol.basis, mol.charge, mol.spin, mol.verbose = (
        entry.geometry, entry.basis, entry.charge, entry.spin, 0)
    mol.build()
    mf = scf.RHF(mol).run()
    return {"mo_energy": [float(x) for x in mf.mo_energy], "n_electrons": int(mol.nelectron)}


def orbital_energies(entry, cache_dir=None) -> tuple[dict, str]:
    """The entry's RHF orbital energies, through the side-file cache.

    The key holds the measured numeric environment
    (:func:`qencode_nb.notebook.fingerprint.measured_numerics`: every OpenBLAS copy's
    kernel and threads, numpy's dispatch, libc), as the rebuild cache's does (issue 36):
    the energies' last bits follow the kernels, and a near-degenerate pair's gap is made of
    them (LiH cc-pVDZ's MO 3 and 4: 1.7e-16 Ha under the portable triple, 5.3e-16 Ha under
    the reference triple; issue 51 found a gap served across kernels from a key without
    them).

    Returns:
        ``({"mo_energy": [...], "n_electrons": N}, status)``, energies in Ha,
        status "hit", "built" (see :func:`qencode_nb.hamiltonian.cache.side_file`).
    """
    from importlib.metadata import version

    from qencode_nb.hamiltonian.cache import side_file
    from qencode_nb.notebook.fingerprint import measured_numerics

    material = {"format": FORMAT, "geometry": entry.geometry, "basis": entry.basis,
                "charge": entry.charge, "spin": entry.spin, "pyscf": version("pyscf"),
                "numeric": measured_numerics()}
    fields, status = side_file("orbitals", material, lambda: _rhf_orbitals(entry),
                               cache_dir_=cache_dir)
    return {"mo_energy": fields["mo_energy"], "n_electrons": fields["n_electrons"]}, status


def boundary_check(entry, cache_dir=None, tol: float = ACTIVE_BOUNDARY_TOL_HA) -> dict:
    """The ``active_space_boundary`` part of the ``hamiltonian`` record.

    Returns:
        ``{"status": "ok"|"warning", "tolerance_ha", "n_core", "active": [first, last]
        (0-based MO indices), "pairs": boundary_pairs(...), "warning": str or None}``
        (the same on a cache hit: the cache status is not part of it); the warning
        names each pair's orbitals, energies (Ha) and gap.
    """
    orbitals, _ = orbital_energies(entry, cache_dir)
    ne, no = entry.active_space
    n_core = (orbitals["n_electrons"] - ne) // 2
    pairs = boundary_pairs(orbitals["mo_energy"], n_core, no, tol)
    warning = None
    if pairs:
        warning = ("active-space boundary splits near-degenerate orbitals: " + "; ".join(
            f"MO {p['outside']} ({p['side']}, {p['e_outside_ha']:.8f} Ha) and active MO "
            f"{p['inside']} ({p['e_inside_ha']:.8f} Ha), gap {p['gap_ha']:.1e} Ha"
            for p in pairs) + f" (< {tol:g} Ha, rules.ACTIVE_BOUNDARY_TOL_HA): which "
            "orbital is active can change with last-digit arithmetic")
    return {"status": "warning" if pairs else "ok", "tolerance_ha": tol, "n_core": n_core,
            "active": [n_core, n_core + no - 1], "pairs": pairs, "warning": warning}
