"""The tier-1 field table: every procedure field, once.

Each row says where an entry declares the field (QEncode schema 4.0.0 path
and ``params/*.yaml`` path), which entries it applies to, how its declared
value is read from an :class:`~qencode_nb.entry.model.Entry`, which stage of
the audit uses it (so :func:`qencode_nb.verdict.procedure.used` knows where
to look), and whether a ``params/`` entry must state it like its JSON
(:data:`CROSS_CHECK`).  ``declared``, ``used`` and the cross-check are all
derived from :data:`FIELDS`; the generator's defaults for a field an entry
leaves out are :data:`qencode_nb.rules.GENERATOR_DEFAULTS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from qencode_nb.entry.numbers import NUMBERS
from qencode_nb.rules import GENERATOR_DEFAULTS

#: Stages that use a field: the PySCF rebuild inputs, the qubit problem built,
#: the Hamiltonian check, the re-run configuration.
USED_BY = ("rebuild", "problem", "hamiltonian", "rerun")


@dataclass(frozen=True)
class Tier1Field:
    """One procedure field.

    Attributes:
        name: the field's name in the tier-1 table (``adapt.*`` for ADAPT).
        json_path: where QEncode schema 4.0.0 declares it.
        yaml_path: where a ``params/*.yaml`` entry declares it.
        applies: ansatz names the field applies to; None: every entry.
        declared: ``Entry -> value`` (canonical, JSON-able; None when absent).
        used_by: the stage whose inputs say what the audit used (:data:`USED_BY`).
        config_key: the key in the re-run configuration (``used_by="rerun"``)
            or in the rebuild inputs (``used_by="rebuild"``).
        cross_checked: a ``params/`` entry's value must equal its JSON's
            (compared on the Entry attribute ``attribute``).
        attribute: the Entry attribute compared by the cross-check.
        recordable: QEncode schema 4.0.0 has a place for the field.  An entry
            that leaves out a recordable field fails tier 1; one that leaves out
            a field the schema cannot record (``early_stop``) makes it
            ``incomplete`` (:mod:`qencode_nb.verdict.procedure`).
    """

    name: str
    json_path: str
    yaml_path: str
    applies: frozenset | None
    declared: Callable
    used_by: str
    config_key: str | None = None
    cross_checked: bool = True
    attribute: str | None = None
    recordable: bool = True


def _attr(name):
    return lambda e: getattr(e, name)


def _adapt(key):
    return lambda e: (e.adapt or {}).get(key)


ADAPT = frozenset({"adapt"})

#: The procedure fields, in report order.
FIELDS = (
    Tier1Field("geometry", "problem.geometry", "problem.geometry", None,
               _attr("geometry"), "rebuild", "geometry", attribute="geometry"),
    Tier1Field("basis", "problem.basis", "problem.basis", None, _attr("basis"), "rebuild",
               "basis", attribute="basis"),
    Tier1Field("charge", "problem.charge", "problem.charge", None, _attr("charge"), "rebuild",
               "charge", attribute="charge"),
    Tier1Field("spin", "problem.spin", "problem.spin", None, _attr("spin"), "rebuild", "spin",
               attribute="spin"),
    Tier1Field("active_space", "problem.active_space", "problem.active_space", None,
               lambda e: list(e.active_space), "rebuild", "active_space",
               attribute="active_space"),
    Tier1Field("orbital_optimization", "problem.orbital_optimization",
               "problem.orbital_optimization", None, _attr("orbital_optimization"), "rebuild",
               "orbital_optimization", attribute="orbital_optimization"),
    Tier1Field("mapping", "encoding.mapping", "encoding.mapping", None, _attr("mapping"),
               "rebuild", "mapping", attribute="mapping"),
    Tier1Field("tapering_sectors", "encoding.tapering.sectors", "encoding.tapering_sectors",
               None, lambda e: list(e.tapering_sectors), "problem",
               attribute="tapering_sectors"),
    Tier1Field("hamiltonian_source", "provenance.hamiltonian_source",
               "encoding.hamiltonian_source", None, _attr("hamiltonian_source"),
               "hamiltonian", attribute="hamiltonian_source"),
    Tier1Field("ansatz", "encoding.ansatz_type", "encoding.ansatz", None, _attr("ansatz"),
               "problem", attribute="ansatz"),
    Tier1Field("reps", "encoding.ansatz_reps", "encoding.reps", frozenset({"hea"}),
               _attr("reps"), "problem", attribute="reps"),
    Tier1Field("adapt.gradient_threshold", "encoding.adapt_metadata.gradient_threshold",
               "encoding.adapt.gradient_threshold", ADAPT, _adapt("gradient_threshold"),
               "rerun", "gradient_threshold", cross_checked=False),
    Tier1Field("adapt.max_operators", "encoding.adapt_metadata.max_operators",
               "encoding.adapt.max_operators", ADAPT, _adapt("max_operators"), "rerun",
               "max_operators", cross_checked=False),
    Tier1Field("adapt.inner_optimizer", "run_config.optimizer", "run.optimizer", ADAPT,
               lambda e: e.optimizer.inner, "rerun", "inner", cross_checked=False),
    Tier1Field("adapt.engine", "run_config.optimizer", "run.optimizer", ADAPT,
               lambda e: e.optimizer.engine, "rerun", "engine", cross_checked=False),
    Tier1Field("optimizer", "run_config.optimizer", "run.optimizer", None,
               lambda e: e.optimizer.name, "rerun", "optimizer", attribute="optimizer"),
    Tier1Field("max_iterations", "run_config.max_iterations", "run.max_iterations", None,
               _attr("max_iterations"), "rerun", "max_iterations",
               attribute="max_iterations"),
    Tier1Field("restarts_requested", "run_config.multistart_requested", "run.restarts", None,
               _attr("restarts_requested"), "rerun", "restarts_requested",
               attribute="restarts_requested"),
    Tier1Field("early_stop", "(not recorded by QEncode 4.0.0)", "run.early_stop", None,
               _attr("early_stop"), "rerun", "early_stop", cross_checked=False,
               recordable=False),
    Tier1Field("seed", "run_config.seed", "run.seed", None, _attr("seed"), "rerun", "seed",
               attribute="seed"),
    Tier1Field("backend", "run_config.backend_type", "run.backend", None, _attr("backend"),
               "rerun", "backend", attribute="backend"),
)

#: Fields that only the re-run exercises (``not run`` in replay mode).
RUN_FIELDS = frozenset(f.name for f in FIELDS if f.used_by == "rerun")

#: Fields QEncode schema 4.0.0 cannot record (``Tier1Field.recordable`` False).
UNRECORDABLE = frozenset(f.name for f in FIELDS if not f.recordable)

#: Tier-1 fields each older QEncode schema has no place for (besides
#: :data:`UNRECORDABLE`): leaving them out makes tier 1 ``incomplete``, not ``fail``.
#: 3.0.0 (generate_entry_v3.py): no orbital optimisation, Hamiltonian source or restarts
#: requested; 1.0.0 / 2.0.0 (batch_generate.py, migrate_v1_to_v2.py): no tapering choice
#: beyond z2_symmetry_reduction, no Hamiltonian source, optimiser budget or backend of
#: the published run (2.0.0 records no geometry, charge, spin or ansatz type either,
#: and without a geometry no electron count for an entry without an active space).
CANNOT_RECORD = {
    "4.0.0": frozenset(),
    "3.0.0": frozenset({"orbital_optimization", "hamiltonian_source", "restarts_requested"}),
    "2.0.0": frozenset({"geometry", "charge", "spin", "active_space", "ansatz",
                        "orbital_optimization",
                        "hamiltonian_source", "tapering_sectors", "reps", "optimizer",
                        "max_iterations", "restarts_requested", "seed", "backend"}),
    "1.0.0": frozenset({"orbital_optimization", "hamiltonian_source", "restarts_requested",
                        "optimizer", "max_iterations", "seed", "backend"}),
}


def unrecordable(entry) -> frozenset:
    """The tier-1 fields ``entry``'s QEncode schema cannot record
    (:data:`UNRECORDABLE` and :data:`CANNOT_RECORD` of its ``schema_version``)."""
    return UNRECORDABLE | CANNOT_RECORD.get(getattr(entry, "schema_version", "4.0.0"),
                                            frozenset())


#: Facts besides the procedure that a params/ entry states and that must agree
#: with its QEncode JSON (ids, the tapered problem, published results, pins).
PUBLISHED_FACTS = ("hf_tapered_state", "tapered_num_qubits", "bk_constant_correction_ha",
                   "published_energy", "exact_ground_energy", "casci_energy", "hf_energy",
                   "published_error", "threshold", "published_certified", "published_nfev",
                   "published_restarts_run", "published_early_stopped", "num_params",
                   "tool_versions")

#: Entry attributes a params/ entry must state like its QEncode JSON, in the
#: order they are compared.
CROSS_CHECK = (("entry_id", "sha256")
               + tuple(f.attribute for f in FIELDS if f.cross_checked)
               + PUBLISHED_FACTS)


#: Where a ``params/`` YAML states each :data:`CROSS_CHECK` attribute (the cross-check
#: names the YAML's field): the procedure fields' ``yaml_path``, the numbers'
#: (:data:`qencode_nb.entry.numbers.NUMBERS`), then the ids and the other facts.
YAML_PATHS = {
    "entry_id": "qencode.entry_id", "sha256": "qencode.sha256",
    **{f.attribute: f.yaml_path for f in FIELDS if f.cross_checked},
    **{attribute: yaml_path for attribute, _, yaml_path in NUMBERS},
    "hf_tapered_state": "encoding.hf_tapered_state",
    "tapered_num_qubits": "encoding.tapered_num_qubits",
    "published_certified": "published.certified", "published_nfev": "published.nfev",
    "published_restarts_run": "published.restarts_run",
    "published_early_stopped": "published.early_stopped",
    "num_params": "published.num_params", "tool_versions": "tool_versions",
}


def default(field: str):
    """``(value, source)`` of the generator's default for ``field``
    (:data:`qencode_nb.rules.GENERATOR_DEFAULTS`).

    Raises:
        KeyError: no default is known (the field must be declared).
    """
    return GENERATOR_DEFAULTS[field]


def applies(field: Tier1Field, entry) -> bool:
    """Whether ``field`` is a procedure field of ``entry`` (by its ansatz)."""
    return field.applies is None or entry.ansatz in field.applies


def declared(entry) -> dict:
    """``{field: value}`` of the procedure as the entry declares it.

    Values are canonical (vocabulary table) and JSON-able: active space as
    ``[ne, no]``, the optimiser as its canonical name.  A field that does
    not apply, that is listed in ``entry.undeclared`` or whose value is None
    is absent from the result.
    """
    values = {}
    for f in FIELDS:
        if f.name.startswith("adapt.") and entry.ansatz != "adapt":
            continue
        value = f.declared(entry)
        if f.name not in entry.undeclared and value is not None:
            values[f.name] = value
    return values
