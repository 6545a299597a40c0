"""Entries: all 40 real QEncode v4.4 files, the bundled params/, and malformed input."""

from __future__ import annotations

import json

import pytest

from conftest import LIH_PAR_HEA, ROOT, SHARED_DB
from qencode_nb import entry as entries
from qencode_nb.entry import vocabulary
from qencode_nb.entry.hashing import qencode_sha256
from qencode_nb.paths import PARAMS_DIR
from qencode_nb.errors import EntryError

ALL = sorted(SHARED_DB.glob("*.json"))


def test_there_are_forty_shared_entries():
    assert len(ALL) == 40


@pytest.mark.parametrize("path", ALL, ids=[p.stem.split("__")[0] for p in ALL])
def test_every_shared_entry_loads_and_its_sha256_recomputes(path):
    e = entries.load(path)
    assert e.kind == "qencode-json"
    assert qencode_sha256(e.raw) == e.sha256
    assert e.entry_id.endswith(e.sha256[:16])
    assert e.mapping in vocabulary.MAPPINGS and e.ansatz in vocabulary.ANSATZE
    assert len(e.optimal_params) == e.num_params


def test_lih_json_facts():
    e = entries.load(LIH_PAR_HEA)
    assert (e.name, e.basis, e.mapping, e.ansatz, e.reps) == ("LiH", "cc-pvdz", "parity", "hea", 2)
    assert e.max_iterations == 500 and e.restarts_requested == 10 and e.seed == 42
    assert abs(e.published_error * 1e3 - 5.181379) < 1e-6
    assert e.tapered_num_qubits == 5 and len(e.pauli_terms) == 155


@pytest.mark.parametrize("name, mapping, ansatz, orbitals", [
    ("lih", "parity", "hea", "hf"),
    ("h2", "jordan_wigner", "uccsd", "hf"),
    ("h6", "jordan_wigner", "adapt", "casscf"),
])
def test_bundled_entries_agree_with_their_qencode_json(name, mapping, ansatz, orbitals):
    from qencode_nb.entry.readers import read_params_yaml
    from qencode_nb.paths import BUNDLED_DB

    short = read_params_yaml(PARAMS_DIR / f"{name}.yaml")
    assert (short.mapping, short.ansatz, short.orbital_optimization) == (mapping, ansatz, orbitals)
    assert short.pauli_terms is None and short.optimal_params is None
    full = entries.load(name, db=SHARED_DB)   # cross-checks every stated fact
    assert full.entry_id == short.entry_id and full.params_yaml == short.source
    assert full.published_energy == short.published_energy
    # Without db the bundled copy completes it: the same bytes as the shared database's.
    bundled = entries.load(name)
    assert bundled.source == BUNDLED_DB / f"{short.entry_id}.json"
    assert bundled.source.read_bytes() == full.source.read_bytes()
    assert bundled.pauli_terms == full.pauli_terms and bundled.params_yaml == short.source
    assert bundled.optimal_params == full.optimal_params is not None


def test_lih_published_gap():
    assert round(entries.load("lih").published_error * 1e3, 6) == 5.181379


def test_unknown_bundled_name_lists_the_bundled_ones():
    with pytest.raises(EntryError, match=r"accepted: a bundled name \(bh, h2, h6, lih\)"):
        entries.load("h7")


def _write(tmp_path, raw, name="bad.json"):
    path = tmp_path / name
    path.write_text(json.dumps(raw))
    return path


@pytest.fixture
def lih_raw():
    return json.loads(LIH_PAR_HEA.read_text())


def test_unknown_field_is_named_with_the_accepted_ones(tmp_path, lih_raw):
    lih_raw["run_config"]["max_iter"] = 500
    path = _write(tmp_path, lih_raw)
    with pytest.raises(EntryError) as err:
        entries.load(path)
    msg = str(err.value)
    assert "bad.json" in msg and "run_config.max_iter" in msg and "max_iterations" in msg


def test_wrong_type_is_named(tmp_path, lih_raw):
    lih_raw["run_config"]["max_iterations"] = "500"
    with pytest.raises(EntryError, match=r"bad.json: field run_config.max_iterations: "
                                         r"'500' has type str; accepted: integer"):
        entries.load(_write(tmp_path, lih_raw))


def test_bool_is_not_an_integer(tmp_path, lih_raw):
    lih_raw["run_config"]["seed"] = True
    with pytest.raises(EntryError, match="run_config.seed"):
        entries.load(_write(tmp_path, lih_raw))


def test_missing_required_field_is_named(tmp_path, lih_raw):
    del lih_raw["problem"]["geometry"]
    with pytest.raises(EntryError, match=r"field problem.geometry: required field is missing"):
        entries.load(_write(tmp_path, lih_raw))


def test_truncated_json_is_reported_with_its_position(tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(LIH_PAR_HEA.read_text()[:5000])
    with pytest.raises(EntryError, match=r"cut.json: not valid JSON \(line \d+, column \d+"):
        entries.load(path)


def test_unknown_vocabulary_names_field_value_and_accepted(tmp_path, lih_raw):
    lih_raw["encoding"]["ansatz_type"] = "ry_linear"
    with pytest.raises(EntryError, match=r"encoding.ansatz_type: 'ry_linear' is not accepted; "
                                         r"accepted.*hardware_efficient.*hea.*uccsd_tapered"):
        entries.load(_write(tmp_path, lih_raw))


def test_a_real_v3_entry_is_read_by_its_schema_reader():
    """A real QEncode 3.0.0 entry (tests/data/qencode-v3, MIT, LICENSE, NOTICE) lacks
    v4 fields; the reader of its schema_version (entry.readers.READERS) reads it."""
    v3 = ROOT / "tests" / "data" / "qencode-v3" / \
        "H2_631g_PAR_UCCSD_v3_tapered__sha256_17318eb2bc213097.json"
    assert json.loads(v3.read_text())["schema_version"] == "3.0.0"
    e = entries.load(str(v3))
    assert e.schema_version == "3.0.0" and e.mapping == "parity"
    assert "orbital_optimization" in e.undeclared


def test_unknown_schema_version_is_refused_first(tmp_path, lih_raw):
    """A version no reader knows is refused by its version, naming every accepted one,
    not by the first field it lacks."""
    lih_raw["schema_version"] = "3.9.9"
    del lih_raw["problem"]["orbital_optimization"]
    with pytest.raises(EntryError) as info:
        entries.load(_write(tmp_path, lih_raw))
    assert ("field schema_version: '3.9.9' is not accepted; accepted: '1.0.0', '2.0.0', "
            "'3.0.0', '4.0.0'") in str(info.value)
    assert "orbital_optimization" not in str(info.value)


@pytest.mark.parametrize("edit,said", [
    (lambda r: r["results"]["vqe"].pop("best_energy_hartree"),
     "field results.vqe.best_energy_hartree: required field is missing; accepted: number"),
    (lambda r: r["results"]["vqe"]["optimal_params"].__setitem__(3, "x"),
     "field results.vqe.optimal_params[3]: 'x' has type str; accepted: number"),
    (lambda r: r["artifacts"]["qubit_hamiltonian"]["pauli_terms"][7].__setitem__(
        "coefficient", 10 ** 400),
     "field artifacts.qubit_hamiltonian.pauli_terms[7].coefficient: "
     "100000000000000000...0000000000000000000 is not accepted; accepted: a number a "
     "float holds (Ha)"),
    (lambda r: r["provenance"]["tool_versions"].__setitem__("numpy", 2),
     "field provenance.tool_versions.numpy: 2 has type int; accepted: string or null"),
    (lambda r: r["encoding"].__setitem__("adapt_metadata", {"max_operators": "40"}),
     "field encoding.adapt_metadata.max_operators: '40' has type str; accepted: integer "
     "or null"),
])
def test_a_nested_field_is_refused_by_its_full_path(tmp_path, lih_raw, edit, said):
    """Issue 36: the full dotted path (list items by index), the value shortened and
    what is accepted."""
    edit(lih_raw)
    path = _write(tmp_path, lih_raw)
    with pytest.raises(EntryError) as err:
        entries.load(path)
    assert str(err.value) == f"{path}: {said}"


def test_malformed_pauli_term_is_named():
    from qencode_nb.hamiltonian.pauli import from_pauli_terms

    terms = "artifacts.qubit_hamiltonian.pauli_terms"
    with pytest.raises(EntryError, match=rf"field {terms}\[0\]\.pauli_string: 'Z0W1' is "
                                         "not a QEncode Pauli string; accepted: 'I' or"):
        from_pauli_terms([{"pauli_string": "Z0W1", "coefficient": 1.0}], 2)
    with pytest.raises(EntryError, match=rf"field {terms}\[1\]\.pauli_string: 'Z0Z2' acts "
                                         r"on wire 2, outside range\(2\) of num_qubits; "
                                         r"accepted: wires in range\(2\)"):
        from_pauli_terms([{"pauli_string": "Z0", "coefficient": 1.0},
                          {"pauli_string": "Z0Z2", "coefficient": 1.0}], 2)


def test_yaml_fact_disagreeing_with_its_json_is_refused(tmp_path):
    text = (PARAMS_DIR / "lih.yaml").read_text().replace("max_iterations: 500",
                                                                  "max_iterations: 1200")
    path = tmp_path / "lih1200.yaml"
    path.write_text(text)
    assert entries.load(path).max_iterations == 1200
    with pytest.raises(EntryError, match=r"lih1200.yaml: field run\.max_iterations: states "
                                         r"1200 but .*\.json has 500; accepted: 500 "):
        entries.load(path, db=SHARED_DB)


def test_yaml_unknown_field(tmp_path):
    text = (PARAMS_DIR / "h2.yaml").read_text() + "\nextra: 1\n"
    path = tmp_path / "x.yaml"
    path.write_text(text)
    with pytest.raises(EntryError, match="x.yaml: field extra: unknown field"):
        entries.load(path)


def test_vocabulary_aliases():
    assert vocabulary.ansatz("hardware_efficient") == vocabulary.ansatz("HEA") == "hea"
    assert vocabulary.ansatz("uccsd_tapered") == "uccsd"
    assert vocabulary.mapping("PAR") == "parity" and vocabulary.mapping("BK") == "bravyi_kitaev"
    opt = vocabulary.optimizer("ADAPT-VQE (L-BFGS-B inner, statevector engine)")
    assert (opt.name, opt.inner, opt.engine) == ("adapt", "l-bfgs-b", "statevector")
    assert vocabulary.optimizer("Adam(lr=0.05)").learning_rate == 0.05
    with pytest.raises(EntryError, match="'Nelder-Mead' is not accepted.*cobyla"):
        vocabulary.optimizer("Nelder-Mead")
