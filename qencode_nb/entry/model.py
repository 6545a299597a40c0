"""Benchmark entries: QEncode schema 4.0.0 JSON files and our ``params/*.yaml``.

Both load into one :class:`Entry`.  A QEncode JSON file carries everything
(stored Hamiltonian, optimal parameters, published results); a
``params/<name>.yaml`` entry records the published facts of one QEncode entry
(geometry, procedure, published energies, the QEncode entry id and SHA-256)
and, given a ``db`` folder, is completed from the JSON file of that id.

Validation is strict and early (threadpoolctl's model): an unknown field, a
wrong type, a missing required field or truncated JSON raises
:class:`~qencode_nb.errors.EntryError` naming the file, the field and what is
accepted.  Vocabulary (mapping, ansatz, optimiser ...) is resolved by
:mod:`qencode_nb.entry.vocabulary`, the one table of aliases.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from qencode_nb.verdict import procedure
from qencode_nb.entry import vocabulary
from qencode_nb.errors import EntryError

from qencode_nb.paths import PARAMS_DIR, ROOT  # noqa: F401  (re-used by callers)

SCHEMA_VERSION = "4.0.0"

# ---------------------------------------------------------------------------
# QEncode schema 4.0.0 structure, as the 40 v4.4 entries write it.
# A dict is a section (unknown keys refused); a tuple lists accepted types.
# Keys ending in "?" are optional.  ``ANY`` is free-form (adapt_metadata).
# ---------------------------------------------------------------------------
ANY = object()
NUM = (int, float)
OPT_NUM = (int, float, type(None))
OPT_STR = (str, type(None))

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
        "adapt_metadata": ANY,
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
        "vqe": {"best_energy_hartree": NUM, "optimal_params": (list,),
                "num_params": (int,), "nfev": (int,), "optimizer": (str,),
                "multistart_runs": (int,), "computed_utc": OPT_STR},
        "quality": {"gap_threshold": NUM, "trusted": (bool,), "abs_vqe_exact_gap": NUM,
                    "gap_reference": (str,), "beats_classical?": (bool, type(None)),
                    "beats_classical_definition?": OPT_STR, "flags": (list,),
                    "notes": ANY},
    },
    "provenance": {
        "entry_hash_sha256": (str,), "source_schema_version": (str,),
        "created_utc": (str,), "tool_versions": ANY,
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

# params/<name>.yaml structure (see params/README.md).
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


def _type_names(types) -> str:
    names = {int: "integer", float: "number", str: "string", bool: "boolean",
             list: "list", dict: "object", type(None): "null"}
    return " or ".join(dict.fromkeys(names.get(t, t.__name__) for t in types))


def validate(data, spec: dict, where: str = "") -> None:
    """Check ``data`` against a structure spec; raise :class:`EntryError` on the first fault."""
    if not isinstance(data, dict):
        raise EntryError(f"expected an object, got {type(data).__name__}", field=where or "<root>")
    keys = {k.rstrip("?"): k.endswith("?") for k in spec}
    unknown = sorted(set(data) - set(keys))
    if unknown:
        raise EntryError(f"unknown field {unknown[0]!r}; accepted fields here: "
                         + ", ".join(sorted(keys)), field=_join(where, unknown[0]))
    for key, optional in keys.items():
        rule = spec[key + "?" if optional else key]
        path = _join(where, key)
        if key not in data:
            if optional:
                continue
            raise EntryError("required field is missing", field=path)
        value = data[key]
        if rule is ANY:
            continue
        if isinstance(rule, dict):
            validate(value, rule, path)
            continue
        ok = isinstance(value, rule) and not (isinstance(value, bool) and bool not in rule)
        if not ok:
            raise EntryError(f"{value!r} has type {type(value).__name__}; accepted: "
                             f"{_type_names(rule)}", field=path)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


# ---------------------------------------------------------------------------
# QEncode's hash rule (public generator generate_entry_v4.py, stable_hash and
# _strip_volatile): SHA-256 of the canonical JSON (sorted keys, separators
# (",", ":"), ASCII) of the entry with these keys removed at every depth.
# ---------------------------------------------------------------------------
HASH_EXCLUDED_KEYS = frozenset({
    "created_utc", "entry_id", "entry_hash_sha256", "git_commit", "computed_utc",
    "certified_utc", "signature_b64", "signing_key_id",
})


def _strip_volatile(obj):
    if isinstance(obj, dict):
        return {k: _strip_volatile(v) for k, v in obj.items() if k not in HASH_EXCLUDED_KEYS}
    if isinstance(obj, list):
        return [_strip_volatile(v) for v in obj]
    return copy.deepcopy(obj)


def qencode_sha256(raw: dict) -> str:
    """Recompute an entry's ``provenance.entry_hash_sha256`` with QEncode's rule (hex str)."""
    canonical = json.dumps(_strip_volatile(raw), sort_keys=True, separators=(",", ":"),
                           ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


# ---------------------------------------------------------------------------
# The Entry model
# ---------------------------------------------------------------------------
@dataclass
class Entry:
    """One benchmark entry, normalised.  Energies in Ha, geometry in Angstrom.

    Procedure fields hold the declared value (canonical vocabulary).  A field
    the entry does not record holds the generator's default instead and is
    listed in ``undeclared`` as ``{field: {"used": value, "source": where
    the value came from}}`` (:data:`qencode_nb.verdict.procedure.GENERATOR_DEFAULTS`);
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
    early_stop: bool = True           # QEncode never records it (see procedure.py)

    @property
    def has_stored_hamiltonian(self) -> bool:
        return self.pauli_terms is not None

    @property
    def recorded_sha256(self) -> str:
        return self.sha256


def _from_qencode(raw: dict, path: Path) -> Entry:
    try:
        validate(raw, QENCODE_SPEC)
        if raw["schema_version"] != SCHEMA_VERSION:
            raise EntryError(f"{raw['schema_version']!r} is not accepted; accepted: "
                             f"{SCHEMA_VERSION!r} (QEncode schema 4.0.0)", field="schema_version")
        p, enc, res, rc = raw["problem"], raw["encoding"], raw["results"], raw["run_config"]
        tap = enc["tapering"]
        undeclared = {}

        def run_field(key: str, field: str):
            """run_config[key], or the generator default recorded as undeclared."""
            if key in rc:
                return rc[key]
            value, source = procedure.default(field)
            undeclared[field] = {"used": value,
                                 "source": f"run_config.{key} missing; {source}"}
            return value

        opt = vocabulary.optimizer(run_field("optimizer", "optimizer"), "run_config.optimizer")
        ansatz = vocabulary.ansatz(enc["ansatz_type"])
        reps = None
        if ansatz == "hea":
            if "ansatz_reps" in enc:
                reps = enc["ansatz_reps"]
            else:
                reps, source = procedure.default("reps")
                undeclared["reps"] = {"used": reps,
                                      "source": f"encoding.ansatz_reps missing; {source}"}
        adapt = None
        if ansatz == "adapt":
            meta = enc["adapt_metadata"] or {}
            adapt = {k: meta.get(k) for k in ("gradient_threshold", "max_operators",
                                              "selected_operator_indices",
                                              "n_operators_pool", "converged",
                                              "n_iterations")}
            for key in ("gradient_threshold", "max_operators"):
                if adapt[key] is None:
                    adapt[key], source = procedure.default(f"adapt.{key}")
                    undeclared[f"adapt.{key}"] = {
                        "used": adapt[key],
                        "source": f"encoding.adapt_metadata.{key} missing; {source}"}
            if opt.engine is None:
                _, source = procedure.default("adapt.engine")
                undeclared["adapt.engine"] = {
                    "used": None, "source": f"run_config.optimizer {rc.get('optimizer')!r} "
                                            f"names no engine; {source}"}
        if "multistart_requested" in rc:
            restarts = rc["multistart_requested"]
        elif "multistart" in rc and rc.get("early_stopped") is False:
            restarts = rc["multistart"]
            undeclared["restarts_requested"] = {
                "used": restarts, "source": "run_config.multistart_requested missing; "
                "run_config.multistart (restarts run, equal to those requested when the "
                "run did not stop early)"}
        else:
            restarts = run_field("multistart_requested", "restarts_requested")
        max_iterations = run_field("max_iterations", "max_iterations")
        seed = run_field("seed", "seed")
        backend = vocabulary.backend(run_field("backend_type", "backend"))
        _, source = procedure.default("early_stop")
        undeclared["early_stop"] = {"used": True, "source": source}
        if not raw["provenance"].get("hamiltonian_source"):
            value, source = procedure.default("hamiltonian_source")
            undeclared["hamiltonian_source"] = {
                "used": value, "source": f"provenance.hamiltonian_source missing; {source}"}
        ham = raw["artifacts"]["qubit_hamiltonian"]
        entry = Entry(
            source=path, kind="qencode-json", entry_id=raw["entry_id"],
            sha256=raw["provenance"]["entry_hash_sha256"], name=p["name"],
            geometry=p["geometry"], basis=p["basis"], charge=p["charge"], spin=p["spin"],
            active_space=(p["active_space"]["num_electrons"],
                          p["active_space"]["num_spatial_orbitals"]),
            orbital_optimization=vocabulary.orbitals(p["orbital_optimization"]),
            mapping=vocabulary.mapping(enc["mapping"]), ansatz=ansatz,
            reps=reps, optimizer=opt, max_iterations=max_iterations,
            restarts_requested=restarts, seed=seed, backend=backend,
            hamiltonian_source=raw["provenance"].get("hamiltonian_source"),
            tapering_sectors=list(tap["sectors"]), hf_tapered_state=list(tap["hf_tapered_state"]),
            tapered_num_qubits=tap["tapered_num_qubits"],
            bk_constant_correction_ha=tap["bk_constant_correction_ha"],
            published_energy=res["vqe"]["best_energy_hartree"],
            exact_ground_energy=res["reference"]["exact_qubit_ground_energy_hartree"],
            casci_energy=res["reference"]["casci_ground_energy_hartree"],
            hf_energy=res["reference"]["hf_energy_hartree"],
            published_error=res["quality"]["abs_vqe_exact_gap"],
            threshold=res["quality"]["gap_threshold"],
            published_certified=res["quality"]["trusted"],
            published_nfev=res["vqe"]["nfev"],
            published_restarts_run=res["vqe"]["multistart_runs"],
            published_early_stopped=rc.get("early_stopped"),
            num_params=res["vqe"]["num_params"],
            tool_versions=dict(raw["provenance"]["tool_versions"] or {}),
            adapt=adapt, pauli_terms=ham["pauli_terms"],
            optimal_params=res["vqe"]["optimal_params"], raw=raw, undeclared=undeclared,
        )
        from qencode_nb.problem.hamiltonian import validate_pauli_terms

        validate_pauli_terms(ham["pauli_terms"], ham["num_qubits"])
        if ham["num_pauli_terms"] != len(ham["pauli_terms"]):
            raise EntryError(f"{ham['num_pauli_terms']} but pauli_terms holds "
                             f"{len(ham['pauli_terms'])} terms",
                             field="artifacts.qubit_hamiltonian.num_pauli_terms")
        if ham["num_qubits"] != tap["tapered_num_qubits"]:
            raise EntryError(f"{ham['num_qubits']} but encoding.tapering.tapered_num_qubits "
                             f"is {tap['tapered_num_qubits']}",
                             field="artifacts.qubit_hamiltonian.num_qubits")
        return check_semantics(entry, _JSON_NAMES)
    except EntryError as err:
        raise err.with_path(path) from None


def _from_params(data: dict, path: Path) -> Entry:
    try:
        validate(data, PARAMS_SPEC)
        p, enc, run, pub = data["problem"], data["encoding"], data["run"], data["published"]
        asp = p["active_space"]
        if len(asp) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in asp):
            raise EntryError(f"{asp!r} is not accepted; accepted: [num_electrons, "
                             "num_spatial_orbitals], two integers", field="problem.active_space")
        ansatz = vocabulary.ansatz(enc["ansatz"], "encoding.ansatz")
        if ansatz == "hea" and "reps" not in enc:
            raise EntryError("required for ansatz hea", field="encoding.reps")
        if ansatz == "adapt" and "adapt" not in enc:
            raise EntryError("required for ansatz adapt", field="encoding.adapt")
        entry = Entry(
            source=path, kind="params-yaml", entry_id=data["qencode"]["entry_id"],
            sha256=data["qencode"]["sha256"], name=p["molecule"], geometry=p["geometry"],
            basis=p["basis"], charge=p["charge"], spin=p["spin"],
            active_space=(asp[0], asp[1]),
            orbital_optimization=vocabulary.orbitals(p["orbital_optimization"]),
            mapping=vocabulary.mapping(enc["mapping"]), ansatz=ansatz,
            reps=enc.get("reps") if ansatz == "hea" else None,
            optimizer=vocabulary.optimizer(run["optimizer"], "run.optimizer"),
            max_iterations=run["max_iterations"], restarts_requested=run["restarts"],
            seed=run["seed"], backend=vocabulary.backend(run["backend"], "run.backend"),
            hamiltonian_source=enc["hamiltonian_source"],
            tapering_sectors=list(enc["tapering_sectors"]),
            hf_tapered_state=list(enc["hf_tapered_state"]),
            tapered_num_qubits=enc["tapered_num_qubits"],
            bk_constant_correction_ha=enc["bk_constant_correction_ha"],
            published_energy=pub["energy_ha"], exact_ground_energy=pub["exact_ground_energy_ha"],
            casci_energy=pub["casci_energy_ha"], hf_energy=pub["hf_energy_ha"],
            published_error=pub["error_ha"], threshold=pub["threshold_ha"],
            published_certified=pub["certified"], published_nfev=pub["nfev"],
            published_restarts_run=pub["restarts_run"],
            published_early_stopped=pub["early_stopped"], num_params=pub["num_params"],
            tool_versions=dict(data.get("tool_versions") or {}),
            adapt=dict(enc["adapt"]) if ansatz == "adapt" else None,
            params_yaml=path,
            early_stop=run.get("early_stop", True),
            undeclared={} if "early_stop" in run else {
                "early_stop": {"used": True, "source": procedure.default("early_stop")[1]}},
        )
        return check_semantics(entry, _YAML_NAMES)
    except EntryError as err:
        raise err.with_path(path) from None


def _positive(value, field: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EntryError(f"{value!r} is not accepted; accepted: an integer >= 1", field=field)


def check_semantics(e: Entry, names: dict) -> Entry:
    """Value checks beyond types: budgets >= 1, a positive threshold, numeric
    parameters, a 0/1 HF state of the tapered size, sectors of +-1.

    ``names`` maps Entry attributes to the file's field names (for messages).

    Raises:
        EntryError: naming the field, the value and what is accepted.
    """
    _positive(e.max_iterations, names["max_iterations"])
    _positive(e.restarts_requested, names["restarts_requested"])
    _positive(e.tapered_num_qubits, names["tapered_num_qubits"])
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


_JSON_NAMES = {"max_iterations": "run_config.max_iterations",
               "restarts_requested": "run_config.multistart_requested",
               "tapered_num_qubits": "encoding.tapering.tapered_num_qubits",
               "reps": "encoding.ansatz_reps", "threshold": "results.quality.gap_threshold",
               "hf_tapered_state": "encoding.tapering.hf_tapered_state",
               "tapering_sectors": "encoding.tapering.sectors"}
_YAML_NAMES = {"max_iterations": "run.max_iterations", "restarts_requested": "run.restarts",
               "tapered_num_qubits": "encoding.tapered_num_qubits", "reps": "encoding.reps",
               "threshold": "published.threshold_ha",
               "hf_tapered_state": "encoding.hf_tapered_state",
               "tapering_sectors": "encoding.tapering_sectors"}


def read_qencode_json(path) -> Entry:
    """Load a QEncode schema 4.0.0 JSON entry.

    Raises:
        EntryError: unreadable or truncated JSON, or a structure/vocabulary
            fault (the message names the file and the field).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EntryError(f"cannot read: {exc.strerror}", path=path) from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EntryError(f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                         "accepted: a complete QEncode schema 4.0.0 JSON object",
                         path=path) from None
    return _from_qencode(raw, path)


def read_params_yaml(path) -> Entry:
    """Load one of our ``params/<name>.yaml`` entries.

    Raises:
        EntryError: unreadable YAML or a structure/vocabulary fault.
    """
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EntryError(f"cannot read: {exc.strerror}", path=path) from None
    except yaml.YAMLError as exc:
        raise EntryError(f"not valid YAML: {exc}", path=path) from None
    return _from_params(data, path)


def bundled_names() -> list[str]:
    """Short names of the entries bundled in ``params/``."""
    return sorted(p.stem for p in PARAMS_DIR.glob("*.yaml"))


def find_in_db(entry_id: str, db) -> Path:
    """The JSON file of ``entry_id`` in folder ``db`` (``<entry_id>.json``).

    Raises:
        EntryError: ``db`` is not a folder, or holds no file for that id.
    """
    db = Path(db)
    if not db.is_dir():
        raise EntryError(f"db {str(db)!r} is not a folder of QEncode JSON files", field="db")
    path = db / f"{entry_id}.json"
    if not path.is_file():
        raise EntryError(f"no file {path.name} in {db}", field="qencode.entry_id")
    return path


# Facts a params/ entry states that must agree with its QEncode JSON.
_CROSS_CHECK = ("entry_id", "sha256", "geometry", "basis", "charge", "spin", "active_space",
                "orbital_optimization", "mapping", "ansatz", "reps", "optimizer",
                "max_iterations", "restarts_requested", "seed", "backend",
                "hamiltonian_source", "tapering_sectors", "hf_tapered_state",
                "tapered_num_qubits", "bk_constant_correction_ha", "published_energy",
                "exact_ground_energy", "casci_energy", "hf_energy", "published_error",
                "threshold", "published_certified", "published_nfev",
                "published_restarts_run", "published_early_stopped", "num_params",
                "tool_versions")


def _looks_like_json(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(64).lstrip().startswith(b"{")


def load(entry, db=None) -> Entry:
    """Load an entry by short name (``params/<name>.yaml``) or by path.

    Args:
        entry: a bundled name such as ``"lih"``, or a path to a ``.yaml`` or a
            QEncode ``.json`` file.
        db: optional folder of QEncode JSON files.  A ``params/`` entry is
            then completed from the JSON file of its ``qencode.entry_id``
            (stored Hamiltonian and optimal parameters), after checking that
            every fact the YAML states agrees with it.

    Raises:
        EntryError: unknown name (lists the bundled names), malformed file,
            or a YAML fact that disagrees with its JSON.
    """
    if not isinstance(entry, (str, Path)):
        raise EntryError(f"{entry!r} is not accepted; accepted: a bundled name or a path",
                         field="entry")
    if db is not None and not isinstance(db, (str, Path)):
        raise EntryError(f"{db!r} is not accepted; accepted: a folder path", field="db")
    text = str(entry)
    path = Path(text)
    if path.is_dir():
        raise EntryError(f"{text!r} is a folder; accepted: one entry file or a bundled name "
                         "(audit a folder with `qencode-nb sweep`)", field="entry")
    if path.suffix.lower() in (".json", ".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise EntryError(f"no such file {text!r}", field="entry")
    else:
        path = PARAMS_DIR / f"{text}.yaml"
        if not path.is_file():
            raise EntryError(f"{text!r} is neither a file nor a bundled entry; bundled: "
                             + ", ".join(bundled_names()), field="entry")
    if path.suffix.lower() == ".json" or _looks_like_json(path):
        return read_qencode_json(path)
    short = read_params_yaml(path)
    if db is None:
        return short
    full = read_qencode_json(find_in_db(short.entry_id, db))
    for name in _CROSS_CHECK:
        mine, theirs = getattr(short, name), getattr(full, name)
        if mine != theirs:
            raise EntryError(f"states {mine!r} but {full.source.name} has {theirs!r}",
                             field=name, path=path)
    full.params_yaml = path
    return full
