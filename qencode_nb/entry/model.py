"""The Entry model: one benchmark entry, normalised, and its value checks.

Both entry files (QEncode schema 4.0.0 JSON and ``params/*.yaml``) load into
one :class:`Entry` (:mod:`qencode_nb.entry.readers`).  Procedure fields hold
the declared value in canonical vocabulary (:mod:`qencode_nb.entry.vocabulary`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from qencode_nb.entry import vocabulary
from qencode_nb.entry.fieldpath import shown
from qencode_nb.errors import EntryError


@dataclass
class Entry:
    """One benchmark entry, normalised.  Energies in Ha, geometry in Angstrom.

    Procedure fields hold the declared value (canonical vocabulary).  A field
    the entry does not record holds the generator's default instead and is
    listed in ``undeclared`` as ``{field: {"used": value, "source": where
    the value came from}}`` (:data:`qencode_nb.rules.GENERATOR_DEFAULTS`);
    tier 1 reports it, it is never silently defaulted (docs/explanations/tiers.md).
    """

    source: Path
    kind: str                         # "qencode-json" or "params-yaml"
    entry_id: str
    sha256: str | None                # None: a YAML entry of one's own records none
    name: str
    geometry: str
    basis: str
    charge: int
    spin: int
    active_space: tuple[int, int]     # (num_electrons, num_spatial_orbitals)
    orbital_optimization: str         # hf | casscf
    mapping: str                      # jordan_wigner | parity | bravyi_kitaev
    ansatz: str                       # hea | uccsd | adapt
    reps: int | None
    optimizer: vocabulary.Optimizer
    max_iterations: int
    restarts_requested: int
    seed: int
    backend: str
    hamiltonian_source: str | None
    tapering_sectors: list[int]
    # Derived facts: None in a YAML of one's own until the rebuild fills them
    # (:meth:`complete_from_rebuild`, names in ``from_rebuild``).
    hf_tapered_state: list[int] | None
    tapered_num_qubits: int | None
    bk_constant_correction_ha: float | None
    # Published facts: None where a YAML of one's own publishes none.
    published_energy: float | None
    exact_ground_energy: float | None
    casci_energy: float | None
    hf_energy: float | None
    published_error: float | None
    threshold: float
    published_certified: bool | None
    published_nfev: int | None
    published_restarts_run: int | None
    published_early_stopped: bool | None
    num_params: int | None
    tool_versions: dict
    adapt: dict | None = None
    pauli_terms: list | None = None
    optimal_params: list | None = None
    raw: dict | None = None           # the QEncode JSON, when there is one
    params_yaml: Path | None = None   # the params/ file an entry came from
    undeclared: dict = field(default_factory=dict)
    early_stop: bool = True           # QEncode never records it (rules.GENERATOR_DEFAULTS)
    file_sha256: str | None = None    # SHA-256 of the entry file's bytes as read
    #: Where the certification threshold comes from (a file's field, or the default).
    threshold_source: str = "results.quality.gap_threshold"
    #: Entry attributes a YAML of one's own leaves to the rebuild
    #: ({attribute: why}); :meth:`complete_from_rebuild` fills them.
    from_rebuild: dict = field(default_factory=dict)
    #: The rebuilt problem's energies (Ha): ``exact_ground_energy`` (the exact ground
    #: energy of the rebuilt qubit Hamiltonian, tapering constant included; CASCI in a
    #: light rebuild), ``casci_energy``, ``hf_energy``; None before the rebuild.
    rebuilt_energies: dict | None = None
    #: The QEncode ``schema_version`` the entry was read from (its reader and hash rule:
    #: :data:`qencode_nb.entry.readers.READERS`, :data:`qencode_nb.entry.hashing.HASH_RULES`).
    schema_version: str = "4.0.0"
    #: How the generator tapered: ``"v4"`` (``qchem.optimal_sector`` then a scan;
    #: ``strip_imaginary_from_hamiltonian``, BK only, checked) or ``"v3"`` (schema 3.0.0:
    #: every sector scanned for the lowest ground energy; ``serialize_hamiltonian`` kept
    #: the real part of every term, unchecked): :func:`qencode_nb.hamiltonian.tapering.taper`.
    tapering_rule: str = "v4"
    #: Where this entry's schema states a number the audit checks, where it is not the
    #: 4.0.0 path: ``{attribute: path}`` (:func:`qencode_nb.entry.numbers.field_name`).
    field_paths: dict = field(default_factory=dict)
    #: Checks the record does not allow, ``{stage: reason}`` (stages "rebuild",
    #: "replay", "rerun"): each reads n/a with the reason (the Qiskit-era schemas).
    not_checkable: dict = field(default_factory=dict)

    @property
    def is_own(self) -> bool:
        """A YAML entry of one's own: no QEncode entry behind it (no ``qencode``
        section), so no stored Hamiltonian, no SHA-256 and perhaps no published result."""
        return self.kind == "params-yaml" and self.sha256 is None

    @property
    def reference_energy(self) -> float | None:
        """The exact ground energy tier 2 measures errors against (Ha): the published
        one (``exact_qubit_ground_energy_hartree`` / ``published.exact_ground_energy_ha``),
        else the rebuilt Hamiltonian's (:attr:`rebuilt_energies`), else None."""
        if self.exact_ground_energy is not None:
            return self.exact_ground_energy
        return (self.rebuilt_energies or {}).get("exact_ground_energy")

    @property
    def reference_source(self) -> str:
        """Where :attr:`reference_energy` comes from: "published" or "rebuilt"."""
        return "published" if self.exact_ground_energy is not None else "rebuilt"

    @property
    def casci_target(self) -> float | None:
        """The CASCI energy the generator's early stop aims at (Ha): the published one,
        else the rebuilt one."""
        if self.casci_energy is not None:
            return self.casci_energy
        return (self.rebuilt_energies or {}).get("casci_energy")

    @property
    def no_published_reason(self) -> str | None:
        """Why the published comparisons (published error and margin, replay against the
        published energy, consistency) read n/a, or None when there is a published energy."""
        if self.published_energy is not None:
            return None
        if "published" in self.not_checkable:     # an older QEncode schema's entry
            return self.not_checkable["published"]
        return (f"{self.source.name} publishes no energy (published.energy_ha; a YAML "
                "entry of one's own)")

    def complete_from_rebuild(self, *, tapered_num_qubits: int, hf_tapered_state,
                              bk_constant_correction_ha: float | None, exact_ground_energy,
                              casci_energy: float, hf_energy: float) -> None:
        """Take the rebuilt problem's facts (energies in Ha).

        Sets :attr:`rebuilt_energies` for every entry; fills the derived facts listed in
        :attr:`from_rebuild` (a YAML of one's own: tapered qubits, tapered HF state,
        tapering constant); and, for a published energy without a stated error or
        certification, derives them against :attr:`reference_energy` (listed in
        :attr:`from_rebuild` too).  Facts an entry states are never replaced.
        """
        self.rebuilt_energies = {"exact_ground_energy": (casci_energy
                                                         if exact_ground_energy is None
                                                         else float(exact_ground_energy)),
                                 "casci_energy": float(casci_energy),
                                 "hf_energy": float(hf_energy)}
        derived = {"tapered_num_qubits": int(tapered_num_qubits),
                   "hf_tapered_state": [int(b) for b in hf_tapered_state],
                   "bk_constant_correction_ha": bk_constant_correction_ha}
        for name, value in derived.items():
            if name in self.from_rebuild:
                setattr(self, name, value)
        if self.published_energy is not None and self.published_error is None:
            self.published_error = abs(self.published_energy - self.reference_energy)
            self.from_rebuild["published_error"] = (
                f"|published.energy_ha - E_exact| with the {self.reference_source} exact "
                "ground energy")
        if self.published_error is not None and self.published_certified is None:
            self.published_certified = self.published_error < self.threshold
            self.from_rebuild["published_certified"] = "published error < threshold"

    @property
    def has_stored_hamiltonian(self) -> bool:
        return self.pauli_terms is not None


def positive(value, field: str) -> None:
    """Refuse anything but an integer >= 1 (naming ``field``)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EntryError(f"{shown(value)} is not accepted; accepted: an integer >= 1",
                         field=field)


def check_semantics(e: Entry, names: dict) -> Entry:
    """Value checks beyond types: budgets >= 1, a positive threshold, a 0/1 HF state
    of the tapered size, sectors of +-1 (the types, numeric parameters included, are the
    reader's structure spec: :mod:`qencode_nb.entry.schema`).

    ``names`` maps Entry attributes to the file's field names (for messages).

    Raises:
        EntryError: naming the field, the value and what is accepted.
    """
    positive(e.max_iterations, names["max_iterations"])
    positive(e.restarts_requested, names["restarts_requested"])
    if e.tapered_num_qubits is not None:
        positive(e.tapered_num_qubits, names["tapered_num_qubits"])
    if e.reps is not None and e.reps < 0:
        raise EntryError(f"{shown(e.reps)} is not accepted; accepted: an integer >= 0",
                         field=names["reps"])
    if not e.threshold > 0:
        raise EntryError(f"{shown(e.threshold)} is not accepted; accepted: a number > 0 "
                         "(Ha)", field=names["threshold"])
    hf = e.hf_tapered_state
    if hf is not None and (
            len(hf) != (e.tapered_num_qubits if e.tapered_num_qubits is not None else len(hf))
            or any(b not in (0, 1) or isinstance(b, bool) for b in hf)):
        size = f"{e.tapered_num_qubits} bits" if e.tapered_num_qubits is not None else "bits"
        raise EntryError(f"{shown(hf)} is not accepted; accepted: {size} (0 or 1), one per "
                         "tapered qubit", field=names["hf_tapered_state"])
    if any(x not in (1, -1) or isinstance(x, bool) for x in e.tapering_sectors):
        raise EntryError(f"{shown(e.tapering_sectors)} is not accepted; accepted: a list "
                         "of +1/-1", field=names["tapering_sectors"])
    return e


JSON_NAMES = {"max_iterations": "run_config.max_iterations",
               "restarts_requested": "run_config.multistart_requested",
               "tapered_num_qubits": "encoding.tapering.tapered_num_qubits",
               "reps": "encoding.ansatz_reps", "threshold": "results.quality.gap_threshold",
               "hf_tapered_state": "encoding.tapering.hf_tapered_state",
               "tapering_sectors": "encoding.tapering.sectors"}
YAML_NAMES = {"max_iterations": "run.max_iterations", "restarts_requested": "run.restarts",
               "tapered_num_qubits": "encoding.tapered_num_qubits", "reps": "encoding.reps",
               "threshold": "published.threshold_ha",
               "hf_tapered_state": "encoding.hf_tapered_state",
               "tapering_sectors": "encoding.tapering_sectors"}
