"""Hamiltonian check (rebuilt vs stored) and the on-disk reference cache.

Real shared entries (../shared/qencode-v4/db, never copied).  Every check is
also shown to fail on a perturbed input.  Caches live in pytest temporary
folders, never in ~/.cache.  No test asserts a wall-clock time.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import (ROOT, SHARED_DB as DB, TEST_PROFILE, coretype_missing,  # noqa: E402,F401
                      pinned_env, reference_only)

ENTRIES = {
    "H2_JW": "H2_ccpvdz_JW_UCCSD_v4_tapered__sha256_93a0f8a8604d9aed.json",
    "H2_PAR": "H2_ccpvdz_PAR_HEA_v4_tapered__sha256_47f0004357aeddae.json",
    "H2_BK": "H2_ccpvdz_BK_HEA_v4_tapered__sha256_6e206ec6f1f02ea4.json",
    "LiH_PAR_HEA": "LiH_ccpvdz_PAR_HEA_v4_tapered__sha256_e94da71e7eb3b98e.json",
    "BeH2_PAR_UCCSD": "BeH2_ccpvdz_PAR_UCCSD_v4_tapered__sha256_f71541a4f8d3e964.json",
    "H6_JW_HEA_casscf": "H6_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_254551c7b5295e51.json",
}

TOL_HA = 1e-8
#: The children's environment: the test process's kernel profile at launch (its
#: QENCODE_NB_BLAS_PROFILE, OPENBLAS_CORETYPE and NPY_DISABLE_CPU_FEATURES enter the
#: rebuild cache's key), so a child finds what the test process wrote.
SUBPROCESS_ENV = pinned_env(1, TEST_PROFILE, PYTHONPATH=str(ROOT))


def _load(key):
    from qencode_nb import entry as entries

    path = DB / ENTRIES[key]
    if not path.is_file():
        pytest.fail(f"shared QEncode entry missing: {path}")
    return entries.load(path)


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("qnb-cache")


_REBUILT: dict = {}


def _rebuilt(key, cache_dir):
    """(entry, ChemSummary, TaperResult) through one module-wide cache."""
    if key not in _REBUILT:
        from qencode_nb.hamiltonian.cache import cached_rebuild_entry

        entry = _load(key)
        chem, tap = cached_rebuild_entry(entry, cache_dir=cache_dir)
        _REBUILT[key] = (entry, chem, tap)
    return _REBUILT[key]


def _compare(entry, tap, stored_terms=None, **overrides):
    from qencode_nb.hamiltonian.hamcheck import compare_hamiltonian

    kwargs = dict(e_exact_stored=entry.exact_ground_energy, e_casci=entry.casci_energy,
                  constant_ha=entry.bk_constant_correction_ha,
                  constant_rebuilt_ha=tap.bk_constant_correction_ha or 0.0,
                  hamiltonian_source_recorded=entry.hamiltonian_source,
                  diagonalise_stored="always")
    kwargs.update(overrides)
    terms = entry.pauli_terms if stored_terms is None else stored_terms
    return compare_hamiltonian(terms, entry.raw["artifacts"]["qubit_hamiltonian"]["num_qubits"],
                               tap.H_tapered, **kwargs).to_record()


# ---------------------------------------------------------------------------
# Hamiltonian check on real entries
# ---------------------------------------------------------------------------

@pytest.mark.bitlevel
@pytest.mark.parametrize("key", [pytest.param(k, marks=reference_only) if k.endswith("casscf")
                                 else k for k in ENTRIES])   # CASSCF follows the kernels
def test_rebuilt_hamiltonian_matches_stored(key, shared_cache):
    entry, chem, tap = _rebuilt(key, shared_cache)
    r = _compare(entry, tap)
    print(f"{key}: terms {r['n_terms']}/{r['n_terms_stored']}, max|dc| "
          f"{r['max_abs_dcoeff']:.2e} Ha, dE {r['ground_energy_diff']:.2e} Ha, "
          f"fingerprint {r['fingerprint_ha']:.2e} Ha, {r['inference_basis']}")
    assert r["terms_match"] and r["order_match"]
    assert r["missing"] == [] and r["extra"] == []
    assert r["n_terms"] == r["n_terms_stored"] == len(entry.pauli_terms)
    assert r["max_abs_dcoeff"] <= TOL_HA
    assert abs(r["ground_energy_diff"]) <= TOL_HA
    assert abs(r["ground_energy_stored_terms"] - entry.exact_ground_energy) <= TOL_HA
    assert r["ground_method"] == "dense" and r["stored_ground_method"] == "dense"
    assert r["fingerprint_ha"] < TOL_HA and r["fingerprint_rebuilt_ha"] < TOL_HA
    assert r["hamiltonian_source"] == r["hamiltonian_source_inferred"] == "of_bridge"
    assert r["status"] == "pass" and r["paths"]["of_bridge"]["equivalence"] == "identical"
    assert r["hamiltonian_source_recorded"] == "of_bridge" and r["source_matches"] is True
    assert r["fingerprint_informative"] is (entry.bk_constant_correction_ha is None)
    # The cache's exact ground energy is the generator's e_exact_qubit.
    assert abs(chem.e_exact_qubit_ha - entry.exact_ground_energy) <= TOL_HA
    assert abs(chem.e_casci - entry.casci_energy) <= TOL_HA


def test_check_entry_uses_the_cached_ground_energy(shared_cache):
    from qencode_nb.hamiltonian.hamcheck import check_entry

    entry, _, _ = _rebuilt("LiH_PAR_HEA", shared_cache)
    r = check_entry(entry, cache_dir=shared_cache).to_record()
    assert r["cache_hit"] is True and r["ground_method"] == "given"
    assert r["stored_ground_method"].startswith("reused rebuilt ground (Weyl bound")
    assert r["weyl_bound_ha"] <= 1e-9
    assert r["hamiltonian_source"] == "of_bridge" and r["source_matches"]
    # Parity: the generator never took PennyLane's native path, so it is not built.
    assert r["paths"]["pennylane_native"] == {
        "built": False, "reason": "the generator routes parity through of_bridge"}
    assert abs(r["ground_energy_diff"]) <= TOL_HA and abs(r["e_casci_diff"]) <= TOL_HA


def test_stored_ground_energy_is_kept_under_the_cache_dir_given(shared_cache, tmp_path):
    """The stored operator's ground energy goes to ``ground-<key>.json`` under the
    cache root passed in (not the default one) and is read back, not recomputed."""
    from qencode_nb.hamiltonian import cache, hamcheck

    entry, _, _ = _rebuilt("LiH_PAR_HEA", shared_cache)
    n = entry.tapered_num_qubits
    energy, method = hamcheck.stored_ground_energy(entry.pauli_terms, n, cache_dir=tmp_path)
    files = list((tmp_path / cache.SUBDIR).glob("ground-*.json"))
    assert len(files) == 1 and abs(energy - entry.exact_ground_energy) <= TOL_HA
    doc = json.loads(files[0].read_text())
    assert (doc["energy"], doc["method"]) == (energy, method)
    from qencode_nb.errors import CacheWarning
    from qencode_nb.hamiltonian.cache_key import sha256_json

    # An edit without its checksum is never served: warned about and rebuilt (issue 36).
    edited = {**doc, "energy": energy + 1.0}
    files[0].write_text(json.dumps(edited))
    with pytest.warns(CacheWarning, match="checksum mismatch"):
        again, _ = hamcheck.stored_ground_energy(entry.pauli_terms, n, cache_dir=tmp_path)
    assert again == energy
    # A file whose checksum holds is read back, not recomputed: a hit returns what it holds.
    fields = {k: v for k, v in edited.items() if k not in ("material", cache.SIDE_CHECKSUM)}
    files[0].write_text(json.dumps({**edited, cache.SIDE_CHECKSUM: sha256_json(fields)}))
    again, _ = hamcheck.stored_ground_energy(entry.pauli_terms, n, cache_dir=tmp_path)
    assert again == energy + 1.0


@pytest.mark.parametrize("damage", ["truncated", "edited", "no checksum", "not json"])
def test_a_damaged_side_file_is_rebuilt_and_reported_never_served(damage, tmp_path):
    """Issue 36: a side file of the rebuild cache (pool, words, ground, orbitals, native)
    that is truncated, edited, checksum-less or not JSON is detected, counted, warned
    about naming the file, rebuilt, and the value computed again is what the caller
    gets.  The test fails if the damaged value is served."""
    from qencode_nb.errors import CacheWarning
    from qencode_nb.hamiltonian import cache

    material = {"what": "test", "n": 1}
    calls = []

    def compute():
        calls.append(1)
        return {"value": 0.125, "words": ["XZ", "ZY"]}

    fields, status = cache.side_file("test", material, compute, cache_dir_=tmp_path)
    assert status == "built" and len(calls) == 1
    assert cache.side_file("test", material, compute, cache_dir_=tmp_path)[1] == "hit"
    assert len(calls) == 1
    path = next((tmp_path / cache.SUBDIR).glob("test-*.json"))
    text = path.read_text()
    doc = json.loads(text)
    damaged = {"truncated": text[:len(text) // 2],
               "edited": json.dumps({**doc, "value": 99.0}),
               "no checksum": json.dumps({k: v for k, v in doc.items()
                                          if k != cache.SIDE_CHECKSUM}),
               "not json": "\x00garbage"}[damage]
    path.write_text(damaged)
    corrupt = cache.STATS["corrupt"]
    with pytest.warns(CacheWarning, match=path.name):
        again, status = cache.side_file("test", material, compute, cache_dir_=tmp_path)
    assert again == {"value": 0.125, "words": ["XZ", "ZY"]} and len(calls) == 2
    assert status.startswith("rebuilt: ") and cache.STATS["corrupt"] == corrupt + 1
    assert cache.side_file("test", material, compute, cache_dir_=tmp_path)[1] == "hit"


def test_a_side_file_keyed_by_ints_is_served_from_its_json(tmp_path):
    """Issue 37: fields holding dicts keyed by ints (the fast engine's Pauli words: wire
    -> letter) read back from JSON keyed by strings, which the canonical JSON sorts
    otherwise beyond 9 wires; the checksum is of what a reader gets, so the file is a
    hit, not rebuilt at every read (H10 ADAPT's words: 45 s per audit)."""
    from qencode_nb.hamiltonian import cache

    calls = []

    def compute():
        calls.append(1)
        return {"words": [[{0: "X", 2: "Y", 10: "Z", 11: "X"}, 0.0625]]}

    material = {"what": "int-keyed words"}
    assert cache.side_file("words", material, compute, cache_dir_=tmp_path)[1] == "built"
    doc, status = cache.side_file("words", material, compute, cache_dir_=tmp_path)
    assert status == "hit" and len(calls) == 1
    assert doc["words"] == [[{"0": "X", "2": "Y", "10": "Z", "11": "X"}, 0.0625]]


def _shifted(terms, index, delta):
    out = copy.deepcopy(terms)
    out[index]["coefficient"] += delta
    return out


def test_perturbed_coefficient_is_caught_by_every_check(shared_cache):
    """LiH PAR/HEA (no constant correction): shift the identity by 1e-4 Ha."""
    entry, _, tap = _rebuilt("LiH_PAR_HEA", shared_cache)
    assert entry.pauli_terms[0]["pauli_string"] == "I"
    r = _compare(entry, tap, stored_terms=_shifted(entry.pauli_terms, 0, 1e-4),
                 diagonalise_stored="auto")
    assert r["terms_match"]  # same strings ...
    assert r["max_abs_dcoeff"] == pytest.approx(1e-4, rel=1e-6)  # ... other values
    assert r["max_abs_dcoeff_term"] == "I"
    assert r["stored_ground_method"] == "dense"  # Weyl bound 1e-4: diagonalised
    assert r["fingerprint_ha"] == pytest.approx(1e-4, rel=1e-6)
    # An edited coefficient is a failure naming the term, not another generator path.
    assert r["status"] == "fail" and r["hamiltonian_source"] is None
    assert r["hamiltonian_source_inferred"] is None and r["source_matches"] is None
    assert "of_bridge differs by 1.000e-04 Ha at I" in r["reason"]


def test_perturbed_non_diagonal_term_moves_the_fingerprint(shared_cache):
    entry, _, tap = _rebuilt("LiH_PAR_HEA", shared_cache)
    index = max(range(len(entry.pauli_terms)),
                key=lambda i: abs(entry.pauli_terms[i]["coefficient"])
                if entry.pauli_terms[i]["pauli_string"] != "I" else 0.0)
    r = _compare(entry, tap, stored_terms=_shifted(entry.pauli_terms, index, 1e-4))
    assert r["max_abs_dcoeff"] == pytest.approx(1e-4, rel=1e-6)
    assert 1e-6 < r["fingerprint_ha"] <= 1e-4 + 1e-12  # Weyl: |dE| <= |dc|
    assert r["status"] == "fail" and r["hamiltonian_source"] is None
    term = entry.pauli_terms[index]["pauli_string"]
    assert r["paths"]["of_bridge"]["max_abs_dcoeff_term"] == term and term in r["reason"]


def test_perturbed_rebuild_moves_its_ground_energy(shared_cache):
    """The rebuilt side fails too: ground_energy_diff and fingerprint_rebuilt."""
    from qencode_nb.hamiltonian.hamcheck import compare_hamiltonian

    entry, _, _ = _rebuilt("LiH_PAR_HEA", shared_cache)
    bad = _shifted(entry.pauli_terms, 0, 1e-4)
    r = compare_hamiltonian(entry.pauli_terms, 5, bad, e_exact_stored=entry.exact_ground_energy,
                            e_casci=entry.casci_energy)
    assert r.ground_energy_diff == pytest.approx(1e-4, rel=1e-6)
    assert r.fingerprint_rebuilt_ha == pytest.approx(1e-4, rel=1e-6)
    assert r.fingerprint_ha < TOL_HA  # the stored side is still of_bridge
    r = compare_hamiltonian(entry.pauli_terms, 5, entry.pauli_terms,
                            e_exact_stored=entry.exact_ground_energy + 1e-6,
                            e_casci=entry.casci_energy)
    assert r.ground_energy_diff == pytest.approx(-1e-6, rel=1e-6)


def test_missing_and_extra_terms_are_listed(shared_cache):
    entry, _, tap = _rebuilt("LiH_PAR_HEA", shared_cache)
    dropped = entry.pauli_terms[3]["pauli_string"]
    terms = [t for i, t in enumerate(entry.pauli_terms) if i != 3]
    present = {t["pauli_string"] for t in entry.pauli_terms}
    new = next(s for s in ("Y0", "Y1", "X0Y1", "Y0Y1Y2") if s not in present)
    terms.append({"pauli_string": new, "coefficient": 0.0})
    r = _compare(entry, tap, stored_terms=terms)
    assert not r["terms_match"] and not r["order_match"]
    assert r["missing"] == [new] and r["extra"] == [dropped]
    assert r["n_missing"] == r["n_extra"] == 1


def test_constant_correction_entry_infers_from_coefficients(shared_cache):
    """BeH2 PAR: the constant makes the fingerprint 0 by construction, so a
    shifted coefficient is caught by the coefficient comparison."""
    entry, _, tap = _rebuilt("BeH2_PAR_UCCSD", shared_cache)
    assert entry.bk_constant_correction_ha is not None
    r = _compare(entry, tap, stored_terms=_shifted(entry.pauli_terms, 1, 1e-4))
    assert r["fingerprint_informative"] is False
    assert r["max_abs_dcoeff"] == pytest.approx(1e-4, rel=1e-6)
    assert r["status"] == "fail" and r["hamiltonian_source"] is None
    assert r["inference_basis"] == r["reason"]
    # And a wrong constant shows up in the energies and fails the check by name.
    r = _compare(entry, tap, constant_ha=entry.bk_constant_correction_ha + 1e-4)
    assert r["status"] == "fail" and "bk_constant_correction_ha" in r["reason"]
    assert r["weyl_bound_ha"] == pytest.approx(1e-4, rel=1e-6)
    assert abs(r["ground_energy_diff"]) <= TOL_HA
    assert r["fingerprint_ha"] == pytest.approx(1e-4, rel=1e-4)


def test_undeclared_source_and_bad_arguments(shared_cache):
    from qencode_nb.errors import EntryError

    entry, _, tap = _rebuilt("H2_JW", shared_cache)
    r = _compare(entry, tap, hamiltonian_source_recorded=None)
    assert r["source_matches"] is None and r["hamiltonian_source"] == "of_bridge"
    with pytest.raises(ValueError, match="diagonalise_stored"):
        _compare(entry, tap, diagonalise_stored="sometimes")
    with pytest.raises(EntryError, match="outside"):
        _compare(entry, tap, stored_terms=[{"pauli_string": "Z7", "coefficient": 1.0}])


def test_fingerprint_is_reported_not_used_to_name_a_path(shared_cache):
    """Issue 23: a fingerprint above the threshold once 'inferred' pennylane_native;
    now only a rebuilt path can be named, and an edit that moves the fingerprint
    is a failure."""
    from qencode_nb.hamiltonian import hamcheck

    assert hamcheck.FINGERPRINT_THRESHOLD_HA == 1e-6
    assert not hasattr(hamcheck, "infer_source")
    entry, _, tap = _rebuilt("LiH_PAR_HEA", shared_cache)
    r = _compare(entry, tap, stored_terms=_shifted(entry.pauli_terms, 0, 1e-5))
    assert r["fingerprint_ha"] > hamcheck.FINGERPRINT_THRESHOLD_HA
    assert r["hamiltonian_source"] is None and r["status"] == "fail"


# ---------------------------------------------------------------------------
# Cache
# ---------------------------------------------------------------------------

def _fields(key):
    from qencode_nb.hamiltonian.cache import entry_fields

    return entry_fields(_load(key))


@pytest.mark.hostkind
def test_second_call_is_a_hit_without_pyscf(tmp_path, monkeypatch):
    from qencode_nb.hamiltonian import cache
    from qencode_nb.hamiltonian import rebuild

    fields = _fields("H2_BK")
    chem, _ = cache.cached_rebuild(**fields, cache_dir=tmp_path)
    assert chem.cache_hit is False and chem.cache_status == "absent"
    assert Path(chem.cache_path).is_file()

    def refuse(*args, **kwargs):
        raise AssertionError("PySCF rebuild called on a cache hit")

    monkeypatch.setattr(rebuild, "rebuild_tapered", refuse)
    hits = cache.STATS["hits"]
    chem2, _ = cache.cached_rebuild(**fields, cache_dir=tmp_path)
    assert chem2.cache_hit is True and chem2.cache_status == "hit"
    assert cache.STATS["hits"] == hits + 1
    assert chem2.cache_key == chem.cache_key

    # A fresh process pinned as this one: a hit that never imports OpenFermion or
    # PennyLane (the key loads the three OpenBLAS copies, PySCF's included, to measure
    # their kernels; issue 36).
    code = textwrap.dedent(f"""
        import json, sys
        from qencode_nb.notebook.pins import pin
        pin(1, sys.argv[3])
        from qencode_nb.hamiltonian import cache
        chem, tap = cache.cached_rebuild(**json.loads(sys.argv[1]), cache_dir=sys.argv[2])
        print(json.dumps([chem.cache_hit, 'openfermion' in sys.modules,
                          'pennylane' in sys.modules]))
    """)
    out = subprocess.run([sys.executable, "-c", code, json.dumps(fields), str(tmp_path),
                          TEST_PROFILE],
                         env=SUBPROCESS_ENV, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [True, False, False]


def test_a_tapered_state_shorter_than_the_wires_is_served_from_the_cache(tmp_path):
    """LiH STO-3G BK v3: 8 qubits, 3 generators, a tapered Hamiltonian on 5 wires and
    PennyLane's ``taper_hf`` state of 4 entries.  The cache refused its own payload as
    corrupt (it required the state's length to equal the wire count), so the entry was
    rebuilt on every run; a state longer than the wires is still refused."""
    from qencode_nb import entry as entries
    from qencode_nb.errors import CacheCorrupt
    from qencode_nb.hamiltonian import cache
    from qencode_nb.hamiltonian.cache import entry_fields
    from qencode_nb.hamiltonian.cache_payload import check_payload

    from conftest import SHARED_HISTORY

    path = SHARED_HISTORY / "releases" / "v3" / "db" / \
        "LiH_sto3g_BK_HEA_v3_tapered__sha256_fbd201192f348dad.json"
    fields = entry_fields(entries.load(path))
    chem, tap = cache.cached_rebuild(**fields, cache_dir=tmp_path)
    assert (tap.n_qubits_full, len(tap.generators), tap.n_qubits_tapered,
            len(tap.hf_tapered)) == (8, 3, 5, 4)
    chem2, tap2 = cache.cached_rebuild(**fields, cache_dir=tmp_path)
    assert chem2.cache_hit is True and chem2.cache_status == "hit"
    assert [int(x) for x in tap2.hf_tapered] == [int(x) for x in tap.hf_tapered]
    payload = json.loads(Path(chem.cache_path).read_text())["payload"]
    payload["taper"]["hf_tapered"] += [0, 0]          # 6 entries on 5 wires
    with pytest.raises(CacheCorrupt, match="hf_tapered is longer than n_qubits_tapered"):
        check_payload(payload)


@pytest.mark.parametrize("key", ["H2_BK", "BeH2_PAR_UCCSD", "LiH_PAR_HEA"])
def test_cached_result_equals_fresh(key, tmp_path):
    import numpy as np
    import pennylane as qml

    from qencode_nb.hamiltonian import cache
    from qencode_nb.hamiltonian.rebuild import rebuild_tapered

    fields = _fields(key)
    source = fields.pop("hamiltonian_source")
    fresh_chem, fresh = rebuild_tapered(**fields)
    cache.cached_rebuild(**fields, hamiltonian_source=source, cache_dir=tmp_path)
    chem, tap = cache.cached_rebuild(**fields, hamiltonian_source=source, cache_dir=tmp_path)
    assert chem.cache_hit
    for name in ("e_hf", "e_casci", "e_casci_first_excited", "e_casscf",
                 "orbital_optimization", "num_electrons", "num_spatial_orbitals"):
        assert getattr(chem, name) == getattr(fresh_chem, name), name
    assert qml.equal(tap.H_tapered, fresh.H_tapered)
    assert list(tap.H_tapered.pauli_rep.items()) == list(fresh.H_tapered.pauli_rep.items())
    wires = list(range(tap.n_qubits_tapered))
    assert np.array_equal(qml.matrix(tap.H_tapered, wire_order=wires),
                          qml.matrix(fresh.H_tapered, wire_order=wires))
    assert len(tap.generators) == len(fresh.generators)
    for a, b in zip(tap.generators + tap.paulixops, fresh.generators + fresh.paulixops):
        assert qml.equal(a, b) and type(a) is type(b)
    assert tap.hf_tapered.dtype == fresh.hf_tapered.dtype
    assert np.array_equal(tap.hf_tapered, fresh.hf_tapered)
    for name in ("z2_sectors", "n_qubits_full", "n_qubits_tapered", "e_sector_ground_ha",
                 "bk_constant_correction_ha", "bk_imaginary_stripped",
                 "bk_max_imaginary_abs_ha", "max_imaginary_abs_ha", "num_symmetries"):
        assert getattr(tap, name) == getattr(fresh, name), name


@pytest.mark.parametrize("key", ["H2_JW", "BeH2_PAR_UCCSD"])
def test_uccsd_pool_from_cached_generators_equals_fresh(key, tmp_path):
    import pennylane as qml

    from qencode_nb.hamiltonian import cache
    from qencode_nb.engines.ansatz import tapered_uccsd_ops
    from qencode_nb.hamiltonian.rebuild import rebuild_tapered

    fields = _fields(key)
    source = fields.pop("hamiltonian_source")
    chem, fresh = rebuild_tapered(**fields)
    cache.cached_rebuild(**fields, hamiltonian_source=source, cache_dir=tmp_path)
    _, tap = cache.cached_rebuild(**fields, hamiltonian_source=source, cache_dir=tmp_path)
    pool_fresh = tapered_uccsd_ops(chem.num_electrons, fresh.n_qubits_full, fresh.generators,
                                   fresh.paulixops, fresh.z2_sectors)
    pool_cached = tapered_uccsd_ops(chem.num_electrons, tap.n_qubits_full, tap.generators,
                                    tap.paulixops, tap.z2_sectors)
    assert len(pool_cached) == len(pool_fresh) == _load(key).num_params
    for a, b in zip(pool_cached, pool_fresh):
        assert qml.equal(a, b)


def test_key_covers_versions_coretype_threads_code_and_procedure(monkeypatch):
    from qencode_nb.hamiltonian import cache, cache_key

    fields = _fields("H2_JW")
    base = cache.cache_key(**fields)
    assert base == cache.cache_key(**fields)
    assert len(base) == 64
    assert cache.cache_key(**{**fields, "hamiltonian_source": None}) == base  # builds of_bridge

    changed = {}
    for name, value in (("geometry", fields["geometry"] + " "), ("basis", "sto-3g"),
                        ("charge", 1), ("spin", 2), ("num_electrons", 1),
                        ("num_spatial_orbitals", 3), ("orbital_optimization", "casscf"),
                        ("mapping", "parity")):
        changed[name] = cache.cache_key(**{**fields, name: value})
    changed["classical"] = cache.cache_key(**fields, classical=True)
    changed["verify_tol"] = cache.cache_key(**fields, verify_tol=None)

    real_version = cache_key.package_version
    for pkg in cache_key.KEY_PACKAGES:
        monkeypatch.setattr(cache_key, "package_version",
                            lambda n, pkg=pkg: "0.0.0-test" if n == pkg else real_version(n))
        changed[f"version:{pkg}"] = cache.cache_key(**fields)
    monkeypatch.setattr(cache_key, "package_version", real_version)

    # The kernels loaded are measured, not read from the variable: setting it in a
    # process whose copies are loaded changes nothing they run, nor the key (issue 36).
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Prescott")
    assert cache.cache_key(**fields) == base
    monkeypatch.delenv("OPENBLAS_CORETYPE")
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    changed["omp=2"] = cache.cache_key(**fields)
    monkeypatch.undo()
    monkeypatch.setattr(cache_key, "FORMAT_VERSION", cache_key.FORMAT_VERSION + 1)
    changed["format"] = cache.cache_key(**fields)
    monkeypatch.undo()
    monkeypatch.setattr(cache_key, "code_sha256", lambda: "0" * 64)
    changed["code"] = cache.cache_key(**fields)
    monkeypatch.undo()

    assert cache.cache_key(**fields) == base
    assert base not in changed.values()
    assert len(set(changed.values())) == len(changed), changed


_KEY_CODE = """\
import json, sys
from qencode_nb.notebook.pins import pin
if sys.argv[2] != "unpinned":
    pin(1, sys.argv[2])
from qencode_nb.hamiltonian import cache, cache_key
material = cache_key.key_material(**json.loads(sys.argv[1]))
print(json.dumps([cache.cache_key(**json.loads(sys.argv[1])),
                  material["environment"]["numeric"]["kernels"]]))
"""


def _key_in_child(fields, how: str, env) -> tuple[str, dict]:
    out = subprocess.run([sys.executable, "-c", _KEY_CODE, json.dumps(fields), how],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    key, kernels = json.loads(out.stdout.strip().splitlines()[-1])
    return key, kernels


@pytest.mark.hostkind
def test_key_is_the_same_in_another_process():
    from qencode_nb.hamiltonian import cache

    fields = _fields("H2_JW")
    assert _key_in_child(fields, TEST_PROFILE, SUBPROCESS_ENV)[0] == cache.cache_key(**fields)


def test_key_follows_the_kernels_a_process_runs_not_the_profile_it_inherited():
    """Issue 36: a child process that inherits a kernel profile's launch variables
    (``OPENBLAS_CORETYPE`` of numpy's copy, ``QENCODE_NB_BLAS_PROFILE``) but does not
    call ``pin()`` loads PySCF's OpenBLAS with numpy's kernel (``portable``: Haswell
    instead of Prescott).  Before, both processes read the same variables and shared
    one key, so the pinned process could be served the other's Hamiltonian; now the
    key holds the measured kernels and the two differ.  Profile ``portable`` runs on
    every host of this project (AVX2)."""
    fields = _fields("H2_JW")
    env = pinned_env(1, "portable", PYTHONPATH=str(ROOT))
    pinned_key, pinned = _key_in_child(fields, "portable", env)
    unpinned_key, unpinned = _key_in_child(fields, "unpinned", env)
    assert pinned == {"numpy": "Haswell", "scipy": "Haswell", "pyscf": "Prescott"}
    assert unpinned["pyscf"] == "Haswell" and unpinned["numpy"] == "Haswell"
    assert pinned_key != unpinned_key
    assert env["QENCODE_NB_BLAS_PROFILE"] == "portable"   # the same profile named to both


def test_pennylane_native_source_is_a_missing_capability(tmp_path):
    from qencode_nb.hamiltonian import cache
    from qencode_nb.errors import CapabilityMissing, EntryError

    fields = _fields("H2_JW")
    with pytest.raises(CapabilityMissing, match="pennylane_native"):
        cache.cached_rebuild(**{**fields, "hamiltonian_source": "pennylane_native"},
                             cache_dir=tmp_path)
    with pytest.raises(EntryError, match="hamiltonian_source"):
        cache.cache_key(**{**fields, "hamiltonian_source": "magic"})


def _corruptions():
    def truncate(text):
        return text[: len(text) // 2]

    def flip_coefficient(text):
        doc = json.loads(text)
        doc["payload"]["taper"]["H_tapered"]["terms"][0][1] += 1e-12
        return json.dumps(doc)

    def wrong_key(text):
        doc = json.loads(text)
        doc["key"] = "0" * 64
        return json.dumps(doc)

    def forged_checksum_bad_structure(text):
        from qencode_nb.hamiltonian.cache_key import sha256_json

        doc = json.loads(text)
        del doc["payload"]["taper"]["sectors"]  # the payload key of TaperResult.z2_sectors
        doc["payload_sha256"] = sha256_json(doc["payload"])
        return json.dumps(doc)

    def bad_pauli_string(text):
        from qencode_nb.hamiltonian.cache_key import sha256_json

        doc = json.loads(text)
        doc["payload"]["taper"]["H_tapered"]["terms"][0][0] = "Q9"
        doc["payload_sha256"] = sha256_json(doc["payload"])
        return json.dumps(doc)

    def old_format(text):
        doc = json.loads(text)
        doc["format_version"] = 0
        return json.dumps(doc)

    def not_json(text):
        return "\x00\x01garbage"

    return [truncate, flip_coefficient, wrong_key, forged_checksum_bad_structure,
            bad_pauli_string, old_format, not_json]


@pytest.mark.parametrize("corrupt", _corruptions(), ids=lambda f: f.__name__)
def test_corrupted_file_is_detected_and_rebuilt(corrupt, tmp_path):
    import pennylane as qml

    from qencode_nb.errors import CacheCorrupt, CacheWarning
    from qencode_nb.hamiltonian import cache

    fields = _fields("H2_BK")
    chem, fresh = cache.cached_rebuild(**fields, cache_dir=tmp_path)
    path = Path(chem.cache_path)
    good = path.read_text()
    path.write_text(corrupt(good))
    with pytest.raises(CacheCorrupt):
        cache.load(chem.cache_key, tmp_path)
    before = cache.STATS["corrupt"]
    with pytest.warns(CacheWarning, match="corrupt"):
        chem2, tap2 = cache.cached_rebuild(**fields, cache_dir=tmp_path)
    assert chem2.cache_hit is False and chem2.cache_status.startswith("corrupt: ")
    assert cache.STATS["corrupt"] == before + 1
    assert qml.equal(tap2.H_tapered, fresh.H_tapered)
    # The file was rewritten and is trusted again.
    chem3, tap3 = cache.cached_rebuild(**fields, cache_dir=tmp_path)
    assert chem3.cache_hit is True
    assert qml.equal(tap3.H_tapered, fresh.H_tapered)


_WRITER = textwrap.dedent("""
    import json, sys
    from qencode_nb.notebook.pins import pin
    pin(1, sys.argv[4])       # as this process: the key holds the kernels measured
    from qencode_nb.hamiltonian import cache
    chem, tap = cache.cached_rebuild(**json.loads(sys.argv[1]), cache_dir=sys.argv[2],
                                     lock=sys.argv[3] == "lock")
    print(json.dumps([chem.cache_hit, chem.cache_status, len(tap.H_tapered.pauli_rep)]))
""")


@pytest.mark.hostkind
@pytest.mark.parametrize("lock", ["lock", "nolock"])
def test_two_concurrent_processes_leave_a_valid_file(lock, tmp_path):
    from qencode_nb.hamiltonian import cache

    fields = _fields("H2_JW")
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, json.dumps(fields),
                               str(tmp_path), lock, TEST_PROFILE], env=SUBPROCESS_ENV,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert all(r[2] == 3 for r in results)
    if lock == "lock":  # one built, the other waited and read it
        assert sorted(r[0] for r in results) == [False, True]
    key = cache.cache_key(**fields)
    chem, tap = cache.load(key, tmp_path)
    assert len(tap.H_tapered.pauli_rep) == 3
    assert [p.name for p in (tmp_path / cache.SUBDIR).iterdir()
            if p.name.startswith(".tmp-")] == []


_HAMMER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from qencode_nb.atomic import write_atomic
    path, tag = Path(sys.argv[1]), sys.argv[2]
    body = ('{"tag": "%s", "pad": "%s"}' % (tag, tag * 400000)).encode()
    for _ in range(60):
        write_atomic(path, body)
""")


def test_atomic_writes_are_never_seen_half_written(tmp_path):
    target = tmp_path / "rebuild" / "k.json"
    procs = [subprocess.Popen([sys.executable, "-c", _HAMMER, str(target), tag],
                              env=SUBPROCESS_ENV, stderr=subprocess.PIPE, text=True)
             for tag in ("a", "b")]
    reads = 0
    while any(p.poll() is None for p in procs):
        try:
            text = target.read_text()
        except FileNotFoundError:
            continue
        doc = json.loads(text)  # a partial file would raise here
        assert doc["tag"] in ("a", "b") and len(doc["pad"]) == 400000
        reads += 1
    for p in procs:
        assert p.wait() == 0, p.stderr.read()[-2000:]
    assert json.loads(target.read_text())["tag"] in ("a", "b")
    assert reads > 0
    assert [p.name for p in target.parent.iterdir()] == ["k.json"]


def test_clear_and_location(tmp_path, monkeypatch):
    from qencode_nb.hamiltonian import cache

    fields = _fields("H2_PAR")
    chem, _ = cache.cached_rebuild(**fields, cache_dir=tmp_path)
    assert cache.clear(tmp_path, key="f" * 64) == 0
    assert cache.clear(tmp_path, key=chem.cache_key) == 2  # .json and .lock
    assert not Path(chem.cache_path).exists()
    assert cache.clear(tmp_path / "nowhere") == 0

    monkeypatch.setenv(cache.ENV_CACHE_DIR, str(tmp_path / "env"))
    assert cache.cache_root() == tmp_path / "env"
    chem, _ = cache.cached_rebuild(**fields)
    assert Path(chem.cache_path).parent == tmp_path / "env" / cache.SUBDIR
    assert cache.clear() == 2
    monkeypatch.delenv(cache.ENV_CACHE_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_root() == tmp_path / "xdg" / "qencode-nb"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.cache_root() == Path.home() / ".cache" / "qencode-nb"


def test_modules_do_not_import_numpy_on_import():
    code = ("import sys, qencode_nb.hamiltonian.cache, qencode_nb.hamiltonian.hamcheck, "
            "qencode_nb.hamiltonian.rebuild, qencode_nb.hamiltonian.exact, "
            "qencode_nb.hamiltonian.pauli, qencode_nb.hamiltonian.of_bridge, "
            "qencode_nb.hamiltonian.tapering, qencode_nb.hamiltonian.chemistry; "
            "print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=SUBPROCESS_ENV,
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_dense_via_sparse_path_agrees_with_qml_matrix(monkeypatch):
    """13-14 qubits use sparse_matrix().real.toarray(); forced here on LiH's 5 qubits."""
    from qencode_nb.hamiltonian import exact
    from qencode_nb.hamiltonian.pauli import from_pauli_terms

    entry = _load("LiH_PAR_HEA")
    H = from_pauli_terms(entry.pauli_terms, 5)
    reference, method = exact.exact_ground_energy(H, range(5), with_method=True)
    assert method == "dense" and reference == exact.exact_ground_energy(H)
    monkeypatch.setattr(exact, "QML_MATRIX_MAX_QUBITS", 4)
    energy, method = exact.exact_ground_energy(H, range(5), with_method=True)
    assert method == "dense (via sparse)"
    assert abs(energy - reference) <= 1e-12
    assert abs(energy - entry.exact_ground_energy) <= TOL_HA
    monkeypatch.setattr(exact, "EXACT_DENSE_MAX_QUBITS", 4)
    energy, method = exact.exact_ground_energy(H, range(5), with_method=True)
    assert method == "sparse" and abs(energy - reference) <= 1e-10
    # The of_bridge check's cut-off goes to the sparse solver the same way.
    assert abs(exact.exact_ground_energy(H, dense_max_qubits=4) - reference) <= 1e-10
    with pytest.raises(ValueError, match="acts on no wire"):
        exact.exact_ground_energy(H, [])


_COOPERLAKE = textwrap.dedent("""
    import json, sys
    from qencode_nb import entry as entries
    from qencode_nb.hamiltonian.hamcheck import check_entry
    r = check_entry(entries.load(sys.argv[1]), cache_dir=sys.argv[2])
    print(json.dumps([r.coeffs_bit_identical, r.ground_energy_diff, r.cache_key]))
""")


@pytest.mark.hostkind
def test_cooperlake_rebuild_is_bit_identical_and_keyed_apart(tmp_path, monkeypatch):
    """With OPENBLAS_CORETYPE=Cooperlake (before numpy loads) LiH PAR/HEA's
    rebuilt coefficients and exact ground energy equal the entry's to the bit;
    without it they move by ~1e-15 Ha.  The two runs get different keys."""
    from qencode_nb.hamiltonian import cache
    if coretype_missing("Cooperlake"):
        pytest.skip(coretype_missing("Cooperlake"))
    path = str(DB / ENTRIES["LiH_PAR_HEA"])
    env = dict(SUBPROCESS_ENV, OPENBLAS_CORETYPE="Cooperlake")
    out = subprocess.run([sys.executable, "-c", _COOPERLAKE, path, str(tmp_path)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    bit_identical, d_exact, key = json.loads(out.stdout.strip().splitlines()[-1])
    assert bit_identical is True and d_exact == 0.0
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    assert key != cache.cache_key(**_fields("LiH_PAR_HEA"))  # same problem, no coretype
    assert cache.load(key, tmp_path) is not None
