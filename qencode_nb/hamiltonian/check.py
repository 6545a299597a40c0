"""The problem stage of an audit: rebuild the entry's qubit problem through the
disk cache, then check it against what the entry stores.

:func:`rebuild` runs PySCF -> OpenFermion -> mapping -> Z2 tapering as the
generator does (light above :data:`qencode_nb.rules.LIGHT_REBUILD_ABOVE_QUBITS`
untapered qubits); :func:`hamiltonian_check` compares terms, exact ground
energies and the fingerprint, and adds the chemistry checks.
"""

from __future__ import annotations

from dataclasses import replace

from qencode_nb.hamiltonian.hamrecord import HamiltonianCheck
from qencode_nb.rules import LIGHT_REBUILD_ABOVE_QUBITS


def rebuild(entry):
    """Rebuild the entry's problem from its declared procedure, through the disk cache.

    PySCF (RHF, CASSCF orbitals when declared, CASCI) -> OpenFermion ->
    qubit mapping -> Z2 tapering, as the generator does (of_bridge path).
    Above :data:`qencode_nb.rules.LIGHT_REBUILD_ABOVE_QUBITS` untapered qubits
    (H10, 20) the rebuild is light: no diagonalisation in the qubit space,
    the CASCI energy as the exact one.

    An entry whose procedure cannot be rebuilt (``entry.not_checkable["rebuild"]``,
    the Qiskit-era schemas) gets a :class:`~qencode_nb.hamiltonian.stored_only.NotRebuilt`
    carrying the reason instead.

    Returns:
        :class:`~qencode_nb.hamiltonian.rebuild.Rebuilt` of
        :func:`qencode_nb.hamiltonian.cache.cached_rebuild`'s pair.  On a cache hit its
        ``tapering`` is a
        :class:`~qencode_nb.hamiltonian.cache_payload.RestoredTaperResult`: no
        PySCF, OpenFermion or PennyLane is imported, its PennyLane operators
        are built when first read.

    Raises:
        CapabilityMissing: a ``hamiltonian_source`` that cannot be rebuilt, or
            a large non-jordan_wigner problem.
    """
    from qencode_nb.hamiltonian.cache import cached_rebuild_entry
    from qencode_nb.hamiltonian.rebuild import Rebuilt

    if "rebuild" in getattr(entry, "not_checkable", {}):     # Qiskit-era: nothing to rebuild
        from qencode_nb.hamiltonian.stored_only import NotRebuilt

        return NotRebuilt(entry.not_checkable["rebuild"])
    full_qubits = 2 * entry.active_space[1]
    chem, tap = cached_rebuild_entry(entry, light=full_qubits > LIGHT_REBUILD_ABOVE_QUBITS)
    # The rebuilt energies, and what a YAML of one's own leaves to the rebuild.
    entry.complete_from_rebuild(
        tapered_num_qubits=int(tap.n_qubits_tapered), hf_tapered_state=tap.hf_tapered,
        bk_constant_correction_ha=tap.bk_constant_correction_ha,
        exact_ground_energy=chem.e_exact_qubit_ha, casci_energy=chem.e_casci,
        hf_energy=chem.e_hf)
    return Rebuilt(chemistry=chem, tapering=tap)


def hamiltonian_check(entry, rebuilt, *, proof_budget: float | None = None) -> HamiltonianCheck:
    """Audit stage "hamiltonian": the rebuilt Hamiltonian against the entry.

    With a stored Hamiltonian: :func:`qencode_nb.hamiltonian.hamcheck.check_entry`
    (term sets, largest |Δ coefficient|, exact ground energies stored vs
    rebuilt, fingerprint |E_exact - E_CASCI|, and ``hamiltonian_source``: the
    generator path the stored terms are proven equal to by rebuilding it,
    :mod:`qencode_nb.hamiltonian.sources`; ``status`` "fail" when none, an alert).
    Without one (a params/ entry without ``db``) the rebuilt ground energy is
    compared with the published exact ground energy, the fingerprint is taken
    from the rebuild and ``status`` is "n/a" (nothing to prove).  Both add the chemistry
    checks: rebuilt HF and CASCI energies minus the published ones (Ha), and
    ``active_space_boundary`` (:func:`qencode_nb.hamiltonian.orbitals.boundary_check`:
    a warning when the active space splits near-degenerate RHF orbitals), and the
    rebuild cache's ``cache_status``: "hit", "absent" (built now), or "corrupt:
    <why>" when the entry's cache file was unreadable (truncated, checksum...):
    the cache reported it (:class:`~qencode_nb.errors.CacheWarning`, shown
    in the notebook), rebuilt the problem and replaced the file, and the audit
    goes on with the rebuilt problem.

    On a cache hit it works on the stored Pauli terms and imports neither
    PennyLane nor OpenFermion nor PySCF (numpy only), unless the stored
    Hamiltonian differs from the rebuild by more than
    :data:`qencode_nb.rules.WEYL_REUSE_HA` and must be diagonalised itself.

    Args:
        entry: the :class:`~qencode_nb.entry.model.Entry`.
        rebuilt: its :class:`~qencode_nb.hamiltonian.rebuild.Rebuilt` problem (:func:`rebuild`).
        proof_budget: seconds a cold build of another generator path may be estimated
            to take (notebook parameter ``proof_budget``, default
            :data:`~qencode_nb.rules.PROOF_BUDGET_S`; None: no limit); over it the
            path is skipped and the check reads ``unverified``.

    Returns:
        :class:`~qencode_nb.hamiltonian.hamrecord.HamiltonianCheck`; its
        :meth:`~qencode_nb.hamiltonian.hamrecord.HamiltonianCheck.to_record` is the
        ``hamiltonian`` record (its keys are a contract read by tools outside the
        project).

    Raises:
        EntryError: malformed stored terms.
    """
    from qencode_nb.hamiltonian import hamcheck
    from qencode_nb.hamiltonian.orbitals import boundary_check

    if getattr(rebuilt, "tapering", True) is None:     # NotRebuilt: the stored terms alone
        from qencode_nb.hamiltonian.stored_only import stored_only_check

        return stored_only_check(entry, rebuilt.reason)
    chem, tap = rebuilt.chemistry, rebuilt.tapering
    if entry.has_stored_hamiltonian:
        from qencode_nb.rules import PROOF_BUDGET_S

        check = hamcheck.check_entry(entry, rebuilt=rebuilt, proof_budget=PROOF_BUDGET_S
                                     if proof_budget is None else proof_budget)
    else:
        check = _rebuilt_only(entry, rebuilt)
    sectors = [int(x) for x in tap.z2_sectors]
    return replace(
        check, e_hf_rebuilt=chem.e_hf, e_hf_diff=_minus(chem.e_hf, entry.hf_energy),
        e_casci_rebuilt=chem.e_casci, e_casci_diff=_minus(chem.e_casci, entry.casci_energy),
        z2_symmetries_stored=len(entry.tapering_sectors),
        z2_symmetries_rebuilt=len(tap.z2_sectors),
        structure_mismatch=rebuild_mismatch(entry, rebuilt), sectors_rebuilt=sectors,
        sectors_match=sectors == entry.tapering_sectors, cache_hit=chem.cache_hit,
        cache_key=chem.cache_key, cache_status=chem.cache_status,
        active_space_boundary=boundary_check(entry))


def _rebuilt_only(entry, rebuilt) -> HamiltonianCheck:
    """The check without a stored Hamiltonian (status "n/a"): the rebuilt ground
    energy against the published exact one, the fingerprint |E_exact - E_CASCI|
    (the published CASCI energy, else the rebuilt one), Ha."""
    chem, tap = rebuilt.chemistry, rebuilt.tapering
    ground = chem.e_exact_qubit_ha
    n_qubits = int(tap.n_qubits_tapered)
    return HamiltonianCheck(
        status="n/a",
        reason=("a YAML entry of one's own: no stored Hamiltonian, the rebuilt one "
                f"({n_qubits} qubits) is the problem" if entry.is_own else
                "no stored Hamiltonian to prove a generator path of "
                "(pass db=FOLDER to compare terms)"),
        hamiltonian_source=None, hamiltonian_source_recorded=entry.hamiltonian_source,
        source_matches=None, num_qubits=n_qubits, n_terms=len(tap.tapered_terms()),
        ground_energy=ground, ground_energy_stored=entry.exact_ground_energy,
        ground_energy_diff=_minus(ground, entry.exact_ground_energy),
        fingerprint_ha=abs(ground - (chem.e_casci if entry.casci_energy is None
                                     else entry.casci_energy)))


def _minus(rebuilt: float | None, published: float | None) -> float | None:
    """``rebuilt - published`` (Ha), None where the entry publishes no value."""
    return None if rebuilt is None or published is None else rebuilt - published


def rebuild_mismatch(entry, rebuilt) -> str | None:
    """Why the rebuilt problem's structure is not the entry's, or None.

    Compares the number of Z2 symmetries (``encoding.tapering.sectors``) and of
    tapered qubits (``encoding.tapering.tapered_num_qubits``) with the rebuild.  PySCF's
    CASSCF orbitals, and with them the Z2 symmetries the tapering finds, depend on the
    OpenBLAS kernels (a preset Haswell kernel can find 3 symmetries where the entry
    records 2), so the sentence names the kernels in force and the reference
    profile (:data:`qencode_nb.notebook.blas_profiles.REFERENCE`).
    """
    tap = rebuilt.tapering
    stored, found = len(entry.tapering_sectors), len(tap.z2_sectors)
    n_stored, n_found = entry.tapered_num_qubits, int(tap.n_qubits_tapered)
    if stored == found and n_stored == n_found:
        return None
    from qencode_nb.notebook.blas_profiles import is_reference, reference_clause
    from qencode_nb.notebook.pins import copy_kernels

    from qencode_nb.hamiltonian.tapering import declared_tapering_line

    kernels = copy_kernels()
    # the field, its value, the rebuilt count and what is accepted first
    head = declared_tapering_line(entry, tap.z2_sectors, n_found)
    if entry.orbital_optimization != "casscf":      # Hartree-Fock orbitals: no kernel story
        return head
    head += ("; PySCF's CASSCF orbitals depend on the OpenBLAS kernels, here "
             + reference_clause(kernels))
    if is_reference(kernels):
        return head + ": the entry's procedure does not rebuild it"
    return head


def check_structure(entry, rebuilt) -> None:
    """Raise :class:`~qencode_nb.errors.RebuildMismatch` when :func:`rebuild_mismatch`
    finds one and the ansatz is built on the rebuilt tapering (tapered UCCSD, ADAPT's
    pool), in the problem stage, before any parameter count is compared.  A
    hardware-efficient ansatz on the stored Hamiltonian does not use the rebuilt
    tapering: its audit goes on, the mismatch stays in the ``hamiltonian`` record."""
    if entry.ansatz == "hea" and entry.has_stored_hamiltonian:
        return
    why = rebuild_mismatch(entry, rebuilt)
    if why:
        from qencode_nb.errors import RebuildMismatch

        raise RebuildMismatch(f"{entry.source}: {why}")
