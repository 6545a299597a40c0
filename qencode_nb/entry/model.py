"""The Entry model: one benchmark entry, normalised, and its value checks.

Both entry files (QEncode schema 4.0.0 JSON and ``params/*.yaml``) load into
one :class:`Entry` (:mod:`qencode_nb.entry.readers`).  Procedure fields hold
the declared value in canonical vocabulary (:mod:`qencode_nb.entry.vocabulary`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from qencode_nb.entry import vocabulary
from qencode_nb.errors import EntryError


@dataclass
class Entry:
    """One benchmark entry, normalised.  Energies in Ha, geometry in Angstrom.

    Procedure fields hold the declared value (canonical vocabulary).  A field
    the entry does not record holds the generator's default instead and is
    listed in ``undeclared`` as ``{field: {"used": value, "source": where
    the value came from}}`` (:data:`qencode_nb.rules.GENERATOR_DEFAULTS`);
    tier 1 reports it, it is never silently defaulted (DESIGN.md).
    """

    source: Path
    kind: str                         # "qencode-json" or "params-yaml"
    entry_id: str
    sha256: str
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
    hf_tapered_state: list[int]
    tapered_num_qubits: int
    bk_constant_correction_ha: float | None
    published_energy: float
    exact_ground_energy: float
    casci_energy: float
    hf_energy: float
    published_error: float
    threshold: float
    published_certified: bool
    published_nfev: int
    published_restarts_run: int
    published_early_stopped: bool | None
    num_params: int
    tool_versions: dict
    adapt: dict | None = None
    pauli_terms: list | None = None
    optimal_params: list | None = None
    raw: dict | None = None           # the QEncode JSON, when there is one
    params_yaml: Path | None = None   # the params/ file an entry came from
    undeclared: dict = field(default_factory=dict)
    early_stop: bool = True           # QEncode never records it (rules.GENERATOR_DEFAULTS)

    @property
    def has_stored_hamiltonian(self) -> bool:
        return self.pauli_terms is not None


def positive(value, field: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EntryError(f"{value!r} is not accepted; accepted: an integer >= 1", field=field)


def check_semantics(e: Entry, names: dict) -> Entry:
    """Value checks beyond types: budgets >= 1, a positive threshold, numeric
    parameters, a 0/1 HF state of the tapered size, sectors of +-1.

    ``names`` maps Entry attributes to the file's field names (for messages).

    Raises:
        EntryError: naming the field, the value and what is accepted.
    """
    positive(e.max_iterations, names["max_iterations"])
    positive(e.restarts_requested, names["restarts_requested"])
    positive(e.tapered_num_qubits, names["tapered_num_qubits"])
    if e.reps is not None and e.reps < 0:
        raise EntryError(f"{e.reps!r} is not accepted; accepted: an integer >= 0",
                         field=names["reps"])
    if not e.threshold > 0:
        raise EntryError(f"{e.threshold!r} is not accepted; accepted: a number > 0 (Ha)",
                         field=names["threshold"])
    hf = e.hf_tapered_state
    if len(hf) != e.tapered_num_qubits or any(b not in (0, 1) or isinstance(b, bool)
                                              for b in hf):
        raise EntryError(f"{hf!r} is not accepted; accepted: {e.tapered_num_qubits} bits "
                         "(0 or 1), one per tapered qubit", field=names["hf_tapered_state"])
    if any(x not in (1, -1) or isinstance(x, bool) for x in e.tapering_sectors):
        raise EntryError(f"{e.tapering_sectors!r} is not accepted; accepted: a list of "
                         "+1/-1", field=names["tapering_sectors"])
    if e.optimal_params is not None:
        bad = [(i, x) for i, x in enumerate(e.optimal_params)
               if isinstance(x, bool) or not isinstance(x, (int, float))]
        if bad:
            raise EntryError(f"element {bad[0][0]} is {bad[0][1]!r}; accepted: numbers "
                             "(radians)", field="results.vqe.optimal_params")
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
