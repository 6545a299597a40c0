"""The problem stage of an entry whose procedure cannot be rebuilt (the Qiskit-era
QEncode schemas 1.0.0 and 2.0.0: ``Entry.not_checkable["rebuild"]``).

:class:`NotRebuilt` stands where a :class:`~qencode_nb.hamiltonian.rebuild.Rebuilt` would
(its ``chemistry.inputs`` is empty, so tier 1 reads the rebuild fields as not used by a
rebuild), and :func:`stored_only_check` is the Hamiltonian check that remains: the
stored terms' exact ground energy against the recorded reference energy
(:data:`qencode_nb.rules.REFERENCE_MATCH_HA`); the rebuild comparison reads n/a with the
reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class NoChemistry:
    """The chemistry side of a rebuild that did not happen: no inputs, no energies."""

    inputs: dict = field(default_factory=dict)
    e_hf: float | None = None
    e_casci: float | None = None
    cache_hit: bool | None = None
    cache_key: str | None = None
    cache_status: str | None = None


@dataclass(frozen=True)
class NotRebuilt:
    """No rebuild: ``reason`` says why (``Entry.not_checkable["rebuild"]``)."""

    reason: str
    chemistry: NoChemistry = field(default_factory=NoChemistry)
    tapering: None = None


def stored_only_check(entry, reason: str):
    """The Hamiltonian check without a rebuild (energies in Ha).

    The stored terms' exact ground energy (:func:`qencode_nb.hamiltonian.hamcheck.
    stored_ground_energy`, cached) against ``entry.exact_ground_energy``: status "pass"
    within :data:`qencode_nb.rules.REFERENCE_MATCH_HA`, "fail" beyond it, "n/a" when
    the entry records no reference energy or no stored terms; ``reason`` always says that
    no rebuild was compared and why.

    Returns:
        :class:`~qencode_nb.hamiltonian.hamrecord.HamiltonianCheck`.
    """
    from qencode_nb.hamiltonian.hamcheck import stored_ground_energy
    from qencode_nb.hamiltonian.hamrecord import HamiltonianCheck
    from qencode_nb.rules import REFERENCE_MATCH_HA

    n = int(entry.tapered_num_qubits)
    if not entry.has_stored_hamiltonian:
        return HamiltonianCheck(
            status="n/a", reason=f"no stored Hamiltonian and no rebuild ({reason})",
            hamiltonian_source=None, hamiltonian_source_recorded=entry.hamiltonian_source,
            source_matches=None, num_qubits=n, n_terms=0, ground_energy=None,
            fingerprint_ha=None, ground_energy_stored=entry.exact_ground_energy,
            ground_energy_diff=None)
    ground, method = stored_ground_energy(entry.pauli_terms, n)
    ref = entry.exact_ground_energy
    diff = None if ref is None else ground - ref
    if ref is None:
        status = "n/a"
        why = (f"the entry records no exact ground energy to compare the stored terms' "
               f"({ground:.12f} Ha) with; no rebuild: {reason}")
    else:
        status = "pass" if abs(diff) <= REFERENCE_MATCH_HA else "fail"
        why = (f"stored terms' exact ground energy {ground:.12f} Ha vs recorded "
               f"{ref:.12f} Ha: |Δ| {abs(diff):.2e} Ha "
               f"{'<=' if status == 'pass' else '>'} {REFERENCE_MATCH_HA:g} Ha "
               f"(rules.REFERENCE_MATCH_HA); no rebuild: {reason}")
    return HamiltonianCheck(
        status=status, reason=why, hamiltonian_source=None,
        hamiltonian_source_recorded=entry.hamiltonian_source, source_matches=None,
        num_qubits=n, n_terms=len(entry.pauli_terms), n_terms_stored=len(entry.pauli_terms),
        ground_energy=ground, fingerprint_ha=None, ground_energy_stored=ref,
        ground_energy_diff=diff, ground_energy_stored_terms=ground,
        stored_ground_method=method, ground_method=method,
        z2_symmetries_stored=len(entry.tapering_sectors))
