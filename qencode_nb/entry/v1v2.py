"""The Qiskit-era QEncode schemas 1.0.0 and 2.0.0 -> :class:`~qencode_nb.entry.model.Entry`
(the readers registered for ``"1.0.0"`` and ``"2.0.0"`` in
:data:`qencode_nb.entry.readers.READERS`).

Schema 1.0.0 is what ``scripts/batch_generate.py`` (QEncode repository, commit a46b4ec)
wrote with Qiskit Nature 0.7 (releases/v1/db, 9 entries, STO-3G, Jordan-Wigner, no
tapering), later completed by ``validate_and_update_entry.py`` and
``migrate_v1_clean_validation.py`` (``validation.*``).  Schema 2.0.0 is its migration by
``scripts/migrate_v1_to_v2.py`` (releases/v2/db and v2/trusted, 12 entries); it keeps
no geometry, charge or spin.

What the audit can and cannot check (``Entry.not_checkable``):

- the stored qubit Hamiltonian (Qiskit little-endian strings, ``"IIIZ"`` = Z on qubit 0,
  converted to QEncode's ``"Z0"`` form) and its exact ground energy against the recorded
  one (``exact_qubit_ground_energy``, "hartree_like": the electronic energy of the
  stored operator, no nuclear repulsion, any particle number);
- integrity by the schema's hash rule (:data:`qencode_nb.entry.hashing.HASH_RULES`);
- no rebuild (1.0.0's Qiskit Nature PySCFDriver procedure is not this toolkit's; 2.0.0
  records no geometry), no replay and no re-run: the ansatz is a Qiskit circuit stored
  as QPY (``artifacts.circuits.ansatz_template_qpy_b64``) and qiskit is not a dependency.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.entry import vocabulary
from qencode_nb.entry.fieldpath import shown
from qencode_nb.entry.fields import default
from qencode_nb.entry.legacy_schema import V1_SPEC, V2_SPEC
from qencode_nb.entry.model import JSON_NAMES, Entry, check_semantics
from qencode_nb.entry.schema import validate
from qencode_nb.errors import EntryError

#: Nuclear charges of the elements in the v1 / v2 molecules (H2, LiH, BeH2) and the
#: other first-row ones, for the electron count of an entry without an active space.
ATOMIC_NUMBER = {"H": 1, "He": 2, "Li": 3, "Be": 4, "B": 5, "C": 6, "N": 7, "O": 8,
                 "F": 9, "Ne": 10}

QPY_WHY = ("ansatz stored as Qiskit QPY (artifacts.circuits.ansatz_template_qpy_b64, "
           "QEncode schema {v}); qiskit is not a dependency of qencode-nb, so the ansatz "
           "cannot be rebuilt")
REBUILD_WHY = {
    "1.0.0": ("QEncode schema 1.0.0 built its Hamiltonian with Qiskit Nature's "
              "PySCFDriver (batch_generate.py); its procedure (driver, ordering, "
              "two-qubit reduction) is not one this toolkit rebuilds: the stored terms' "
              "exact ground energy is checked against the recorded one instead"),
    "2.0.0": ("QEncode schema 2.0.0 records no geometry, charge or spin "
              "(migrate_v1_to_v2.py): nothing to rebuild from; the stored terms' exact "
              "ground energy is checked against the recorded one instead"),
}


TERMS_FIELD = "artifacts.qubit_hamiltonian.pauli_terms"


def qiskit_to_qencode(label: str, num_qubits: int | None = None,
                      field: str = f"{TERMS_FIELD}[].pauli") -> str:
    """A Qiskit Pauli label (little-endian: the last character is qubit 0, ``"IIZX"`` =
    X0 Z1) as QEncode's string (``"X0Z1"``; the identity ``"I"``).

    Raises:
        EntryError: a character other than I/X/Y/Z, or (``num_qubits`` given) a label of
            another length (names ``field``, the value and what is accepted).
    """
    want = ("a Qiskit Pauli label of I/X/Y/Z" if num_qubits is None else
            f"a Qiskit Pauli label of {shown(num_qubits)} letters (num_qubits), each I/X/Y/Z")
    if (not isinstance(label, str) or not label or set(label) - set("IXYZ")
            or (num_qubits is not None and len(label) != num_qubits)):
        raise EntryError(f"{shown(label)} is not accepted; accepted: {want}", field=field)
    word = "".join(f"{c}{q}" for q, c in enumerate(reversed(label)) if c != "I")
    return word or "I"


def _terms(ham: dict) -> list:
    """The stored ``[{"pauli", "coeff"}]`` as QEncode terms (Ha); the recorded
    ``energy_offset`` is added to the identity term (a new one if there is none).

    Raises:
        EntryError: a label that is not I/X/Y/Z of ``num_qubits`` letters, or a label
            written twice (names the term's field).
    """
    terms, seen = [], {}
    for i, t in enumerate(ham["pauli_terms"]):
        at = f"{TERMS_FIELD}[{i}].pauli"
        word = qiskit_to_qencode(t["pauli"], ham["num_qubits"], at)
        if word in seen:
            raise EntryError(f"{shown(t['pauli'])} repeats the label of term {seen[word]}; "
                             "accepted: each Pauli label once", field=at)
        seen[word] = i
        terms.append({"pauli_string": word, "coefficient": float(t["coeff"])})
    offset = float(ham.get("energy_offset") or 0.0)
    if offset and "I" in seen:
        terms[seen["I"]]["coefficient"] += offset
    elif offset:
        terms.append({"pauli_string": "I", "coefficient": offset})
    return terms


def _undeclared(version: str, fields) -> dict:
    """``{field: {"used", "source"}}`` for tier-1 fields the schema does not record."""
    out = {}
    for name in fields:
        if name == "orbital_optimization":
            value, source = "hf", ("batch_generate.py's Qiskit Nature PySCFDriver: RHF "
                                   "orbitals (settings.chemistry.reference_method 'hf')")
        elif name in ("geometry", "charge", "spin"):
            value, source = None, "nothing to rebuild from (the rebuild reads n/a)"
        else:
            value, source = default(name)
        out[name] = {"used": value,
                     "source": f"QEncode schema {version} records no {name}; {source}"}
    return out


def _legacy_run(raw: dict, version: str) -> dict:
    """The recorded VQE run (``validation.legacy.vqe_run``; 2.0.0:
    ``results.experimental.legacy_validation.vqe_run``), or {}."""
    if version == "1.0.0":
        return ((raw.get("validation") or {}).get("legacy") or {}).get("vqe_run") or {}
    exp = (raw.get("results") or {}).get("experimental") or {}
    return ((exp.get("legacy_validation") or {}).get("vqe_run")) or {}


def active_space(active: dict | None, field: str, electrons, n_qubits: int) -> tuple:
    """``(electrons, spatial orbitals)``: the enabled active space's counts, else the
    molecule's electrons (None where unknown) and half the stored qubits.

    Raises:
        EntryError: an enabled active space without both counts (names the field).
    """
    if not (active and active.get("enabled")):
        return electrons, n_qubits // 2
    for key in ("num_electrons", "num_spatial_orbitals"):
        if not isinstance(active.get(key), int):
            raise EntryError(f"{shown(active.get(key))} is not accepted with "
                             f"{field}.enabled true; accepted: an integer",
                             field=f"{field}.{key}")
    return active["num_electrons"], active["num_spatial_orbitals"]


def _common(raw: dict, path: Path, version: str, *, sha256: str, name: str, geometry: str,
            basis: str, charge: int, spin: int, active: dict, mapping: str, ansatz: str,
            reps, published: dict, undeclared: dict) -> Entry:
    ham = raw["artifacts"]["qubit_hamiltonian"]
    n_qubits = ham["num_qubits"]
    active_field = ("settings.reduction.active_space" if version == "1.0.0"
                    else "problem.active_space")
    asp = active_space(active, active_field, published.get("electrons"), n_qubits)
    run = _legacy_run(raw, version)
    seed = run.get("seed")
    if seed is None:
        seed = default("seed")[0]
        undeclared.setdefault("seed", {"used": seed, "source": f"QEncode schema {version} "
                                       "records no seed of the published run"})
    max_iter = run.get("maxiter") or default("max_iterations")[0]
    threshold = published.get("threshold")
    from qencode_nb.rules import CERTIFICATION_THRESHOLD_HA

    entry = Entry(
        source=path, kind="qencode-json", entry_id=raw["entry_id"], sha256=sha256,
        name=name, geometry=geometry, basis=basis, charge=charge, spin=spin,
        active_space=asp, orbital_optimization="hf",
        mapping=vocabulary.mapping(mapping, "settings.mapping.type" if version == "1.0.0"
                                   else "encoding.mapping"),
        ansatz=ansatz, reps=reps, optimizer=vocabulary.optimizer("COBYLA"),
        max_iterations=max_iter, restarts_requested=1, seed=seed,
        backend=default("backend")[0], hamiltonian_source=None, tapering_sectors=[],
        hf_tapered_state=None, tapered_num_qubits=n_qubits, bk_constant_correction_ha=None,
        published_energy=published.get("energy"), exact_ground_energy=published.get("exact"),
        casci_energy=None, hf_energy=published.get("hf"), published_error=published.get("gap"),
        threshold=CERTIFICATION_THRESHOLD_HA if threshold is None else threshold,
        threshold_source=(published.get("threshold_field") or
                          f"QEncode schema {version} records no threshold; QEncode v4's "
                          "certification threshold (rules.CERTIFICATION_THRESHOLD_HA)"),
        published_certified=published.get("certified"), published_nfev=run.get("nfev"),
        published_restarts_run=None, published_early_stopped=None,
        num_params=run.get("n_params"), tool_versions={}, pauli_terms=_terms(ham),
        optimal_params=run.get("best_parameters"), raw=raw, undeclared=undeclared,
        schema_version=version, early_stop=False)
    entry.field_paths = dict(published.get("paths") or {})
    circuits = raw["artifacts"].get("circuits") or {}
    why = (QPY_WHY.format(v=version) if circuits.get("ansatz_template_qpy_b64") else
           f"ansatz not stored (artifacts.circuits.ansatz_template_qpy_b64 is empty, QEncode "
           f"schema {version}; batch_generate.py could not serialise it as QPY): nothing "
           "to rebuild it from")
    entry.not_checkable = {"rebuild": REBUILD_WHY[version], "replay": why, "rerun": why}
    if entry.published_energy is None:
        entry.not_checkable["published"] = (f"{path.name} (QEncode schema {version}) "
                                            "publishes no VQE energy")
    from qencode_nb.entry.pauli_strings import validate_pauli_terms

    validate_pauli_terms(entry.pauli_terms, n_qubits)
    return check_semantics(entry, dict(JSON_NAMES, threshold="results.quality.gap_threshold"))


def _electrons(atoms: list, charge: int) -> int:
    """The molecule's electron count (nuclear charges less ``charge``).

    Raises:
        EntryError: an element outside :data:`ATOMIC_NUMBER` (names the atom's field).
    """
    for i, atom in enumerate(atoms):
        if atom["element"] not in ATOMIC_NUMBER:
            raise EntryError(f"{shown(atom['element'])} is not accepted; accepted: "
                             + ", ".join(ATOMIC_NUMBER),
                             field=f"problem.geometry.atoms[{i}].element")
    return sum(ATOMIC_NUMBER[a["element"]] for a in atoms) - charge


def from_v1(raw: dict, path: Path) -> Entry:
    """QEncode schema 1.0.0 (``batch_generate.py``) -> Entry; energies in Ha
    ("hartree_like": electronic, no nuclear repulsion).

    Published facts: ``validation.vqe.best_energy`` (None when the entry has no
    ``validation.vqe``), ``validation.exact_qubit_ground_energy.energy``,
    ``validation.classical_reference.hf_energy_hartree``; the gap is
    ``|published - exact|`` (1.0.0 records no gap, threshold or certification).  The
    procedure's run fields come from ``validation.legacy.vqe_run`` (seed, maxiter) and
    are listed undeclared with what schema 1.0.0 cannot record
    (:data:`qencode_nb.entry.fields.CANNOT_RECORD`).

    Raises:
        EntryError: a field the reader needs is missing or malformed
            (:data:`~qencode_nb.entry.legacy_schema.V1_SPEC`; names its full path).
    """
    try:
        validate(raw, V1_SPEC)
        p, s = raw["problem"], raw["settings"]
        val = raw.get("validation") or {}
        vqe, exact = val.get("vqe") or {}, val.get("exact_qubit_ground_energy") or {}
        energy, e_exact = vqe.get("best_energy"), exact.get("energy")
        geom = p["geometry"]
        if geom.get("units", "angstrom").lower() not in ("angstrom", "ang"):
            raise EntryError(f"{shown(geom.get('units'))} is not accepted; accepted: "
                             "'angstrom'", field="problem.geometry.units")
        text = "; ".join(f"{a['element']} " + " ".join(repr(float(x)) for x in a["xyz"])
                         for a in geom["atoms"])
        ansatz = vocabulary.ansatz(s["ansatz"]["type"], "settings.ansatz.type")
        published = {
            "energy": energy, "exact": e_exact,
            "hf": (val.get("classical_reference") or {}).get("hf_energy_hartree"),
            "gap": None if energy is None or e_exact is None else abs(energy - e_exact),
            "electrons": _electrons(geom["atoms"], p["charge"]),
            "paths": {"published_energy": "validation.vqe.best_energy",
                      "exact_ground_energy": "validation.exact_qubit_ground_energy.energy",
                      "hf_energy": "validation.classical_reference.hf_energy_hartree",
                      "published_error": "|validation.vqe.best_energy - validation."
                                         "exact_qubit_ground_energy.energy| (schema 1.0.0 "
                                         "records no gap)"},
        }
        undeclared = _undeclared("1.0.0", ("orbital_optimization", "hamiltonian_source",
                                           "restarts_requested", "optimizer", "backend"))
        undeclared["early_stop"] = {"used": False, "source": "QEncode schema 1.0.0 "
                                    "records no early stop (one COBYLA run)"}
        fp = raw["provenance"]["input_fingerprint"]["sha256"]
        return _common(raw, path, "1.0.0", sha256=fp, name=p["name"], geometry=text,
                       basis=s["chemistry"]["basis"], charge=p["charge"],
                       spin=p["multiplicity"] - 1,
                       active=(s.get("reduction") or {}).get("active_space"),
                       mapping=s["mapping"]["type"], ansatz=ansatz,
                       reps=s["ansatz"].get("reps") if ansatz == "hea" else None,
                       published=published, undeclared=undeclared)
    except EntryError as err:
        raise err.with_path(path) from None


def from_v2(raw: dict, path: Path) -> Entry:
    """QEncode schema 2.0.0 (``migrate_v1_to_v2.py``) -> Entry; energies in Ha
    ("hartree_like": electronic, no nuclear repulsion).

    Published facts: ``results.vqe.best_energy_hartree_like``,
    ``results.reference.exact_qubit_ground_energy_hartree_like`` and
    ``hf_energy_hartree_like``, ``results.quality`` (``gap_threshold``, ``trusted``,
    ``abs_vqe_exact_gap``).  2.0.0 records no geometry, charge, spin or ansatz type:
    the ansatz is read from the ``entry_id`` (``_uccsd_`` / ``_hardware_efficient_``;
    a ``_geom_`` id names none: uccsd, listed undeclared), the rest listed undeclared.

    Raises:
        EntryError: a field the reader needs is missing or malformed
            (:data:`~qencode_nb.entry.legacy_schema.V2_SPEC`; names its full path).
    """
    try:
        validate(raw, V2_SPEC)
        p, res = raw["problem"], raw["results"]
        ref, vqe, q = (res.get(k) or {} for k in ("reference", "vqe", "quality"))
        ansatz = "hea" if "_hardware_efficient_" in raw["entry_id"] else "uccsd"
        published = {
            "energy": vqe.get("best_energy_hartree_like"),
            "exact": ref.get("exact_qubit_ground_energy_hartree_like"),
            "hf": ref.get("hf_energy_hartree_like"), "gap": q.get("abs_vqe_exact_gap"),
            "threshold": q.get("gap_threshold"), "certified": q.get("trusted"),
            "threshold_field": "results.quality.gap_threshold", "electrons": None,
            "paths": {"published_energy": "results.vqe.best_energy_hartree_like",
                      "exact_ground_energy":
                          "results.reference.exact_qubit_ground_energy_hartree_like",
                      "hf_energy": "results.reference.hf_energy_hartree_like"},
        }
        undeclared = _undeclared("2.0.0", ("geometry", "charge", "spin",
                                           "orbital_optimization", "hamiltonian_source",
                                           "restarts_requested", "optimizer", "backend"))
        undeclared["early_stop"] = {"used": False, "source": "QEncode schema 2.0.0 "
                                    "records no early stop (one COBYLA run)"}
        named = any(f"_{a}_" in raw["entry_id"] for a in ("uccsd", "hardware_efficient"))
        undeclared["ansatz"] = {"used": ansatz, "source": "QEncode schema 2.0.0 records no "
                                "ansatz type; " + ("read from the entry_id (its v1 name)"
                                                   if named else "the entry_id names none "
                                                   "(_geom_): uccsd assumed, unchecked "
                                                   "(replay and re-run are n/a)")}
        reps = None
        if ansatz == "hea":
            reps = 2
            undeclared["reps"] = {"used": 2, "source": "QEncode schema 2.0.0 records no "
                                  "reps; batch_generate.py's hardware_efficient variant "
                                  "(molecules_v1.json: reps 2)"}
        active = p.get("active_space") or {}
        entry = _common(raw, path, "2.0.0", sha256=raw["provenance"]["entry_hash_sha256"],
                        name=p["name"], geometry="", basis=p["basis"], charge=0, spin=0,
                        active=active, mapping=raw["encoding"]["mapping"], ansatz=ansatz,
                        reps=reps, published=published, undeclared=undeclared)
        if entry.active_space[0] is None:
            entry.undeclared["active_space"] = {
                "used": None, "source": "QEncode schema 2.0.0 records no active space "
                "(active_space.enabled false) and no geometry to count electrons from"}
        return entry
    except EntryError as err:
        raise err.with_path(path) from None
