"""QEncode schema 3.0.0 JSON -> :class:`~qencode_nb.entry.model.Entry` (the reader
registered for ``"3.0.0"`` in :data:`qencode_nb.entry.readers.READERS`).

Schema 3.0.0 is what ``scripts/generate_entry_v3.py`` (QEncode repository, commit
a46b4ec) wrote for releases/v3/db (36 entries, STO-3G) and releases/v3.1/db (42
entries, 6-31G).  It records 87 of the 100 fields of schema 4.0.0; the v4 fields it
lacks are filled as the v3 generator ran (:data:`V3_PROCEDURE`) and, where the filled
value is a procedure field of tier 1, listed in ``Entry.undeclared`` with the reason:

- ``problem.orbital_optimization``: ``hf`` (``run_pyscf_suite``: CASCI on RHF orbitals);
- ``provenance.hamiltonian_source``: not recorded (PennyLane's ``molecular_hamiltonian``
  for JW/BK unless ``--use-of-bridge``, OpenFermion's bridge for parity): the
  Hamiltonian check finds the path the stored terms equal, as for a v4 entry without it;
- ``run_config.multistart_requested``: ``run_config.multistart`` (``run_vqe`` runs every
  restart: there is no early stop in v3, so requested = run);
- early stop: off (``run_vqe`` has none), recorded undeclared;
- ``results.reference.exact_qubit_ground_energy_hartree``: v3 records ``None`` in
  ``exact_qubit_ground_energy_hartree_like``; its gap (``abs_vqe_exact_gap``) is measured
  against CASCI (``casci_ground_energy_hartree``, "THIS is the VQE reference energy"),
  which is the reference energy read here (Ha);
- ``encoding.tapering.bk_constant_correction_ha``: absent when no correction was applied
  (``apply_tapering`` returns None below 0.1 Ha);
- ``encoding.tapering.bk_imaginary_stripped`` / ``bk_max_imaginary_abs_ha``: v3 strips
  every imaginary part, on every mapping, when it serialises the tapered Hamiltonian
  (``serialize_hamiltonian``: ``float(np.real(coeff))`` per term, no threshold, no check):
  read as False / None, and ``Entry.tapering_rule`` is ``"v3"`` (also for its sector
  search: every sector scanned for the lowest ground energy, ``_find_optimal_sector``);
- ``encoding.adapt_metadata``: None (v3 has no ADAPT);
- ``results.quality.gap_reference``: "casci"; ``results.reference.casscf_energy_hartree``:
  None.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.entry.legacy_schema import V3_SPEC
from qencode_nb.entry.model import JSON_NAMES
from qencode_nb.entry.schema import validate
from qencode_nb.entry.v4 import from_v4
from qencode_nb.errors import EntryError

#: How generate_entry_v3.py ran what schema 3.0.0 does not record: ``{tier-1 field:
#: (value, source)}``.
V3_PROCEDURE = {
    "orbital_optimization": ("hf", "QEncode schema 3.0.0 records no "
                             "problem.orbital_optimization; generate_entry_v3.py "
                             "(a46b4ec) run_pyscf_suite runs CASCI on RHF orbitals"),
    "early_stop": (False, "QEncode schema 3.0.0 records no early stop; "
                          "generate_entry_v3.py (a46b4ec) run_vqe runs every restart "
                          "(run_config.multistart), it has no early stop"),
    "restarts_requested": (None, "run_config.multistart_requested missing (schema "
                                 "3.0.0); run_config.multistart: generate_entry_v3.py "
                                 "(a46b4ec) run_vqe runs every restart requested"),
}


#: The fields the value checks name in a 3.0.0 file (where they differ from 4.0.0's).
V3_NAMES = dict(JSON_NAMES, restarts_requested="run_config.multistart")


def _pick(obj: dict, *keys, default=None):
    return {k: obj.get(k, default) for k in keys}


def to_v4_shape(raw: dict) -> dict:
    """The schema 3.0.0 object in schema 4.0.0's shape (a new dict; ``raw`` is not
    changed), each missing v4 field filled as the v3 generator ran (module docstring).

    Raises:
        EntryError: a member the reader reads is missing or of another type
            (:data:`~qencode_nb.entry.legacy_schema.V3_SPEC`; names its full path, the
            value and what is accepted).
    """
    validate(raw, V3_SPEC)
    p, enc, art, res, prov, rc = (raw[k] for k in ("problem", "encoding", "artifacts",
                                                   "results", "provenance", "run_config"))
    tap = dict(enc.get("tapering") or {})
    tap.setdefault("bk_constant_correction_ha", None)
    tap["bk_imaginary_stripped"] = False
    tap["bk_max_imaginary_abs_ha"] = None
    ref = res.get("reference") or {}
    quality = dict(res.get("quality") or {})
    quality.setdefault("gap_reference", "casci")
    v4 = {
        "schema_version": "4.0.0",
        "entry_id": raw.get("entry_id"),
        "created_utc": raw.get("created_utc"),
        "problem": dict(p, orbital_optimization=V3_PROCEDURE["orbital_optimization"][0]),
        "encoding": {"mapping": enc.get("mapping"), "ansatz_type": enc.get("ansatz_type"),
                     **({"ansatz_reps": enc["ansatz_reps"]} if "ansatz_reps" in enc else {}),
                     "adapt_metadata": None, "tapering": tap},
        "artifacts": {"qubit_hamiltonian": art.get("qubit_hamiltonian"),
                      "circuits": art.get("circuits")},
        "results": {
            "reference": {"hf_energy_hartree": ref.get("hf_energy_hartree"),
                          "casci_ground_energy_hartree": ref.get("casci_ground_energy_hartree"),
                          "exact_qubit_ground_energy_hartree":
                              ref.get("casci_ground_energy_hartree"),
                          "casci_first_excited_hartree": ref.get("casci_first_excited_hartree"),
                          "casscf_energy_hartree": None},
            "vqe": res.get("vqe"),
            "quality": quality,
        },
        "provenance": _pick(prov, "entry_hash_sha256", "source_schema_version",
                            "created_utc", "tool_versions"),
        "trust": raw.get("trust") or {"level": "unknown", "certified_utc": None,
                                      "signature_b64": None, "signing_key_id": None},
        "run_config": dict(rc, multistart_requested=rc.get("multistart")),
    }
    v4["provenance"]["source_schema_version"] = prov.get("source_schema_version") or "3.0.0"
    return v4



def from_v3(raw: dict, path: Path):
    """QEncode schema 3.0.0 (``generate_entry_v3.py``) -> Entry; energies in Ha.

    The entry is read through :func:`qencode_nb.entry.v4.from_v4` on
    :func:`to_v4_shape`; ``Entry.raw`` is the file's own object (its hash rule,
    :data:`qencode_nb.entry.hashing.HASH_RULES` ``"3.0.0"``, is computed on it), and
    ``Entry.undeclared`` lists orbital optimisation, early stop, the restarts requested
    and the Hamiltonian source (:data:`V3_PROCEDURE`).

    Raises:
        EntryError: a structure, vocabulary or value fault (names the file and field).
    """
    try:
        shaped = to_v4_shape(raw)
    except EntryError as err:
        raise err.with_path(path) from None
    entry = from_v4(shaped, path, V3_NAMES)
    entry.raw = raw
    entry.schema_version = "3.0.0"
    entry.tapering_rule = "v3"
    entry.field_paths = {"exact_ground_energy": "results.reference.casci_ground_energy_hartree "
                                                "(schema 3.0.0's gap reference)"}
    entry.early_stop = V3_PROCEDURE["early_stop"][0]
    undeclared = {"orbital_optimization": {"used": "hf",
                                           "source": V3_PROCEDURE["orbital_optimization"][1]},
                  "early_stop": {"used": False, "source": V3_PROCEDURE["early_stop"][1]},
                  "restarts_requested": {"used": entry.restarts_requested,
                                         "source": V3_PROCEDURE["restarts_requested"][1]}}
    if "hamiltonian_source" in entry.undeclared:
        entry.undeclared["hamiltonian_source"]["source"] = (
            "QEncode schema 3.0.0 records no provenance.hamiltonian_source; "
            "generate_entry_v3.py (a46b4ec) builds jordan_wigner / bravyi_kitaev with "
            "PennyLane's molecular_hamiltonian unless --use-of-bridge, parity with "
            "of_bridge: the Hamiltonian check finds the path the stored terms equal")
    entry.undeclared.update(undeclared)
    return entry
