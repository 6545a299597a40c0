"""The structure of QEncode schemas 1.0.0, 2.0.0 and 3.0.0 as their readers read them
(:mod:`qencode_nb.entry.v1v2`, :mod:`qencode_nb.entry.v3`), in the spec language of
:mod:`qencode_nb.entry.schema`.

Each spec names every member its reader reads, with its type, so that the reader is
never handed a member of another type or none at all: a fault is refused by its full
path before the reader runs.  The sections are open (:data:`~qencode_nb.entry.schema.OPEN`):
the Qiskit-era files carry many members the readers do not read, and no two of the
history's files carry the same ones (``../shared/qencode-history``, a46b4ec).  Schema
3.0.0 is then shaped as 4.0.0 and checked by :data:`~qencode_nb.entry.schema.QENCODE_SPEC`,
whose paths are the same for every member the 3.0.0 spec leaves to it.
"""

from __future__ import annotations

from qencode_nb.entry.schema import (
    ANY, NUM, OPEN, OPT_NUM, OPT_STR, TOOL_VERSIONS, ListOf, OneOf, OrNull,
)

#: The units the Qiskit-era files state for the energies the readers read (measured on
#: every v1 file: ``hartree`` and ``hartree_like``, electronic energies in Ha).
ENERGY_UNITS = OneOf(("hartree", "hartree_like"))

#: The recorded VQE run (1.0.0 ``validation.legacy.vqe_run``, 2.0.0
#: ``results.experimental.legacy_validation.vqe_run``).
VQE_RUN = {"seed?": OrNull((int,)), "maxiter?": OrNull((int,)), "nfev?": OrNull((int,)),
           "n_params?": OrNull((int,)), "best_parameters?": OrNull(ListOf(NUM)), OPEN: ANY}

#: The stored Hamiltonian of 1.0.0 and 2.0.0: Qiskit Pauli labels and coefficients (Ha).
QISKIT_HAMILTONIAN = {"num_qubits": (int,),
                      "pauli_terms": ListOf({"pauli": (str,), "coeff": NUM, OPEN: ANY}),
                      "energy_offset?": OPT_NUM, OPEN: ANY}

#: ``artifacts`` of 1.0.0 and 2.0.0.
QISKIT_ARTIFACTS = {"qubit_hamiltonian": QISKIT_HAMILTONIAN, "circuits?": OrNull({OPEN: ANY}),
                    OPEN: ANY}

#: An active space of 1.0.0 (``settings.reduction.active_space``) or 2.0.0
#: (``problem.active_space``); when ``enabled`` both counts are required
#: (:func:`qencode_nb.entry.v1v2.active_space`).
ACTIVE_SPACE = OrNull({"enabled?": OrNull((bool,)), "num_electrons?": OrNull((int,)),
                       "num_spatial_orbitals?": OrNull((int,)), OPEN: ANY})

V1_SPEC = {
    "schema_version": (str,), "entry_id": (str,),
    "problem": {
        "name": (str,), "charge": (int,), "multiplicity": (int,),
        "geometry": {"units?": (str,),
                     "atoms": ListOf({"element": (str,), "xyz": ListOf(NUM, 3), OPEN: ANY}),
                     OPEN: ANY},
        OPEN: ANY},
    "settings": {
        "ansatz": {"type": (str,), "reps?": (int,), OPEN: ANY},
        "chemistry": {"basis": (str,), OPEN: ANY},
        "mapping": {"type": (str,), OPEN: ANY},
        "reduction?": OrNull({"active_space?": ACTIVE_SPACE, OPEN: ANY}),
        OPEN: ANY},
    "validation?": OrNull({
        "vqe?": OrNull({"best_energy?": OPT_NUM, "units?": ENERGY_UNITS, OPEN: ANY}),
        "exact_qubit_ground_energy?": OrNull({"energy?": OPT_NUM, "units?": ENERGY_UNITS,
                                              OPEN: ANY}),
        "classical_reference?": OrNull({"hf_energy_hartree?": OPT_NUM,
                                        "hf_energy_units?": ENERGY_UNITS, OPEN: ANY}),
        "legacy?": OrNull({"vqe_run?": OrNull(VQE_RUN), OPEN: ANY}),
        OPEN: ANY}),
    "provenance": {"input_fingerprint": {"sha256": (str,), OPEN: ANY}, OPEN: ANY},
    "artifacts": QISKIT_ARTIFACTS,
    OPEN: ANY,
}

V2_SPEC = {
    "schema_version": (str,), "entry_id": (str,),
    "problem": {"name": (str,), "basis": (str,), "active_space?": ACTIVE_SPACE, OPEN: ANY},
    "encoding": {"mapping": (str,), OPEN: ANY},
    "results": {
        "reference?": OrNull({"exact_qubit_ground_energy_hartree_like?": OPT_NUM,
                              "hf_energy_hartree_like?": OPT_NUM, OPEN: ANY}),
        "vqe?": OrNull({"best_energy_hartree_like?": OPT_NUM, OPEN: ANY}),
        "quality?": OrNull({"abs_vqe_exact_gap?": OPT_NUM, "gap_threshold?": OPT_NUM,
                            "trusted?": OrNull((bool,)), OPEN: ANY}),
        "experimental?": OrNull({"legacy_validation?": OrNull({"vqe_run?": OrNull(VQE_RUN),
                                                               OPEN: ANY}), OPEN: ANY}),
        OPEN: ANY},
    "provenance": {"entry_hash_sha256": (str,), OPEN: ANY},
    "artifacts": QISKIT_ARTIFACTS,
    OPEN: ANY,
}

#: What :func:`qencode_nb.entry.v3.to_v4_shape` reads or fills itself; the members it
#: copies as they are (``problem``, ``encoding.tapering``, ``artifacts.*``,
#: ``results.vqe``, ``results.quality``, ``trust``, ``run_config``) are checked by
#: :data:`~qencode_nb.entry.schema.QENCODE_SPEC` at the same paths.
V3_SPEC = {
    "schema_version": (str,), "entry_id": (str,), "created_utc": (str,),
    "problem": {OPEN: ANY},
    "encoding": {"mapping": (str,), "ansatz_type": (str,), "ansatz_reps?": (int,),
                 "tapering": {OPEN: ANY}, OPEN: ANY},
    "artifacts": {"qubit_hamiltonian": {OPEN: ANY}, "circuits": {OPEN: ANY}, OPEN: ANY},
    "results": {
        "reference": {"hf_energy_hartree": NUM, "casci_ground_energy_hartree": NUM,
                      "casci_first_excited_hartree?": OPT_NUM, OPEN: ANY},
        "vqe": {OPEN: ANY}, "quality": {OPEN: ANY}, OPEN: ANY},
    "provenance": {"entry_hash_sha256": (str,), "source_schema_version?": OPT_STR,
                   "created_utc": (str,), "tool_versions": OrNull(TOOL_VERSIONS), OPEN: ANY},
    "trust?": OrNull({OPEN: ANY}),
    "run_config": {"multistart": (int,), OPEN: ANY},
    OPEN: ANY,
}
