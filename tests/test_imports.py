"""What a warm audit imports: on a rebuild-cache hit the problem stage
(``rebuild`` + ``hamiltonian_check``) loads neither PennyLane nor OpenFermion nor
PySCF's CASCI/CASSCF solvers, and records exactly what the PennyLane path records.
PySCF's OpenBLAS copy is loaded: the cache key holds its kernel, measured (issue 36);
it is loaded through PySCF's ``libnp_helper`` library (``blas_copies.load_copy``), so a
hit need not import ``pyscf.lib`` for it.

Real shared entries (../shared/qencode-v4/db, never copied); the cache lives in a
pytest temporary folder.  Like tests/test_layout.py's numpy-free import check, the
imports are observed in fresh interpreters.  No test asserts a wall-clock time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import H2_JW_UCCSD, ROOT, SHARED_DB, pinned_env  # noqa: E402

LIH_JW_HEA = SHARED_DB / "LiH_ccpvdz_JW_HEA_v4_tapered__sha256_f044f66bd4bc8376.json"
H2_BK_HEA = SHARED_DB / "H2_ccpvdz_BK_HEA_v4_tapered__sha256_6e206ec6f1f02ea4.json"
HEAVY = ("pennylane", "openfermion", "pyscf.mcscf", "pyscf.fci")

# argv: mode ("warm": cold build, then a hit with the operators built eagerly, i.e. the
# PennyLane path; "hit": a hit only), then entry paths.  Prints one JSON line.
_STAGE = textwrap.dedent("""
    import json, sys
    from qencode_nb.entry import load
    from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild

    mode, paths = sys.argv[1], sys.argv[2:]
    out = {}
    for path in paths:
        entry = load(path)
        row = {}
        if mode == "warm":
            import dataclasses
            from qencode_nb.hamiltonian.tapering import TaperResult

            rebuilt = rebuild(entry)
            row["cold_hit"] = rebuilt.chemistry.cache_hit
            row["cold"] = hamiltonian_check(entry, rebuilt).to_record()
            rebuilt = rebuild(entry)              # a hit: restored, operators lazy
            names = [f.name for f in dataclasses.fields(TaperResult) if f.init]
            plain = TaperResult(**{n: getattr(rebuilt.tapering, n) for n in names})  # now
            row["eager_hit"] = rebuilt.chemistry.cache_hit
            row["eager"] = hamiltonian_check(
                entry, dataclasses.replace(rebuilt, tapering=plain)).to_record()
        else:
            rebuilt = rebuild(entry)
            row["hit"] = rebuilt.chemistry.cache_hit
            row["record"] = hamiltonian_check(entry, rebuilt).to_record()
            row["heavy"] = sorted({".".join(m.split(".")[:2]) for m in sys.modules}
                                  & {"pennylane", "openfermion", "pyscf.mcscf", "pyscf.fci"})
        out[path] = row
    print(json.dumps(out, allow_nan=True))
""")


def _run(mode, paths, cache_dir):
    env = pinned_env(1, PYTHONPATH=str(ROOT), QENCODE_NB_CACHE=str(cache_dir))
    out = subprocess.run([sys.executable, "-c", _STAGE, mode, *map(str, paths)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def entries():
    paths = [LIH_JW_HEA, H2_JW_UCCSD]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        pytest.fail(f"shared QEncode entries missing: {missing}")
    return paths


def test_a_cache_hit_imports_no_pennylane_openfermion_or_pyscf_solver(entries, tmp_path):
    warm = _run("warm", entries, tmp_path)          # fills the cache (a normal run)
    hit = _run("hit", entries, tmp_path)            # a fresh interpreter, warm cache
    for path in map(str, entries):
        w, h = warm[path], hit[path]
        assert w["cold_hit"] is False and w["eager_hit"] is True and h["hit"] is True
        assert h["heavy"] == [], f"{path}: a cache hit imported {h['heavy']}"
        # The record equals the PennyLane path's (operators built) ...
        assert h["record"] == w["eager"]
        # ... and the cold build's, but for the cache fact.
        assert h["record"]["cache_hit"] is True and w["cold"]["cache_hit"] is False
        assert h["record"]["cache_status"] == "hit" and w["cold"]["cache_status"] == "absent"
        assert {**h["record"], "cache_hit": False, "cache_status": "absent"} == w["cold"]
        assert h["record"]["ground_method"] == "given"
        assert h["record"]["stored_ground_method"].startswith("reused rebuilt ground")


@pytest.mark.parametrize("entry_path", [LIH_JW_HEA, H2_BK_HEA], ids=["LiH_JW", "H2_BK"])
def test_lazy_operators_equal_a_fresh_rebuild(entry_path, tmp_path):
    import pennylane as qml

    from qencode_nb.entry import load
    from qencode_nb.hamiltonian import cache
    from qencode_nb.hamiltonian.cache_payload import RestoredTaperResult
    from qencode_nb.hamiltonian.pauli import to_pauli_terms
    from qencode_nb.hamiltonian.rebuild import rebuild_tapered

    fields = cache.entry_fields(load(entry_path))
    source = fields.pop("hamiltonian_source")
    _, fresh = rebuild_tapered(**fields)
    cache.cached_rebuild(**fields, hamiltonian_source=source, cache_dir=tmp_path)
    chem, tap = cache.cached_rebuild(**fields, hamiltonian_source=source,
                                     cache_dir=tmp_path)
    assert chem.cache_hit and isinstance(tap, RestoredTaperResult)
    lazy = ("H_tapered", "generators", "paulixops")
    assert not set(lazy) & set(vars(tap)), "operators built before they were read"

    # The terms, without PennyLane, equal the fresh operator's (values and types).
    terms = tap.tapered_terms()
    assert terms == fresh.tapered_terms()
    assert [type(c) for _, c in terms] == [type(c) for _, c in fresh.tapered_terms()]
    assert all(isinstance(w, dict) and all(isinstance(k, int) and v in "XYZ"
                                           for k, v in w.items()) for w, _ in terms)
    assert tap.tapered_wires() == fresh.tapered_wires() == list(range(tap.n_qubits_tapered))
    assert not set(lazy) & set(vars(tap))

    # Built on first read, once, equal to the fresh rebuild.
    H = tap.H_tapered
    assert tap.H_tapered is H and "H_tapered" in vars(tap)
    assert qml.equal(H, fresh.H_tapered)
    assert list(H.pauli_rep.items()) == list(fresh.H_tapered.pauli_rep.items())
    assert tap.tapered_wires() == sorted(H.wires)
    assert [(t["pauli_string"], t["coefficient"]) for t in to_pauli_terms(H)] == \
        [(t["pauli_string"], t["coefficient"]) for t in to_pauli_terms(fresh.H_tapered)]
    assert len(tap.generators) == len(fresh.generators) == tap.num_symmetries
    for a, b in zip(tap.generators + tap.paulixops, fresh.generators + fresh.paulixops):
        assert qml.equal(a, b) and a.pauli_rep == b.pauli_rep


@pytest.mark.parametrize("terms, wire_order", [
    ([["I", 0.5, 0.0], ["Z1", 0.25, 0.0]], [0, 1, 2, 3]),   # identity spans wire_order
    ([["I", 0.5, 0.0], ["Z1", 0.25, 0.0]], None),
    ([["X0Y2", 0.5, 0.0], ["Z1", -0.25, 0.0]], [0, 1, 2, 3]),  # no identity: words only
    ([["Z3", 0.5, 0.0]], [0, 1, 2, 3]),                     # one term
    ([["I", 1.0, 0.0]], [0, 1]),                             # identity alone, coeff 1
    ([["X0", 0.5, 1e-3], ["I", -0.1, 0.0]], [0, 1]),         # complex
])
def test_restored_wires_and_terms_follow_pennylane(terms, wire_order):
    """tapered_wires()/tapered_terms() of a restored result, computed without
    PennyLane, equal what the built operator says."""
    from qencode_nb.hamiltonian.cache_payload import RestoredTaperResult
    from qencode_nb.hamiltonian.tapering import TaperResult

    spec = {"terms": terms, "wire_order": wire_order}
    tap = RestoredTaperResult({"H_tapered": spec, "generators": [], "paulixops": []},
                              hf_tapered=[], z2_sectors=[], n_qubits_full=4,
                              n_qubits_tapered=4, e_sector_ground_ha=0.0)
    built = tap.H_tapered
    assert tap.tapered_wires() == sorted(built.wires)
    plain = TaperResult(H_tapered=built, hf_tapered=[], generators=[], paulixops=[],
                        z2_sectors=[], n_qubits_full=4, n_qubits_tapered=4,
                        e_sector_ground_ha=0.0)
    assert tap.tapered_terms() == plain.tapered_terms()
    assert [type(c) for _, c in tap.tapered_terms()] == \
        [type(c) for _, c in plain.tapered_terms()]


def test_bad_stored_pauli_string_is_corrupt_on_load():
    from qencode_nb.errors import CacheCorrupt
    from qencode_nb.hamiltonian.cache_payload import restore

    payload = {"taper": {"H_tapered": {"terms": [["Q9", 1.0, 0.0]], "wire_order": None},
                         "generators": [], "paulixops": [], "hf_tapered": [],
                         "hf_tapered_dtype": "int64", "sectors": [], "n_qubits_full": 1,
                         "n_qubits_tapered": 1}}
    with pytest.raises(CacheCorrupt, match="cannot be rebuilt"):
        restore(payload)
    payload["taper"]["H_tapered"]["terms"] = [["Z0", 1.0, 0.0], ["Z0", 2.0, 0.0]]
    with pytest.raises(CacheCorrupt, match="appears twice"):
        restore(payload)
    payload["taper"]["H_tapered"]["terms"] = [["Z0", 1.0, 0.0], ["Z1", 2.0, 0.0]]
    with pytest.raises(CacheCorrupt, match="acts on 2 wires, file says 1"):
        restore(payload)


# A fast-engine audit's stages (replay, then re-run) in a fresh interpreter; argv:
# entry paths.  Prints one JSON line: per entry, replay and re-run outcome and the
# heavy libraries loaded.
_FAST = textwrap.dedent("""
    import json, sys
    from qencode_nb.entry import load
    from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild
    from qencode_nb.rerun.problem import build_problem
    from qencode_nb.rerun.rerun import rerun
    from qencode_nb.rerun.replay import replay

    out = {}
    for path in sys.argv[1:]:
        entry = load(path)
        rebuilt = rebuild(entry)
        problem = build_problem(entry, rebuilt, "fast", hamiltonian_check(entry, rebuilt))
        r = replay(entry, problem)
        x = rerun(entry, problem)
        out[path] = {"hit": rebuilt.chemistry.cache_hit, "replay": r.status, "engine": r.engine,
                     "rerun_backend": x.config["backend"],
                     "heavy": sorted({".".join(m.split(".")[:2]) for m in sys.modules}
                                     & {"pennylane", "openfermion", "pyscf.mcscf",
                                        "pyscf.fci"})}
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_a_fast_engine_audit_on_a_warm_cache_imports_no_pennylane_or_openfermion(tmp_path):
    """HEA, tapered UCCSD and a Pauli-word ADAPT pool: after one run has filled
    the caches (rebuild, pool words, stored ground energy), a fresh interpreter
    replays and re-runs on the compiled statevector engine with neither
    PennyLane, OpenFermion nor PySCF's solvers loaded (issue 14, item 5; PySCF's core
    library is, for its OpenBLAS kernel in the cache key, issue 36)."""
    paths = [LIH_JW_HEA, H2_JW_UCCSD,
             SHARED_DB / "H4_ccpvdz_JW_ADAPT_v4_tapered__sha256_39f9134a722ad612.json"]
    env = pinned_env(1, PYTHONPATH=str(ROOT), QENCODE_NB_CACHE=str(tmp_path))
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _FAST, *map(str, paths)], cwd=ROOT,
                             env=env, capture_output=True, text=True, timeout=1800)
        assert out.returncode == 0, out.stderr[-3000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    for path in map(str, paths):
        assert cold[path]["hit"] is False and warm[path]["hit"] is True
        assert warm[path]["replay"] == "pass"
        assert warm[path]["engine"] == warm[path]["rerun_backend"] == "numba-statevector"
        assert warm[path]["heavy"] == [], f"{path}: imported {warm[path]['heavy']}"


def test_a_replay_figure_loads_no_matplotlib():
    """A replay has no re-run trace: the audit's figure cell draws nothing and loads no
    matplotlib (its import and style cost a warm replay about 75 ms); a trace with
    energies is drawn (a matplotlib Figure).  Observed in a fresh interpreter."""
    code = textwrap.dedent("""
        import json, sys
        from qencode_nb.verdict.figure import error_trace_plot
        none = error_trace_plot({"mode": "replay", "rerun_trace": {"energies_ha": []}})
        out = {"none": none is None, "mpl_after_replay": "matplotlib" in sys.modules}
        fig = error_trace_plot({"rerun_trace": {"energies_ha": [-1.0, -1.1],
                                                "e_ref_ha": -1.2}, "threshold_mha": 1.6})
        out["drawn"] = type(fig).__name__
        print(json.dumps(out))
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, env=pinned_env(1, PYTHONPATH=str(ROOT)))
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"none": True, "mpl_after_replay": False, "drawn": "Figure"}
