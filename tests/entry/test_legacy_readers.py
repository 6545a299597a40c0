"""The readers of the older QEncode schemas (1.0.0, 2.0.0, 3.0.0) and their hash rules,
on the real files of the QEncode history (``../shared/qencode-history``, commit a46b4ec,
its NOTICE.md).  Reference values are the files' own recorded numbers."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest

from conftest import SHARED_HISTORY
from qencode_nb.entry import load
from qencode_nb.entry.hashing import HASH_RULES, v2_content_sha256
from qencode_nb.entry.readers import READERS, from_qencode
from qencode_nb.errors import EntryError

RELEASES = SHARED_HISTORY / "releases"
V1_H2_UCCSD = RELEASES / "v1" / "db" / "H2_sto3g_JW_uccsd_v1__sha256_35b2b9a55f67ff1e.json"
V2_BEH2 = RELEASES / "v2" / "trusted" / "BeH2_sto3g_JW_uccsd_v1__sha256_587c317d327d8cd8.json"
V3_LIH_PAR_HEA = (RELEASES / "v3" / "db"
                  / "LiH_sto3g_PAR_HEA_v3_tapered__sha256_7fc4047434d49c40.json")

#: The release folders and how many entry files each holds (NOTICE.md; v1 lists 9 files).
FOLDERS = {"v1/db": 9, "v2/db": 9, "v2/trusted": 3, "v3/db": 36, "v3.1/db": 42}


def entry_files(folder: str) -> list[Path]:
    """The entry files of one release folder (``*__sha256_*.json``; the indexes,
    manifests and hash lists are not entries)."""
    return sorted(p for p in (RELEASES / folder).glob("*.json") if "__sha256_" in p.name)


@pytest.fixture(scope="module", autouse=True)
def _history():
    if not RELEASES.is_dir():
        pytest.fail(f"the QEncode history is missing: {SHARED_HISTORY}")


def test_one_reader_and_one_hash_rule_per_schema_version():
    assert list(READERS) == ["1.0.0", "2.0.0", "3.0.0", "4.0.0"]
    assert sorted(HASH_RULES) == sorted(READERS)


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_entry_of_every_release_is_read(folder):
    files = entry_files(folder)
    assert len(files) == FOLDERS[folder]
    for path in files:
        e = load(path)
        assert e.schema_version == json.loads(path.read_text())["schema_version"]
        assert e.undeclared, path.name          # every older schema leaves fields out


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_recorded_hash_recomputes(folder):
    """Each file's recorded hash (v1: provenance.input_fingerprint.sha256; v2, v3:
    provenance.entry_hash_sha256) recomputes by its schema's rule, all of them; the
    entry_id suffix is that hash in v1 only (v2 keeps the v1 id, v3 was rehashed
    without renaming: rehash_entries_v3.py)."""
    suffix_matches = 0
    for path in entry_files(folder):
        raw = json.loads(path.read_text())
        rule = HASH_RULES[raw["schema_version"]]
        recorded = rule.recorded(raw)
        assert recorded and rule.compute(raw) == recorded, path.name
        suffix_matches += raw["entry_id"].endswith("__sha256_" + recorded[:16])
        source = (raw.get("source") or {}).get("input_fingerprint")
        if source:                               # v1's second copy of the fingerprint
            assert source["sha256"] == recorded
    expected = FOLDERS[folder] if folder == "v1/db" else 0
    assert suffix_matches == expected


def test_v2_content_hash_list_and_manifest_recompute():
    """releases/v2/db/entry_content_hashes.json (entry_content_hashes_v2.py: canonical
    JSON of the whole file): 9 of 9; manifest.json (build_manifest.py: the file's bytes):
    10 of 10 files."""
    db = RELEASES / "v2" / "db"
    hashes = json.loads((db / "entry_content_hashes.json").read_text())["hashes"]
    assert len(hashes) == 9
    for name, digest in hashes.items():
        assert v2_content_sha256(json.loads((db / name).read_text())) == digest, name
    files = json.loads((db / "manifest.json").read_text())["files"]
    assert len(files) == 10
    for row in files:
        assert hashlib.sha256((db / row["path"]).read_bytes()).hexdigest() == row["sha256"]


def test_v1_migration_hashes_recompute_where_the_file_was_not_edited_after():
    """provenance.migrations[0].after_sha256 (migrate_v1_clean_validation.py:
    canonical JSON, ensure_ascii False, of the entry before the migrations list was
    appended) recomputes for 6 of the 9 v1 files.  The other 3 were changed after the
    migration (2026-01-15T08:22:25Z): H2 UCCSD's validation.vqe was promoted at
    10:22:03Z (its note says so); the two H2 _geom_ files carry no later timestamp, the
    changed field is not known.  before_sha256 hashes a state no file keeps."""
    def canonical(obj):
        text = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    stale = []
    for path in entry_files("v1/db"):
        raw = json.loads(path.read_text())
        after = raw["provenance"]["migrations"][0]["after_sha256"]
        bare = copy.deepcopy(raw)
        del bare["provenance"]["migrations"]
        if canonical(bare) != after:
            stale.append(path.name.split("__")[0] + "__" + path.name.split("__")[1][7:15])
    assert stale == ["H2_sto3g_JW_geom_v1__ab4e1569", "H2_sto3g_JW_geom_v1__e2167895",
                     "H2_sto3g_JW_uccsd_v1__35b2b9a5"]


def test_an_unknown_schema_version_is_refused_by_name():
    raw = json.loads(V3_LIH_PAR_HEA.read_text())
    raw["schema_version"] = "5.0.0"
    with pytest.raises(EntryError) as info:
        from_qencode(raw, V3_LIH_PAR_HEA)
    assert ("field schema_version: '5.0.0' is not accepted; accepted: '1.0.0', '2.0.0', "
            "'3.0.0', '4.0.0'") in str(info.value)


def test_v3_reader_maps_the_recorded_fields():
    raw = json.loads(V3_LIH_PAR_HEA.read_text())
    e = load(V3_LIH_PAR_HEA)
    assert (e.schema_version, e.mapping, e.ansatz, e.reps) == ("3.0.0", "parity", "hea", 2)
    assert e.active_space == (4, 4) and e.basis == "sto-3g"
    assert e.tapering_sectors == [1, 1, 1] and e.tapered_num_qubits == 5
    assert e.published_energy == raw["results"]["vqe"]["best_energy_hartree"]
    # schema 3.0.0 measures its gap against CASCI: that is the reference energy
    assert e.exact_ground_energy == raw["results"]["reference"]["casci_ground_energy_hartree"]
    assert e.published_error == raw["results"]["quality"]["abs_vqe_exact_gap"]
    assert (e.max_iterations, e.restarts_requested, e.seed) == (500, 3, 42)
    assert e.early_stop is False and e.tapering_rule == "v3"
    assert sorted(e.undeclared) == ["early_stop", "hamiltonian_source",
                                    "orbital_optimization", "restarts_requested"]
    assert e.sha256 == raw["provenance"]["entry_hash_sha256"] and e.raw == raw


def test_v1_reader_maps_the_recorded_fields():
    raw = json.loads(V1_H2_UCCSD.read_text())
    e = load(V1_H2_UCCSD)
    val = raw["validation"]
    assert (e.schema_version, e.name, e.mapping, e.ansatz) == ("1.0.0", "H2", "jordan_wigner",
                                                              "uccsd")
    assert e.geometry == "H 0.0 0.0 0.0; H 0.0 0.0 0.735" and e.spin == 0
    assert e.active_space == (2, 2) and e.tapering_sectors == []
    assert e.published_energy == val["vqe"]["best_energy"]
    assert e.exact_ground_energy == val["exact_qubit_ground_energy"]["energy"]
    assert e.seed == 123 and e.max_iterations == 400       # validation.legacy.vqe_run
    assert e.sha256 == raw["provenance"]["input_fingerprint"]["sha256"]
    # Qiskit little-endian "IIIZ" is Z on qubit 0
    first = raw["artifacts"]["qubit_hamiltonian"]["pauli_terms"][1]
    assert first["pauli"] == "IIIZ" and e.pauli_terms[1]["pauli_string"] == "Z0"
    assert sorted(e.undeclared) == ["backend", "early_stop", "hamiltonian_source",
                                    "optimizer", "orbital_optimization",
                                    "restarts_requested"]
    assert sorted(e.not_checkable) == ["rebuild", "replay", "rerun"]


def test_v2_reader_maps_the_recorded_fields():
    raw = json.loads(V2_BEH2.read_text())
    e = load(V2_BEH2)
    q = raw["results"]["quality"]
    assert e.schema_version == "2.0.0" and e.geometry == ""
    assert e.active_space == (4, 4) and e.ansatz == "uccsd"
    assert e.published_energy == raw["results"]["vqe"]["best_energy_hartree_like"]
    assert (e.threshold, e.published_certified, e.published_error) == (
        q["gap_threshold"], q["trusted"], q["abs_vqe_exact_gap"])
    assert e.sha256 == raw["provenance"]["entry_hash_sha256"]
    assert {"geometry", "charge", "spin", "ansatz"} <= set(e.undeclared)


def _stages(path, engine="fast"):
    """The audit's stages in process, as notebooks/audit.ipynb runs them in replay mode."""
    from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild
    from qencode_nb.rerun.problem import build_problem
    from qencode_nb.rerun.replay import replay
    from qencode_nb.trust.integrity import integrity

    e = load(path)
    rebuilt = rebuild(e)
    ham = hamiltonian_check(e, rebuilt)
    problem = build_problem(e, rebuilt, engine, ham, rerun=False)
    return e, integrity(e), ham, replay(e, problem)


def test_a_v3_entry_replays_its_published_energy():
    """v3 LiH/STO-3G parity HEA: the stored parameters on the stored terms give the
    published energy within 1e-12 Ha (the replay's own tolerance is
    rules.REPLAY_TOL_HA, 1e-9 Ha); integrity passes by the v3 rule, the id suffix
    not checked; the stored terms equal a generator path."""
    e, integ, ham, rep = _stages(V3_LIH_PAR_HEA)
    published = json.loads(V3_LIH_PAR_HEA.read_text())["results"]["vqe"]["best_energy_hartree"]
    assert rep.status == "pass" and abs(rep.energy - published) <= 1e-12
    assert integ.status == "pass" and integ.id_matches_hash is None
    assert ham.status == "pass"


@pytest.mark.parametrize("path", [V1_H2_UCCSD, V2_BEH2], ids=["v1", "v2"])
def test_a_qiskit_era_replay_reads_na_with_its_reason(path):
    """No rebuild, no replay (Qiskit QPY ansatz), but the stored terms' exact ground
    energy equals the recorded one within rules.REFERENCE_MATCH_HA (1e-6 Ha)."""
    e, integ, ham, rep = _stages(path)
    assert rep.status == "n/a" and rep.reason.startswith("ansatz stored as Qiskit QPY")
    assert integ.status == "pass"
    assert ham.status == "pass" and abs(ham.ground_energy_diff) <= 1e-6
    assert "no rebuild" in ham.reason


def test_a_v3_bk_hamiltonian_is_the_v3_generators_tapering():
    """v3 H2/STO-3G Bravyi-Kitaev HEA: the stored terms equal the rebuild only with the
    v3 tapering rule (every sector scanned, real parts kept: Entry.tapering_rule "v3");
    the stored parameters replay the published energy within 1e-12 Ha."""
    path = next((RELEASES / "v3" / "db").glob("H2_sto3g_BK_HEA_v3_tapered__*.json"))
    e, integ, ham, rep = _stages(path)
    assert e.tapering_rule == "v3"
    assert ham.status == "pass", ham.reason
    published = json.loads(path.read_text())["results"]["vqe"]["best_energy_hartree"]
    assert rep.status == "pass" and abs(rep.energy - published) <= 1e-12


def test_the_v4_rebuild_cache_keys_do_not_change():
    """The tapering rule enters a rebuild's key only when it is not "v4"."""
    from qencode_nb.hamiltonian.cache_key import key_material

    args = ("H 0 0 0; H 0 0 0.74", "sto-3g", 0, 0, 2, 2, "hf", "jordan_wigner")
    v4 = key_material(*args, environment={})
    assert "tapering_rule" not in v4["problem"]
    assert key_material(*args, environment={}, tapering_rule="v4") == v4
    assert key_material(*args, environment={}, tapering_rule="v3")["problem"][
        "tapering_rule"] == "v3"


def test_the_audit_command_replays_a_v3_entry_and_a_v1_entry(tmp_path):
    """`qencode-nb audit FILE --mode replay --engine fast --json` (papermill, the audit
    notebook) on a v3 entry: replay within 1e-12 Ha of the published energy, integrity
    pass, tier 1 incomplete (fields schema 3.0.0 cannot record); on a v1 entry: replay,
    certification and bit-identity n/a with the QPY reason, never a crash."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    def audit(path, name):
        out = subprocess.run([sys.executable, "-m", "qencode_nb.cli", "audit", str(path),
                              "--mode", "replay", "--engine", "fast", "--json",
                              "--out", str(tmp_path / f"{name}.ipynb")], cwd=ROOT,
                             capture_output=True, text=True, timeout=600,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout)

    v3 = audit(V3_LIH_PAR_HEA, "v3")
    published = json.loads(V3_LIH_PAR_HEA.read_text())["results"]["vqe"]["best_energy_hartree"]
    assert v3["replay"]["status"] == "pass"
    assert abs(v3["replay"]["energy"] - published) <= 1e-12
    assert v3["integrity"]["status"] == "pass" and "3.0.0" in v3["integrity"]["hash_rule"]
    assert v3["tiers"]["procedure"]["status"] == "incomplete"
    # its recorded environment: QEncode's v3 stack and the v3 release's AVX2 triple
    env = v3["recorded_environment"]
    assert env["release"] == "v3" and env["requirements_file"] == "requirements-v3.txt"
    assert env["kernels"] == {"numpy": "Haswell", "scipy": "Haswell", "pyscf": "Haswell"}
    assert "numpy==1.26.4" in env["requirements"] and env["unknown"] == []
    v1 = audit(V1_H2_UCCSD, "v1")
    assert v1["recorded_environment"]["release"] is None
    assert "records no package versions" in v1["recorded_environment"]["unknown"][0]
    assert v1["replay"]["status"] == "n/a" and "Qiskit QPY" in v1["replay"]["reason"]
    assert v1["tiers"]["certification"]["status"] == "n/a"
    assert "Qiskit QPY" in v1["tiers"]["certification"]["reasons"][0]
    assert v1["hamiltonian"]["status"] == "pass"


@pytest.mark.parametrize("path,member,value,said", [
    (V1_H2_UCCSD, "problem", "x", "field problem: 'x' (str) is not accepted; accepted: a "
     "JSON object (a section)"),
    (V2_BEH2, "results", [], "field results: [] (list) is not accepted; accepted: a JSON "
     "object (a section)"),
    (V2_BEH2, "entry_id", None, "field entry_id: None (NoneType) is not accepted; accepted: "
     "a string"),
])
def test_a_section_of_the_wrong_type_is_refused_by_name(path, member, value, said):
    """Every schema's top-level members are strings (schema_version, entry_id,
    created_utc) or sections: a wrong type is refused naming it, never a crash."""
    raw = json.loads(path.read_text())
    raw[member] = value
    with pytest.raises(EntryError) as err:
        from_qencode(raw, path)
    assert said in str(err.value)


def _set(*keys_value):
    """An edit setting ``raw[k1][k2]... = value``."""
    *keys, value = keys_value

    def edit(raw):
        node = raw
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value
    return edit


def _drop(*keys):
    """An edit deleting ``raw[k1][k2]...``."""
    def edit(raw):
        node = raw
        for key in keys[:-1]:
            node = node[key]
        del node[keys[-1]]
    return edit


HAM = ("artifacts", "qubit_hamiltonian")


@pytest.mark.parametrize("path,edit,said", [
    (V1_H2_UCCSD, _drop(*HAM),
     "field artifacts.qubit_hamiltonian: required field is missing; accepted: an object"),
    (V1_H2_UCCSD, _set("problem", "geometry", "atoms", 1, "xyz", [0.0, 0.0]),
     "field problem.geometry.atoms[1].xyz: [0.0, 0.0] has 2 items; accepted: a list "
     "(3 items: number)"),
    (V1_H2_UCCSD, _set("validation", "vqe", "units", "eV"),
     "field validation.vqe.units: 'eV' is not accepted; accepted: 'hartree', 'hartree_like'"),
    (V1_H2_UCCSD, _set(*HAM, "pauli_terms", 4, "pauli", "IIZ"),
     "field artifacts.qubit_hamiltonian.pauli_terms[4].pauli: 'IIZ' is not accepted; "
     "accepted: a Qiskit Pauli label of 4 letters (num_qubits), each I/X/Y/Z"),
    (V2_BEH2, _drop("provenance", "entry_hash_sha256"),
     "field provenance.entry_hash_sha256: required field is missing; accepted: string"),
    (V2_BEH2, _set(*HAM, "pauli_terms", 2, "coeff", "0.5"),
     "field artifacts.qubit_hamiltonian.pauli_terms[2].coeff: '0.5' has type str; "
     "accepted: number"),
    (V2_BEH2, _set("problem", "active_space", {"enabled": True, "num_electrons": None,
                                               "num_spatial_orbitals": 7}),
     "field problem.active_space.num_electrons: None is not accepted with "
     "problem.active_space.enabled true; accepted: an integer"),
    (V3_LIH_PAR_HEA, _set("encoding", "tapering", "x"),
     "field encoding.tapering: 'x' has type str; accepted: an object"),
    (V3_LIH_PAR_HEA, _drop("run_config", "multistart"),
     "field run_config.multistart: required field is missing; accepted: integer"),
    (V3_LIH_PAR_HEA, _set("run_config", "multistart", 0),
     "field run_config.multistart: 0 is not accepted; accepted: an integer >= 1"),
    (V3_LIH_PAR_HEA, _drop("results", "reference", "casci_ground_energy_hartree"),
     "field results.reference.casci_ground_energy_hartree: required field is missing; "
     "accepted: number"),
])
def test_a_nested_field_is_refused_by_its_full_path(path, edit, said):
    """Issue 36: a nested member missing or of the wrong type is refused naming its full
    dotted path (list items by index), the value and what is accepted, never a crash
    and never the bare key (``required field 'qubit_hamiltonian' is missing``)."""
    raw = json.loads(path.read_text())
    edit(raw)
    with pytest.raises(EntryError) as err:
        from_qencode(raw, path)
    assert str(err.value) == f"{path}: {said}"
