"""The Hamiltonian check's result, :class:`HamiltonianCheck`, and its ``hamiltonian``
record.

:func:`qencode_nb.hamiltonian.hamcheck.compare_hamiltonian` fills the comparison of the
stored terms with the rebuilt ones, :func:`qencode_nb.hamiltonian.hamcheck.check_entry`
the generator paths and the cache, :func:`qencode_nb.hamiltonian.check.hamiltonian_check`
the chemistry checks; :meth:`HamiltonianCheck.to_record` is the ``hamiltonian``
record an audit writes (its keys are a contract read by tools outside the project).
Energies in Ha.
"""

from __future__ import annotations

from dataclasses import dataclass

RECORD_KEYS = (
    "num_qubits", "n_qubits_rebuilt", "n_terms", "n_terms_stored", "terms_match",
    "order_match", "missing", "extra", "n_missing", "n_extra", "max_abs_dcoeff",
    "max_abs_dcoeff_term", "coeffs_bit_identical", "weyl_bound_ha", "constant_ha",
    "constant_rebuilt_ha", "ground_energy", "ground_method", "ground_energy_stored",
    "ground_energy_diff", "ground_energy_stored_terms", "stored_ground_method", "e_casci",
    "fingerprint_ha", "fingerprint_rebuilt_ha", "fingerprint_informative",
    "fingerprint_threshold_ha", "coeff_match_ha", "trace_diff_ha", "norm_sq_diff_ha2",
    "hamiltonian_source_recorded", "paths", "hamiltonian_source", "status", "reason",
    "kernel_dependent", "hamiltonian_source_inferred", "inference_basis", "source_matches",
    "cache_hit", "cache_key", "e_casci_rebuilt", "e_casci_diff", "e_hf_rebuilt",
    "e_hf_diff", "z2_symmetries_stored", "z2_symmetries_rebuilt", "structure_mismatch",
    "sectors_rebuilt", "sectors_match", "cache_status", "active_space_boundary",
    "coeffs_differing", "rebuilt_terms_sha256")
"""The ``hamiltonian`` record's keys, in order, when the entry stores a Hamiltonian
(a key added later goes at the end: readers outside the project read them)."""

REBUILT_ONLY_KEYS = (
    "n_terms", "n_terms_stored", "num_qubits", "terms_match", "max_abs_dcoeff",
    "ground_energy", "ground_energy_stored", "ground_energy_diff", "fingerprint_ha",
    "hamiltonian_source", "hamiltonian_source_inferred", "hamiltonian_source_recorded",
    "source_matches", "status", "reason", "note", "inference_basis", "e_hf_rebuilt",
    "e_hf_diff", "e_casci_rebuilt", "e_casci_diff", "z2_symmetries_stored",
    "z2_symmetries_rebuilt", "structure_mismatch", "sectors_rebuilt", "sectors_match",
    "cache_hit", "cache_key", "cache_status", "active_space_boundary")
"""The record's keys, in order, when it stores none (status "n/a": nothing compared)."""


@dataclass(frozen=True)
class HamiltonianCheck:
    """The rebuilt Hamiltonian against the entry (audit stage "hamiltonian"); Ha.

    A field the check did not reach is None: without a stored Hamiltonian every
    term comparison; before :func:`~qencode_nb.hamiltonian.check.hamiltonian_check` the
    chemistry checks.

    Attributes:
        status: "pass" (the stored terms equal a generator path), "fail" (none: an
            alert), "unverified" (none, but the rebuild depends on the BLAS kernels
            and they are not the reference triple) or "n/a" (no stored Hamiltonian);
            :data:`qencode_nb.hamiltonian.sources.STATUSES`.
        reason: the sentence saying why (the path and its largest |Δc|, or each
            path's difference and its term).
        hamiltonian_source: the generator path the stored terms equal
            (``of_bridge``, ``pennylane_native``), or None.
        hamiltonian_source_recorded: ``provenance.hamiltonian_source`` (None when
            undeclared).
        source_matches: the recorded path is the proven one (None when either is
            missing).
        kernel_dependent: the rebuild depends on the BLAS kernels (CASSCF orbitals).
        paths: ``{name: record}`` of every generator path
            (:func:`qencode_nb.hamiltonian.sources.prove`).
        num_qubits: the stored Hamiltonian's qubit count (the rebuilt tapered one
            without a stored Hamiltonian).
        n_qubits_rebuilt: the wires the rebuilt operator acts on.
        n_terms, n_terms_stored: Pauli terms rebuilt / stored.
        terms_match: the same Pauli-string sets; order_match: in the same order.
        missing, extra: stored strings absent from the rebuild and the reverse (at
            most :data:`qencode_nb.hamiltonian.hamcheck.MAX_LISTED` each);
            n_missing, n_extra: their full counts.
        max_abs_dcoeff, max_abs_dcoeff_term: the largest |rebuilt - stored|
            coefficient over common strings and its string.
        coeffs_bit_identical: same strings, every coefficient equal to the bit.
        coeffs_differing: how many Pauli strings' coefficients (Ha) are not the
            rebuilt ones to the bit (a string on one side only counts; 0 exactly
            when ``coeffs_bit_identical``).
        rebuilt_terms_sha256: the rebuilt terms' digest to the bit and in order
            (:func:`qencode_nb.hamiltonian.hamcheck.terms_sha256`): the generator study
            compares it with the generator's own Hamiltonian's.
        weyl_bound_ha: sum of |coefficient differences| (missing / extra terms whole)
            plus |constant difference|: a bound on any eigenvalue shift.
        constant_ha, constant_rebuilt_ha: the tapering's constant correction, stored
            (``bk_constant_correction_ha``, 0.0 when none) / rebuilt.
        ground_energy: exact ground energy of the rebuilt operator + its constant;
            ground_method: how it was found ("given": from the rebuild).
        ground_energy_stored: the entry's ``exact_qubit_ground_energy_hartree``;
            ground_energy_diff: rebuilt minus it.
        ground_energy_stored_terms: exact ground energy of the stored terms + the
            constant; stored_ground_method: diagonalised, or reused within the Weyl
            bound.
        e_casci: the entry's CASCI energy.
        fingerprint_ha: |E_exact(stored qubit H) - E_CASCI| (without a stored
            Hamiltonian: the rebuilt one's); fingerprint_rebuilt_ha: the rebuilt
            operator's; fingerprint_informative: False with a constant correction or
            a light rebuild (CASCI as the ground energy).
        fingerprint_threshold_ha, coeff_match_ha: the thresholds used
            (:mod:`qencode_nb.rules`).
        trace_diff_ha, norm_sq_diff_ha2: rebuilt minus stored identity coefficient
            and sum of |c|^2 (invariant under the tapering Clifford and
            active-orbital rotations).
        cache_hit, cache_key, cache_status: the rebuild cache ("hit", "absent",
            "corrupt: <why>").
        e_hf_rebuilt, e_casci_rebuilt: the rebuilt Hartree-Fock and CASCI energies;
            e_hf_diff, e_casci_diff: minus the published ones (None when unpublished).
        z2_symmetries_stored, z2_symmetries_rebuilt: Z2 symmetry counts;
            sectors_rebuilt: the rebuilt sectors (+1/-1); sectors_match: equal to
            ``encoding.tapering.sectors``.
        structure_mismatch: why the rebuilt structure is not the entry's, or None
            (:func:`qencode_nb.hamiltonian.check.rebuild_mismatch`).
        active_space_boundary: :func:`qencode_nb.hamiltonian.orbitals.boundary_check`.
    """

    status: str
    reason: str
    hamiltonian_source: str | None
    hamiltonian_source_recorded: str | None
    source_matches: bool | None
    num_qubits: int
    n_terms: int
    ground_energy: float
    fingerprint_ha: float
    ground_energy_stored: float | None
    ground_energy_diff: float | None
    kernel_dependent: bool | None = None
    paths: dict | None = None
    n_qubits_rebuilt: int | None = None
    n_terms_stored: int | None = None
    terms_match: bool | None = None
    order_match: bool | None = None
    missing: list[str] | None = None
    extra: list[str] | None = None
    n_missing: int | None = None
    n_extra: int | None = None
    max_abs_dcoeff: float | None = None
    max_abs_dcoeff_term: str | None = None
    coeffs_bit_identical: bool | None = None
    coeffs_differing: int | None = None
    rebuilt_terms_sha256: str | None = None
    weyl_bound_ha: float | None = None
    constant_ha: float | None = None
    constant_rebuilt_ha: float | None = None
    ground_method: str | None = None
    ground_energy_stored_terms: float | None = None
    stored_ground_method: str | None = None
    e_casci: float | None = None
    fingerprint_rebuilt_ha: float | None = None
    fingerprint_informative: bool | None = None
    fingerprint_threshold_ha: float | None = None
    coeff_match_ha: float | None = None
    trace_diff_ha: float | None = None
    norm_sq_diff_ha2: float | None = None
    cache_hit: bool | None = None
    cache_key: str | None = None
    cache_status: str | None = None
    e_hf_rebuilt: float | None = None
    e_hf_diff: float | None = None
    e_casci_rebuilt: float | None = None
    e_casci_diff: float | None = None
    z2_symmetries_stored: int | None = None
    z2_symmetries_rebuilt: int | None = None
    structure_mismatch: str | None = None
    sectors_rebuilt: list[int] | None = None
    sectors_match: bool | None = None
    active_space_boundary: dict | None = None

    @property
    def compared(self) -> bool:
        """The entry stores a Hamiltonian and its terms were compared."""
        return self.n_terms_stored is not None

    def to_record(self) -> dict:
        """The ``hamiltonian`` record: :data:`RECORD_KEYS` (or
        :data:`REBUILT_ONLY_KEYS` when nothing was compared), with
        ``hamiltonian_source_inferred`` (the proven path) and ``inference_basis``
        (and ``note``) repeating ``reason`` for the record's readers."""
        derived = {"hamiltonian_source_inferred": self.hamiltonian_source,
                   "inference_basis": self.reason, "note": self.reason}
        keys = RECORD_KEYS if self.compared else REBUILT_ONLY_KEYS
        return {k: derived[k] if k in derived else getattr(self, k) for k in keys}
