"""Reading entry files into :class:`~qencode_nb.entry.model.Entry`.

A QEncode JSON file is read by the reader of its ``schema_version`` (:data:`READERS`:
1.0.0 and 2.0.0 in :mod:`~qencode_nb.entry.v1v2`, 3.0.0 in :mod:`~qencode_nb.entry.v3`,
4.0.0 in :mod:`~qencode_nb.entry.v4`).  A 4.0.0 file carries everything (stored Hamiltonian, optimal
parameters, published results); a ``params/<name>.yaml`` entry records the
published facts of one QEncode entry and is completed from its JSON by
:func:`qencode_nb.entry.lookup.load`.  A field the file leaves out is run at
the generator's default (:data:`qencode_nb.rules.GENERATOR_DEFAULTS`) and listed
in ``Entry.undeclared``, never silently defaulted.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from qencode_nb.entry import jsontext, vocabulary
from qencode_nb.entry.fieldpath import join_field, shown
from qencode_nb.entry.fields import default
from qencode_nb.entry.model import YAML_NAMES, Entry, check_semantics
from qencode_nb.entry.schema import OWN_PARAMS_SPEC, PARAMS_SPEC, SCHEMA_VERSION, validate
from qencode_nb.entry.v1v2 import from_v1, from_v2
from qencode_nb.entry.v3 import from_v3
from qencode_nb.entry.v4 import from_v4
from qencode_nb.errors import EntryError


#: The reader of each QEncode ``schema_version`` (a registry, not an if-chain): the
#: raw JSON object and its path -> :class:`~qencode_nb.entry.model.Entry`.  Each maps
#: what its schema records onto the Entry and lists what it cannot record in
#: ``Entry.undeclared``; the hash rule of each is :data:`qencode_nb.entry.hashing.HASH_RULES`.
READERS = {
    "1.0.0": from_v1,       # Qiskit-era batch_generate.py (releases/v1/db)
    "2.0.0": from_v2,       # migrate_v1_to_v2.py (releases/v2/db, v2/trusted)
    "3.0.0": from_v3,       # generate_entry_v3.py (releases/v3/db, v3.1/db)
    SCHEMA_VERSION: from_v4,  # generate_entry_v4.py
}


def accepted_versions() -> str:
    """The accepted ``schema_version`` values, as the refusal lists them."""
    return ", ".join(repr(v) for v in READERS)


def check_schema_version(raw) -> None:
    """The schema version, checked before anything else of the structure: a file of
    a schema no reader knows is refused by its version, not by the first field it lacks.

    Raises:
        EntryError: not a JSON object, ``schema_version`` missing or not a key of
            :data:`READERS` (names field, value and every accepted one).
    """
    accepted = f"{accepted_versions()} (QEncode schemas 1.0.0 to 4.0.0)"
    if not isinstance(raw, dict):
        raise EntryError(f"a QEncode entry is a JSON object, got {type(raw).__name__}; "
                         f"accepted: an object with schema_version {accepted}")
    if "schema_version" not in raw:
        raise EntryError(f"required field is missing; accepted: {accepted}",
                         field="schema_version")
    version = raw["schema_version"]
    if not isinstance(version, str) or version not in READERS:
        raise EntryError(f"{shown(version)} is not accepted; accepted: {accepted}",
                         field="schema_version")


def from_qencode(raw: dict, path: Path) -> Entry:
    """A QEncode JSON object -> Entry, by the reader registered for its
    ``schema_version`` (:data:`READERS`).

    Each reader checks the structure it reads (:mod:`qencode_nb.entry.schema`,
    :mod:`qencode_nb.entry.legacy_schema`) before it reads it, so that a member of the
    wrong type or missing is refused by its full path, never met as a crash.

    Raises:
        EntryError: a version no reader knows (names it and every accepted one), or
            the reader's structure, vocabulary or value fault (names the file and field).
    """
    try:
        check_schema_version(raw)
        check_sections(raw)
    except EntryError as err:
        raise err.with_path(path) from None
    return READERS[raw["schema_version"]](raw, path)


#: Top-level members of a QEncode entry that are strings (schemas 1.0.0 to 4.0.0, every
#: entry of ../shared/qencode-history and ../shared/qencode-v4 at a46b4ec); every other
#: top-level member is a section (a JSON object).
STRING_MEMBERS = ("schema_version", "entry_id", "created_utc")


def check_sections(raw: dict) -> None:
    """Refuse a top-level member of the wrong type before a reader reads it: the
    :data:`STRING_MEMBERS` are strings, every other member a JSON object.

    Raises:
        EntryError: names the member, its value and what is accepted.
    """
    for key, value in raw.items():
        want, ok = (("a string", isinstance(value, str)) if key in STRING_MEMBERS
                    else ("a JSON object (a section)", isinstance(value, dict)))
        if not ok:
            raise EntryError(f"{shown(value, 40)} ({type(value).__name__}) is not accepted; "
                             f"accepted: {want}", field=join_field("", key))


def from_params(data: dict, path: Path) -> Entry:
    """A ``params/*.yaml`` entry: the published facts of one QEncode entry (a
    ``qencode`` section: :data:`~qencode_nb.entry.schema.PARAMS_SPEC`, every fact
    stated), or a YAML entry of one's own (no ``qencode`` section:
    :func:`from_own_params`)."""
    if isinstance(data, dict) and "qencode" not in data:
        return from_own_params(data, path)
    try:
        validate(data, PARAMS_SPEC)
        p, enc, run, pub = data["problem"], data["encoding"], data["run"], data["published"]
        asp = _active_space(p["active_space"])
        ansatz = _ansatz_of(enc)
        entry = Entry(
            source=path, kind="params-yaml", entry_id=data["qencode"]["entry_id"],
            sha256=data["qencode"]["sha256"], name=p["molecule"], geometry=p["geometry"],
            basis=p["basis"], charge=p["charge"], spin=p["spin"],
            active_space=asp,
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
            params_yaml=path, threshold_source="published.threshold_ha",
            early_stop=run.get("early_stop", True),
            undeclared={} if "early_stop" in run else {
                "early_stop": {"used": True, "source": default("early_stop")[1]}},
        )
        return check_semantics(entry, YAML_NAMES)
    except EntryError as err:
        raise err.with_path(path) from None


def _active_space(asp) -> tuple[int, int]:
    if len(asp) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in asp):
        raise EntryError(f"{shown(asp)} is not accepted; accepted: [num_electrons, "
                         "num_spatial_orbitals], two integers", field="problem.active_space")
    return asp[0], asp[1]


def _ansatz_of(enc: dict) -> str:
    ansatz = vocabulary.ansatz(enc["ansatz"], "encoding.ansatz")
    if ansatz == "hea" and "reps" not in enc:
        raise EntryError("required field is missing for ansatz hea; accepted: an integer "
                         ">= 0 (layers)", field="encoding.reps")
    if ansatz == "adapt" and "adapt" not in enc:
        raise EntryError("required field is missing for ansatz adapt; accepted: an object "
                         "(gradient_threshold, max_operators)", field="encoding.adapt")
    return ansatz


#: What the rebuild derives for a YAML of one's own that does not state it.
REBUILD_DERIVES = {
    "tapered_num_qubits": "the rebuilt problem's tapered qubit count",
    "hf_tapered_state": "the rebuilt tapering's HF state (qchem.taper_hf)",
    "bk_constant_correction_ha": "the rebuilt tapering's constant correction",
}


def from_own_params(data: dict, path: Path) -> Entry:
    """A YAML entry of one's own (:data:`~qencode_nb.entry.schema.OWN_PARAMS_SPEC`):
    the procedure, optionally a published result.

    Its id is ``name`` (else the file's stem); it records no SHA-256 (integrity reads
    n/a).  The tapered qubit count, tapered HF state and tapering constant it does not
    state come from the rebuild (``Entry.from_rebuild``); the Hamiltonian source and the
    backend it does not state are the generator's defaults, listed in
    ``Entry.undeclared``; the certification threshold it does not state
    (``threshold_ha`` or ``published.threshold_ha``) is
    :data:`qencode_nb.rules.CERTIFICATION_THRESHOLD_HA`.  Without a published energy
    tier 2 measures the re-run against the rebuilt Hamiltonian's exact ground energy.

    Raises:
        EntryError: a structure, vocabulary or value fault (naming the field).
    """
    from qencode_nb.rules import CERTIFICATION_THRESHOLD_HA

    try:
        validate(data, OWN_PARAMS_SPEC)
        p, enc, run = data["problem"], data["encoding"], data["run"]
        pub = data.get("published") or {}
        ansatz = _ansatz_of(enc)
        undeclared = {}
        if "early_stop" not in run:
            undeclared["early_stop"] = {"used": True, "source": default("early_stop")[1]}
        for key, field in (("backend", "backend"),):
            if key not in run:
                value, source = default(field)
                undeclared[field] = {"used": value, "source": f"run.{key} missing; {source}"}
        if "hamiltonian_source" not in enc:
            value, source = default("hamiltonian_source")
            undeclared["hamiltonian_source"] = {
                "used": value, "source": f"encoding.hamiltonian_source missing; {source}"}
        thresholds = {f: v for f, v in (("threshold_ha", data.get("threshold_ha")),
                                        ("published.threshold_ha", pub.get("threshold_ha")))
                      if v is not None}
        if len(set(thresholds.values())) > 1:
            raise EntryError(f"{thresholds['threshold_ha']!r} but published.threshold_ha is "
                             f"{thresholds['published.threshold_ha']!r}; accepted: one "
                             "threshold (state it once)", field="threshold_ha")
        threshold_field = next(iter(thresholds), None)
        threshold = thresholds.get(threshold_field, CERTIFICATION_THRESHOLD_HA)
        threshold_source = threshold_field or (
            "threshold_ha missing; QEncode v4's certification threshold "
            "(rules.CERTIFICATION_THRESHOLD_HA)")
        backend = run.get("backend", default("backend")[0])
        entry = Entry(
            source=path, kind="params-yaml", entry_id=data.get("name") or path.stem,
            sha256=None, name=p["molecule"], geometry=p["geometry"], basis=p["basis"],
            charge=p["charge"], spin=p["spin"], active_space=_active_space(p["active_space"]),
            orbital_optimization=vocabulary.orbitals(p["orbital_optimization"]),
            mapping=vocabulary.mapping(enc["mapping"]), ansatz=ansatz,
            reps=enc.get("reps") if ansatz == "hea" else None,
            optimizer=vocabulary.optimizer(run["optimizer"], "run.optimizer"),
            max_iterations=run["max_iterations"], restarts_requested=run["restarts"],
            seed=run["seed"], backend=vocabulary.backend(backend, "run.backend"),
            hamiltonian_source=enc.get("hamiltonian_source"),
            tapering_sectors=list(enc["tapering_sectors"]),
            hf_tapered_state=(list(enc["hf_tapered_state"]) if "hf_tapered_state" in enc
                              else None),
            tapered_num_qubits=enc.get("tapered_num_qubits"),
            bk_constant_correction_ha=enc.get("bk_constant_correction_ha"),
            published_energy=pub.get("energy_ha"),
            exact_ground_energy=pub.get("exact_ground_energy_ha"),
            casci_energy=pub.get("casci_energy_ha"), hf_energy=pub.get("hf_energy_ha"),
            published_error=pub.get("error_ha"), threshold=threshold,
            published_certified=pub.get("certified"), published_nfev=pub.get("nfev"),
            published_restarts_run=pub.get("restarts_run"),
            published_early_stopped=pub.get("early_stopped"),
            num_params=pub.get("num_params"),
            tool_versions=dict(data.get("tool_versions") or {}),
            adapt=dict(enc["adapt"]) if ansatz == "adapt" else None,
            params_yaml=path, early_stop=run.get("early_stop", True), undeclared=undeclared,
            threshold_source=threshold_source,
            from_rebuild={k: why for k, why in REBUILD_DERIVES.items() if k not in enc},
        )
        names = dict(YAML_NAMES, threshold=threshold_field or "threshold_ha")
        return check_semantics(entry, names)
    except EntryError as err:
        raise err.with_path(path) from None


def read_qencode_json(path) -> Entry:
    """Load a QEncode JSON entry of any schema :data:`READERS` knows (1.0.0 to 4.0.0).

    Raises:
        EntryError: unreadable or truncated JSON, a key written twice, nesting too deep
            (:mod:`qencode_nb.entry.jsontext`), or a structure/vocabulary fault (the
            message names the file and the field).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EntryError(f"cannot read: {exc.strerror}", path=path) from None
    try:
        raw = jsontext.parse(data, "a QEncode JSON object (schema " + accepted_versions()
                             + ")")
    except EntryError as err:
        raise err.with_path(path) from None
    entry = from_qencode(raw, path)
    entry.file_sha256 = hashlib.sha256(data).hexdigest()
    return entry


def read_params_yaml(path) -> Entry:
    """Load one of our ``params/<name>.yaml`` entries.

    Raises:
        EntryError: unreadable YAML or a structure/vocabulary fault.
    """
    import yaml

    path = Path(path)
    try:
        raw = path.read_bytes()
        data = yaml.safe_load(raw.decode("utf-8"))
    except OSError as exc:
        raise EntryError(f"cannot read: {exc.strerror}", path=path) from None
    except UnicodeDecodeError as exc:
        raise EntryError(f"not UTF-8 text ({exc.reason} at byte {exc.start}); accepted: "
                         "a YAML entry file", path=path) from None
    except yaml.YAMLError as exc:
        raise EntryError(f"not valid YAML: {exc}", path=path) from None
    entry = from_params(data, path)
    entry.file_sha256 = hashlib.sha256(raw).hexdigest()
    return entry
