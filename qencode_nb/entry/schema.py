"""The structure of an entry file: QEncode schema 4.0.0 JSON and ``params/*.yaml``.

A dict in a spec is a section (unknown keys refused, unless it has an :data:`OPEN`
key giving the rule of every member it does not name); a tuple lists accepted types
(a number must fit a float: :func:`~qencode_nb.entry.fieldpath.fits_float`);
:class:`ListOf` is a list of items of one rule, :class:`OrNull` a rule or null,
:class:`OneOf` one of some strings; keys ending in "?" are optional; ``ANY`` is
free-form.  Validation is strict and early (threadpoolctl's model): the first fault
raises :class:`~qencode_nb.errors.EntryError` naming the field's full dotted path, the
value (shortened) and what is accepted.  The older schemas' structures are
:mod:`qencode_nb.entry.legacy_schema`.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.entry.fieldpath import fits_float, join_field, shown
from qencode_nb.errors import EntryError

SCHEMA_VERSION = "4.0.0"

# ---------------------------------------------------------------------------
# QEncode schema 4.0.0 structure, as the 40 v4.4 entries write it.
# A dict is a section (unknown keys refused); a tuple lists accepted types.
# Keys ending in "?" are optional.  ``ANY`` is free-form (adapt_metadata).
# ---------------------------------------------------------------------------
ANY = object()
#: The key of a section's rule for every member the section does not name.
OPEN = "*"


@dataclass(frozen=True)
class ListOf:
    """A JSON list whose every item follows ``item`` (``length``: exactly that many)."""

    item: object
    length: int | None = None


@dataclass(frozen=True)
class OrNull:
    """null, or a value following ``rule``."""

    rule: object


@dataclass(frozen=True)
class OneOf:
    """One of the strings ``values``, as written."""

    values: tuple


NUM = (int, float)
OPT_NUM = (int, float, type(None))
OPT_STR = (str, type(None))

#: ``encoding.adapt_metadata`` of an ADAPT entry (null otherwise): what the reader reads
#: of it; the generator's other members are free-form.
ADAPT_METADATA = {
    "gradient_threshold?": OrNull(NUM), "max_operators?": OrNull((int,)),
    "selected_operator_indices?": OrNull(ListOf((int,))), "n_operators_pool?": OrNull((int,)),
    "converged?": OrNull((bool,)), "n_iterations?": OrNull((int,)), OPEN: ANY,
}
#: ``provenance.tool_versions``: ``{package: version}`` (``git_commit`` too).
TOOL_VERSIONS = {OPEN: OPT_STR}

QENCODE_SPEC = {
    "schema_version": (str,),
    "entry_id": (str,),
    "created_utc": (str,),
    "problem": {
        "name": (str,), "basis": (str,), "variant?": (str,), "charge": (int,),
        "spin": (int,), "geometry": (str,),
        "active_space": {"num_electrons": (int,), "num_spatial_orbitals": (int,),
                         "method?": (str,), "frozen_core?": (bool,)},
        "orbital_optimization": (str,),
    },
    "encoding": {
        "mapping": (str,), "ansatz_type": (str,), "ansatz_reps?": (int,),
        "adapt_metadata": OrNull(ADAPT_METADATA),
        "tapering": {
            "enabled": (bool,), "method": (str,), "num_symmetries": (int,),
            "original_num_qubits": (int,), "tapered_num_qubits": (int,),
            "sectors": (list,), "hf_tapered_state": (list,),
            "bk_constant_correction_ha": OPT_NUM, "bk_imaginary_stripped": (bool,),
            "bk_max_imaginary_abs_ha": OPT_NUM,
        },
    },
    "artifacts": {
        "qubit_hamiltonian": {"num_qubits": (int,), "num_pauli_terms": (int,),
                              "pauli_terms": (list,), "is_tapered": (bool,),
                              "framework": (str,)},
        "circuits": {"hf_state": (list,), "ansatz_pennylane": ANY,
                     "ansatz_includes_hf": (bool,)},
    },
    "results": {
        "reference": {"hf_energy_hartree": NUM, "casci_ground_energy_hartree": NUM,
                      "exact_qubit_ground_energy_hartree": NUM,
                      "casci_first_excited_hartree": OPT_NUM,
                      "casscf_energy_hartree": OPT_NUM},
        "classical_comparison?": ANY,
        "vqe": {"best_energy_hartree": NUM,
                "optimal_params": ListOf(NUM),
                "num_params": (int,), "nfev": (int,), "optimizer": (str,),
                "multistart_runs": (int,), "computed_utc": OPT_STR},
        "quality": {"gap_threshold": NUM, "trusted": (bool,), "abs_vqe_exact_gap": NUM,
                    "gap_reference": (str,), "beats_classical?": (bool, type(None)),
                    "beats_classical_definition?": OPT_STR, "flags": (list,),
                    "notes": ANY},
    },
    "provenance": {
        "entry_hash_sha256": (str,), "source_schema_version": (str,),
        "created_utc": (str,), "tool_versions": OrNull(TOOL_VERSIONS),
        "hamiltonian_source?": OPT_STR, "environment?": ANY,
    },
    "trust": {"level": (str,), "certified_utc": OPT_STR, "signature_b64": OPT_STR,
              "signing_key_id": OPT_STR},
    # Only run_config itself is required by schema_v4.json; a missing field is
    # run at the generator's default and reported undeclared (qencode_nb.verdict.procedure).
    "run_config": {"optimizer?": (str,), "max_iterations?": (int,), "multistart?": (int,),
                   "multistart_requested?": (int,), "early_stopped?": (bool,),
                   "seed?": (int,), "backend_type?": (str,), "shots?": (int, type(None))},
    "circuit_stats?": ANY,
}

# params/<name>.yaml structure of a QEncode entry's published facts (lih, h2, h6):
# a YAML with a ``qencode`` section states every published fact, each cross-checked
# against its JSON (qencode_nb.entry.lookup.load).
PARAMS_SPEC = {
    "name": (str,),
    "description": (str,),
    "qencode": {"entry_id": (str,), "sha256": (str,)},
    "problem": {"molecule": (str,), "geometry": (str,), "basis": (str,),
                "charge": (int,), "spin": (int,), "active_space": (list,),
                "orbital_optimization": (str,)},
    "encoding": {"mapping": (str,), "ansatz": (str,), "reps?": (int,),
                 "tapering_sectors": (list,), "hf_tapered_state": (list,),
                 "tapered_num_qubits": (int,), "bk_constant_correction_ha": OPT_NUM,
                 "hamiltonian_source": (str,),
                 "adapt?": {"gradient_threshold": NUM, "max_operators": (int,)}},
    "run": {"optimizer": (str,), "max_iterations": (int,), "restarts": (int,),
            "seed": (int,), "backend": (str,), "early_stop?": (bool,)},
    "published": {"energy_ha": NUM, "exact_ground_energy_ha": NUM,
                  "casci_energy_ha": NUM, "hf_energy_ha": NUM, "error_ha": NUM,
                  "threshold_ha": NUM, "certified": (bool,), "nfev": (int,),
                  "restarts_run": (int,), "early_stopped": (bool,), "num_params": (int,)},
    "tool_versions": ANY,
}

# A YAML entry of one's own (no ``qencode`` section): the procedure alone is required
# (molecule, geometry, basis, charge, spin, active space, orbitals, mapping, tapering
# sectors, ansatz, optimiser, budgets, seed).  What the rebuild derives (tapered qubits,
# the tapered HF state, the tapering constant) may be stated; a published result is
# optional, and with it ``published.energy_ha`` is required.  The Hamiltonian source and
# the backend default to the generator's (reported undeclared).
OWN_PARAMS_SPEC = {
    "name?": (str,),
    "description?": (str,),
    "problem": PARAMS_SPEC["problem"],
    "encoding": {"mapping": (str,), "ansatz": (str,), "reps?": (int,),
                 "tapering_sectors": (list,), "hf_tapered_state?": (list,),
                 "tapered_num_qubits?": (int,), "bk_constant_correction_ha?": OPT_NUM,
                 "hamiltonian_source?": (str,),
                 "adapt?": {"gradient_threshold": NUM, "max_operators": (int,)}},
    "run": {"optimizer": (str,), "max_iterations": (int,), "restarts": (int,),
            "seed": (int,), "backend?": (str,), "early_stop?": (bool,)},
    "published?": {"energy_ha": NUM, "exact_ground_energy_ha?": NUM,
                   "casci_energy_ha?": NUM, "hf_energy_ha?": NUM, "error_ha?": NUM,
                   "threshold_ha?": NUM, "certified?": (bool,), "nfev?": (int,),
                   "restarts_run?": (int,), "early_stopped?": (bool,),
                   "num_params?": (int,)},
    "threshold_ha?": NUM,
    "tool_versions?": ANY,
}


def describe(rule) -> str:
    """What ``rule`` accepts, in words (the ``accepted:`` part of a message)."""
    if rule is ANY:
        return "any value"
    if isinstance(rule, OrNull):
        return f"{describe(rule.rule)} or null"
    if isinstance(rule, OneOf):
        return ", ".join(repr(v) for v in rule.values)
    if isinstance(rule, dict):
        return "an object"
    if isinstance(rule, ListOf):
        size = f"{rule.length} items" if rule.length is not None else "items"
        return f"a list ({size}: {describe(rule.item)})"
    names = {int: "integer", float: "number", str: "string", bool: "boolean",
             list: "list", dict: "object", type(None): "null"}
    words = [names.get(t, t.__name__) for t in rule if not (t is int and float in rule)]
    return " or ".join(dict.fromkeys(words))


def _is(value, rule) -> bool:
    """``value`` has the JSON type ``rule`` asks for (a bool is no integer)."""
    if isinstance(rule, dict):
        return isinstance(value, dict)
    if isinstance(rule, ListOf):
        return isinstance(value, list)
    if isinstance(rule, OneOf):
        return isinstance(value, str)
    return isinstance(value, rule) and not (isinstance(value, bool) and bool not in rule)


def check(value, rule, path: str) -> None:
    """Check one value (at field ``path``) against one rule of a spec, members of an
    object and items of a list included.

    Raises:
        EntryError: the first fault, naming the full field path, the value (shortened)
            and what is accepted (:func:`describe`).
    """
    if rule is ANY:
        return
    nullable = isinstance(rule, OrNull)
    if nullable:
        if value is None:
            return
        rule = rule.rule
    accepted = describe(OrNull(rule) if nullable else rule)
    if not _is(value, rule):
        raise EntryError(f"{shown(value)} has type {type(value).__name__}; accepted: "
                         f"{accepted}", field=path or "<root>")
    if isinstance(rule, OneOf) and value not in rule.values:
        raise EntryError(f"{shown(value)} is not accepted; accepted: {accepted}", field=path)
    if isinstance(rule, tuple) and float in rule and isinstance(value, int) \
            and not fits_float(value):
        raise EntryError(f"{shown(value)} is beyond the float range; accepted: a number "
                         "within +-1.8e308 (NaN and infinities are read)", field=path)
    if isinstance(rule, dict):
        _check_section(value, rule, path)
    elif isinstance(rule, ListOf):
        if rule.length is not None and len(value) != rule.length:
            raise EntryError(f"{shown(value)} has {len(value)} items; accepted: {accepted}",
                             field=path)
        for i, item in enumerate(value):
            check(item, rule.item, join_field(path, i))


def _check_section(data: dict, spec: dict, where: str) -> None:
    keys = {k.rstrip("?"): k.endswith("?") for k in spec if k != OPEN}
    others = spec.get(OPEN)
    if others is None:
        unknown = sorted(set(data) - set(keys))
        if unknown:
            raise EntryError(f"unknown field {shown(unknown[0])}; accepted fields here: "
                             + ", ".join(sorted(keys)), field=join_field(where, unknown[0]))
    for key, optional in keys.items():
        rule = spec[key + "?" if optional else key]
        path = join_field(where, key)
        if key not in data:
            if optional:
                continue
            raise EntryError(f"required field is missing; accepted: {describe(rule)}",
                             field=path)
        check(data[key], rule, path)
    if others is not None and others is not ANY:
        for key in data:
            if key not in keys:
                check(data[key], others, join_field(where, key))


def validate(data, spec: dict, where: str = "") -> None:
    """Check ``data`` against a structure spec; raise :class:`EntryError` on the first
    fault, naming the field's full dotted path (:func:`check`)."""
    check(data, spec, where)
