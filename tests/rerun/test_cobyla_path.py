"""A COBYLA restart's stored path (qencode_nb/rerun/cobyla_path.py): taken only when every
energy of it is recomputed to the bit, with the result, evaluation count and trace of a
run of scipy's COBYLA; any difference, a damaged file or ``QENCODE_NB_COBYLA_PATHS=off``
runs COBYLA.  The oracle is scipy's COBYLA run without paths on the same energy."""

from __future__ import annotations

import numpy as np
import pytest

from qencode_nb.rerun import cobyla_path
from qencode_nb.rerun.cobyla_path import CobylaPaths
from qencode_nb.rerun.progress import Progress
from qencode_nb.rerun.vqe import run_vqe

#: A 12-parameter energy with a known minimum of -6 Ha at θ_i = 0.1 i: COBYLA's path is
#: long enough (hundreds of evaluations) to be worth checking point by point.
N = 12


class Energy:
    """``-sum_i cos(θ_i - 0.1 i) / 2`` (Ha), counting calls; ``shift`` (Ha) is added
    away from the start's simplex (``sum |θ_i| > 0.5``: COBYLA's first ``N + 1`` points
    are the zeros and one step of 0.5 along each axis), so a second environment can
    differ in the last bits after the first evaluations."""

    def __init__(self, shift: float = 0.0):
        self.calls, self.shift = 0, shift

    def __call__(self, p):
        self.calls += 1
        value = float(-0.5 * np.cos(np.asarray(p) - 0.1 * np.arange(N)).sum())
        return value + (self.shift if np.abs(p).sum() > 0.5 else 0.0)


MATERIAL = {"format": 2, "kind": "vqe", "entry_sha256": "test", "optimizer": "cobyla",
            "threads": {"OMP_NUM_THREADS": "1"}, "numeric": {"kernels": "A"}}


def _run(energy, paths, *, restarts: int = 2, progress=None):
    wrapped = progress.wrap(energy) if progress is not None else energy
    return run_vqe(wrapped, N, optimizer="cobyla", max_iterations=400, restarts=restarts,
                   seed=3, e_target=None, progress=progress, paths=paths)


def _fields(out):
    return (np.float64(out.best_energy).tobytes(), np.array(out.best_params).tobytes(),
            out.nfev, out.restart_nfev, [np.float64(e).tobytes() for e in out.restart_energies])


@pytest.fixture
def keep_every_path(monkeypatch):
    """Every restart keeps its path (the threshold is minutes for real entries)."""
    monkeypatch.setattr("qencode_nb.rules.COBYLA_PATH_MIN_S", 0.0)
    monkeypatch.delenv(cobyla_path.ENV_VAR, raising=False)


def test_a_verified_path_gives_what_cobyla_gives_without_running_it(tmp_path, keep_every_path,
                                                                      monkeypatch):
    oracle = _run(Energy(), None)
    first = CobylaPaths(MATERIAL, cache_dir=tmp_path)
    assert _fields(_run(Energy(), first)) == _fields(oracle)
    assert (first.ran, first.stored, first.verified) == (2, 2, 0)
    assert len(list((tmp_path / cobyla_path.SUBDIR).glob("*.npz"))) == 2

    # another numeric environment (the key leaves it out): COBYLA must not run again
    import scipy.optimize

    def no_cobyla(*args, **kwargs):
        raise AssertionError("scipy's minimize ran for a verified path")

    monkeypatch.setattr(scipy.optimize, "minimize", no_cobyla)
    other = dict(MATERIAL, threads={"OMP_NUM_THREADS": "2"}, numeric={"kernels": "B"})
    progress, energy = Progress(-6.0, 0.25, 2, 400), Energy()
    second = CobylaPaths(other, cache_dir=tmp_path)
    out = _run(energy, second, progress=progress)
    assert _fields(out) == _fields(oracle)
    assert (second.ran, second.verified, second.mismatches) == (0, 2, [])
    # every point was evaluated here, and the trace is the one a run leaves
    assert energy.calls == oracle.nfev
    monkeypatch.undo()
    progress_run = Progress(-6.0, 0.25, 2, 400)
    _run(Energy(), None, progress=progress_run)
    assert progress.energies == progress_run.energies
    assert progress.restart_starts == progress_run.restart_starts


def test_one_differing_bit_runs_cobyla(tmp_path, keep_every_path):
    _run(Energy(), CobylaPaths(MATERIAL, cache_dir=tmp_path))
    # past the start's simplex every energy differs by one ulp of 6 Ha
    paths = CobylaPaths(MATERIAL, cache_dir=tmp_path)
    out = _run(Energy(shift=np.spacing(6.0)), paths, restarts=1)
    oracle = _run(Energy(shift=np.spacing(6.0)), None, restarts=1)
    assert _fields(out) == _fields(oracle) and _fields(out) != _fields(_run(Energy(), None,
                                                                              restarts=1))
    assert (paths.verified, paths.ran) == (0, 1)
    import re

    found = re.fullmatch(r"restart 0: evaluation (\d+) of (\d+) gave \S+ Ha, the stored "
                         r"path \S+ Ha; COBYLA ran", paths.mismatches[0])
    assert found and 1 < int(found[1]) <= int(found[2]), paths.mismatches


def test_a_damaged_path_or_paths_off_runs_cobyla(tmp_path, keep_every_path, monkeypatch):
    oracle = _run(Energy(), None, restarts=1)
    _run(Energy(), CobylaPaths(MATERIAL, cache_dir=tmp_path), restarts=1)
    (stored,) = (tmp_path / cobyla_path.SUBDIR).glob("*.npz")
    stored.write_bytes(stored.read_bytes()[:200])     # truncated
    paths = CobylaPaths(MATERIAL, cache_dir=tmp_path)
    assert _fields(_run(Energy(), paths, restarts=1)) == _fields(oracle)
    assert (paths.verified, paths.ran) == (0, 1)

    monkeypatch.setenv(cobyla_path.ENV_VAR, "off")
    off = CobylaPaths(MATERIAL, cache_dir=tmp_path)
    assert _fields(_run(Energy(), off, restarts=1)) == _fields(oracle)
    assert off.record() == {"enabled": False, "verified": 0, "ran": 1, "stored": 0,
                            "mismatches": [], "why_off": "off"}


def test_a_short_restart_keeps_no_path(tmp_path, monkeypatch):
    monkeypatch.delenv(cobyla_path.ENV_VAR, raising=False)
    monkeypatch.setattr("qencode_nb.rules.COBYLA_PATH_MIN_S", 3600.0)
    paths = CobylaPaths(MATERIAL, cache_dir=tmp_path)
    _run(Energy(), paths, restarts=1)
    assert (paths.ran, paths.stored) == (1, 0)
    assert not (tmp_path / cobyla_path.SUBDIR).exists()


def test_the_key_names_the_restart_start_and_cobyla_build_not_the_environment():
    x0 = np.zeros(N)
    a = cobyla_path.key_material(MATERIAL, 0, x0)
    b = cobyla_path.key_material(dict(MATERIAL, numeric={"kernels": "B"}), 0, x0)
    assert a == b and "numeric" not in a["run"] and "threads" not in a["run"]
    assert cobyla_path.key_material(MATERIAL, 1, x0) != a
    assert cobyla_path.key_material(MATERIAL, 0, x0 + 1e-300) != a
    assert len(a["cobyla_sha256"]) == 64 and a["scipy"]


@pytest.mark.parametrize("engine", [None, "fast"])
def test_a_real_entry_rerun_from_its_verified_path_is_the_rerun(tmp_path, keep_every_path,
                                                                   monkeypatch, engine):
    """H2 cc-pVDZ JW/UCCSD (v4, COBYLA, ../shared) on the recorded qnode backend and on
    the fast engine: the second re-run takes the path the first stored, and its record
    (energy, angles, nfev, energy calls, trace) is the first's, bit for bit."""
    from conftest import H2_JW_UCCSD
    from qencode_nb.entry import load
    from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild
    from qencode_nb.rerun.problem import build_problem
    from qencode_nb.rerun.rerun import rerun

    entry = load(H2_JW_UCCSD)
    rebuilt = rebuild(entry)
    problem = build_problem(entry, rebuilt, engine, hamiltonian_check(entry, rebuilt),
                            rerun=True)
    done = rerun(entry, problem, checkpoint_dir=tmp_path)
    first = done.to_record()
    import scipy.optimize

    def no_cobyla(*args, **kwargs):
        raise AssertionError("scipy's minimize ran for a verified path")

    monkeypatch.setattr(scipy.optimize, "minimize", no_cobyla)
    again = rerun(entry, problem, checkpoint_dir=tmp_path)
    second = again.to_record()
    runs = entry.restarts_requested if not first["stopped_early"] else first["restarts_run"]
    assert first.pop("cobyla_paths") == {"enabled": True, "verified": 0, "ran": runs,
                                         "stored": runs, "mismatches": []}
    assert second.pop("cobyla_paths") == {"enabled": True, "verified": runs, "ran": 0,
                                          "stored": 0, "mismatches": []}
    assert json_bits(second) == json_bits(first)
    assert json_bits(again.trace) == json_bits(done.trace) and done.trace


def json_bits(record) -> str:
    """A record as JSON with every float written exactly (``float.hex``)."""
    import json

    def exact(value):
        if isinstance(value, float):
            return value.hex()
        if isinstance(value, dict):
            return {k: exact(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [exact(v) for v in value]
        return value

    return json.dumps(exact(record), sort_keys=True, default=str)


def test_only_an_entry_whose_cobyla_keeps_paths_runs_its_perturbations_apart():
    """The v4 database's one such entry is N2 JW/UCCSD (10,000 COBYLA steps at 404
    parameters); benzene JW/HEA (COBYLA, 30 restarts of 63 parameters) and the ADAPT
    entries run side by side as before."""
    from conftest import H2_JW_UCCSD, SHARED_DB
    from qencode_nb.batch.pool import cobyla_path_key
    from qencode_nb.entry import load

    n2 = SHARED_DB / "N2_ccpvdz_JW_UCCSD_v4_casscf_tapered__sha256_5912a448b32eaa07.json"
    assert cobyla_path_key(str(n2)) == load(n2).sha256
    for other in ("benzene_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_3d3de57a516e599d.json",
                  "H10_ccpvdz_JW_ADAPT_v4_casscf_tapered__sha256_d2701c2be739db5f.json"):
        assert cobyla_path_key(str(SHARED_DB / other)) is None
    assert cobyla_path_key(str(H2_JW_UCCSD)) is None
    assert cobyla_path_key("/no/such/entry.json") is None


def test_a_setting_that_is_not_on_or_off_is_refused_naming_the_variable(tmp_path, monkeypatch):
    from qencode_nb.errors import ParameterError

    monkeypatch.setenv(cobyla_path.ENV_VAR, "of")
    with pytest.raises(ParameterError, match="^QENCODE_NB_COBYLA_PATHS 'of' is not accepted; "
                                             "accepted: on, off$"):
        CobylaPaths(MATERIAL, cache_dir=tmp_path)
    monkeypatch.setenv(cobyla_path.ENV_VAR, "on")
    assert CobylaPaths(MATERIAL, cache_dir=tmp_path).enabled


def test_a_scipy_without_the_fortran_cobyla_keeps_no_path(tmp_path, keep_every_path,
                                                           monkeypatch):
    """scipy 1.16 and later (QEncode's v3 stack has 1.17) run PRIMA's Python port: its
    numpy linear algebra follows the kernels, so no path is kept or taken."""
    import scipy

    monkeypatch.setattr(scipy, "__version__", "1.17.0")
    assert cobyla_path.cobyla_build() is None
    paths = CobylaPaths(MATERIAL, cache_dir=tmp_path)
    assert _fields(_run(Energy(), paths, restarts=1)) == _fields(_run(Energy(), None,
                                                                      restarts=1))
    assert paths.record()["why_off"] == ("scipy 1.17.0 has no compiled Fortran COBYLA "
                                         "(1.16 and later run PRIMA's Python port)")
    assert (paths.ran, paths.stored) == (1, 0) and not (tmp_path / cobyla_path.SUBDIR).exists()
