"""QEncode schema 4.0.0 JSON -> :class:`~qencode_nb.entry.model.Entry` (the reader
registered for ``"4.0.0"`` in :data:`qencode_nb.entry.readers.READERS`)."""

from __future__ import annotations

from pathlib import Path

from qencode_nb.entry import vocabulary
from qencode_nb.entry.fieldpath import shown
from qencode_nb.entry.fields import default
from qencode_nb.entry.model import JSON_NAMES, Entry, check_semantics
from qencode_nb.entry.schema import QENCODE_SPEC, validate
from qencode_nb.errors import EntryError


def from_v4(raw: dict, path: Path, names: dict = JSON_NAMES) -> Entry:
    """QEncode schema 4.0.0 (``scripts/generate_entry_v4.py``) -> Entry.

    ``raw`` is the parsed JSON object (its ``schema_version`` already checked by
    :func:`qencode_nb.entry.readers.from_qencode`); energies are read in Ha.  A
    ``run_config`` field the entry leaves out is run at the generator's default and
    listed in ``Entry.undeclared``; so are early stop (never recorded) and a missing
    ``provenance.hamiltonian_source``.  ``names`` are the fields the value checks
    name (:func:`qencode_nb.entry.model.check_semantics`; schema 3.0.0 has its own).

    Raises:
        EntryError: a structure, vocabulary or value fault (names the file and field).
    """
    try:
        validate(raw, QENCODE_SPEC)
        p, enc, res, rc = raw["problem"], raw["encoding"], raw["results"], raw["run_config"]
        tap = enc["tapering"]
        undeclared = {}

        def run_field(key: str, field: str):
            """run_config[key], or the generator default recorded as undeclared."""
            if key in rc:
                return rc[key]
            value, source = default(field)
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
                reps, source = default("reps")
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
                    adapt[key], source = default(f"adapt.{key}")
                    undeclared[f"adapt.{key}"] = {
                        "used": adapt[key],
                        "source": f"encoding.adapt_metadata.{key} missing; {source}"}
            if opt.engine is None:
                _, source = default("adapt.engine")
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
        _, source = default("early_stop")
        undeclared["early_stop"] = {"used": True, "source": source}
        if not raw["provenance"].get("hamiltonian_source"):
            value, source = default("hamiltonian_source")
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
        from qencode_nb.entry.pauli_strings import validate_pauli_terms

        validate_pauli_terms(ham["pauli_terms"], ham["num_qubits"])
        if ham["num_pauli_terms"] != len(ham["pauli_terms"]):
            raise EntryError(f"{shown(ham['num_pauli_terms'])} is not accepted; accepted: "
                             f"{len(ham['pauli_terms'])}, the number of terms "
                             "artifacts.qubit_hamiltonian.pauli_terms holds",
                             field="artifacts.qubit_hamiltonian.num_pauli_terms")
        if ham["num_qubits"] != tap["tapered_num_qubits"]:
            raise EntryError(f"{shown(ham['num_qubits'])} is not accepted; accepted: "
                             f"{shown(tap['tapered_num_qubits'])}, "
                             "encoding.tapering.tapered_num_qubits",
                             field="artifacts.qubit_hamiltonian.num_qubits")
        return check_semantics(entry, names)
    except EntryError as err:
        raise err.with_path(path) from None
