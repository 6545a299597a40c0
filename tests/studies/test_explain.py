"""The explain search (issue 35, item 4): which environment re-runs an entry to its
published bits, searched nearest the recorded environment first, stopping at the first
bit-identical run.

The grid is checked without running anything; one small search runs for real on a v4
entry in the current stack (a budget of 2 runs); the v3 stack's search, which must stop
at its first run (the recorded stack and the v3 triple reproduce H2 STO-3G bit for bit),
is in ``tests/studies/test_recorded_stack.py`` (network).
"""

from __future__ import annotations

import pytest

from conftest import SHARED_DB
from qencode_nb.errors import ParameterError, PinError
from qencode_nb.notebook.blas_profiles import (COPIES, REFERENCE, cpu_flags, kernel_spec,
                                               resolve, runnable_coretypes)
from qencode_nb.studies.explain import L2_SIZES, NEW_AXES, explain, grid, stacks

H2_V4 = sorted(SHARED_DB.glob("H2_ccpvdz_JW_HEA_v4*.json"))[0]


def _choices(monkeypatch, specs: dict, why: dict | None = None):
    """Stand in for the stack choice (no uv, no network): ``{word: kernelspec}``."""
    from qencode_nb.environment import choice

    def choose(stack, targets, db=None, *, log=None):
        return {t: choice.Choice(stack, kernelspec=specs.get(stack),
                                 why=(why or {}).get(stack)) for t in targets}

    monkeypatch.setattr(choice, "choose", choose)


def test_each_stack_is_searched_once_and_one_that_cannot_run_is_left_out(monkeypatch):
    _choices(monkeypatch, {"recorded": "qencode-nb-v4-dated",
                           "recorded-today": "qencode-nb-v4-today"})
    assert stacks(str(H2_V4)) == {"recorded": "qencode-nb-v4-dated",
                                  "recorded-today": "qencode-nb-v4-today", "current": None}
    # a lock this environment holds: the recorded stack is this environment, once
    _choices(monkeypatch, {"recorded-today": "qencode-nb-v4-today"})
    assert stacks(str(H2_V4)) == {"recorded": None, "recorded-today": "qencode-nb-v4-today"}
    # dated and undated resolve alike: the same kernelspec, once
    _choices(monkeypatch, {"recorded": "qencode-nb-v3-x", "recorded-today": "qencode-nb-v3-x"})
    assert stacks(str(H2_V4)) == {"recorded": "qencode-nb-v3-x", "current": None}
    said = []
    _choices(monkeypatch, {}, why={"recorded": "stack v3-x could not be built",
                                   "recorded-today": "stack v3-y could not be built"})
    assert stacks(str(H2_V4), log=said.append) == {"current": None}
    assert said[0] == ("explain: the recorded stack is left out: stack v3-x could not be "
                       "built")


@pytest.mark.hostkind
def test_the_grid_starts_at_the_recorded_environment_and_moves_one_axis_at_a_time(monkeypatch):
    _choices(monkeypatch, {"recorded": "qencode-nb-v4-dated",
                           "recorded-today": "qencode-nb-v4-today"})
    configs, _ = grid(str(H2_V4))
    ref = resolve("reference")     # v4: the reference triple
    assert list(dict.fromkeys(c["stack"] for c in configs)) == [
        "recorded", "recorded-today", "current"]
    first = configs[0]
    assert first["changed"] == [] and first["threads"] == 1 and first["l2"] is None
    assert (first["stack"], first["kernelspec"]) == ("recorded", "qencode-nb-v4-dated")
    assert first["kernels"] == {c: ref.coretypes[c] for c in COPIES}
    assert first["avx512"] is (not ref.numpy_disable)
    distances = [len(c["changed"]) for c in configs]
    assert distances == sorted(distances) and distances[1] == 1
    # the new axes first, one at a time beside the baseline: the stacks, then the L2 sizes
    near = [(c["changed"], c["stack"], c["l2"]) for c in configs[1:3 + len(L2_SIZES)]]
    assert near == [(["stack"], "recorded-today", None), (["stack"], "current", None)] + [
        (["L2 size"], "recorded", size) for size in L2_SIZES]
    for distance in set(distances):         # at every distance the new axes come first
        old = [sum(a not in NEW_AXES for a in c["changed"]) for c in configs
               if len(c["changed"]) == distance]
        assert old == sorted(old)
    # one copy's kernel at a time, over the kernels this CPU runs
    runnable = runnable_coretypes()
    singles = [c for c in configs if c["changed"] == ["numpy kernel"]]
    assert sorted(c["kernels"]["numpy"] for c in singles) == sorted(
        k for k in runnable if k != ref.coretypes["numpy"])
    assert not any(sum(c["kernels"][x] != first["kernels"][x] for x in COPIES) > 1
                   for c in configs)
    loops = (2 if "avx512f" in cpu_flags() else 1)
    assert len(configs) == 3 * (1 + 3 * (len(runnable) - 1)) * loops * 2 * (1 + len(L2_SIZES))
    assert len({(c["stack"], kernel_spec(c["kernels"], c["avx512"], c["l2"]), c["threads"])
                for c in configs}) == len(configs)


def test_a_configuration_becomes_its_stack_and_kernel_spec():
    from qencode_nb.studies.explain import _params, describe

    kernels = {"numpy": "Haswell", "scipy": "Haswell", "pyscf": "Prescott"}
    config = {"stack": "recorded-today", "kernels": kernels, "avx512": True, "threads": 2,
              "l2": 512}
    assert _params(config) == {
        "blas_threads": 2, "stack": "recorded-today",
        "blas_coretype": "numpy=Haswell,scipy=Haswell,pyscf=Prescott,l2=512"}
    assert "stack" not in _params({**config, "stack": "current", "l2": None})
    row = {"stack": "recorded", "numpy_kernel": "Haswell", "scipy_kernel": "Haswell",
           "pyscf_kernel": "Prescott", "numpy_avx512": "on", "blas_threads": 1}
    assert describe({**row, "l2_size": "unset"}).endswith("loops on, 1 thread")
    assert describe({**row, "l2_size": "512"}).endswith("1 thread, OPENBLAS_L2_SIZE=512")


def test_a_kernel_spec_sets_the_l2_size_for_every_copy_at_launch():
    from qencode_nb.executor.papermill_engine import kernel_environment
    from qencode_nb.notebook.pins import profile_environment

    kernels = {"numpy": "Prescott", "scipy": "Prescott", "pyscf": "Prescott"}
    spec = kernel_spec(kernels, l2=512)
    assert spec == "numpy=Prescott,scipy=Prescott,pyscf=Prescott,l2=512"
    r = resolve(spec)
    assert (r.requested, r.l2, r.to_record()["l2"]) == (spec, 512, 512)
    assert "l2" not in resolve(kernel_spec(kernels)).to_record()     # records as before
    # in the kernel's launch environment, before numpy loads; set with numpy's copy, first
    assert kernel_environment(1, spec, base={})["OPENBLAS_L2_SIZE"] == "512"
    assert profile_environment(r, "numpy")["OPENBLAS_L2_SIZE"] == "512"
    # without l2 an inherited value stays as the host set it
    assert "OPENBLAS_L2_SIZE" not in kernel_environment(1, kernel_spec(kernels), base={})
    assert kernel_environment(1, kernel_spec(kernels),
                              base={"OPENBLAS_L2_SIZE": "256"})["OPENBLAS_L2_SIZE"] == "256"
    for bad in ("0", "-1", "big", "2097152"):
        with pytest.raises(PinError, match=f"l2={bad!r} is not accepted; accepted: the L2 "
                                           "size in KiB, an integer from 1 to 1048576"):
            resolve(f"{kernel_spec(kernels)},l2={bad}")


@pytest.mark.hostkind
def test_openblas_runs_pinned_with_an_l2_size_and_reports_its_kernels():
    """A real process: the pin sets OPENBLAS_L2_SIZE before the copies load, every copy
    loads and runs a GEMM, threadpoolctl still names each copy's kernel, and the
    provenance records the value in force (no speed is asserted)."""
    import json
    import os
    import subprocess
    import sys

    ref = resolve("reference")
    spec = kernel_spec(ref.coretypes, not ref.numpy_disable, l2=2048)
    code = ("import json\n"
            "from qencode_nb.notebook.pins import blas_report, pin\n"
            f"r = pin(1, {spec!r})\n"
            "import numpy as np\n"
            "import scipy.linalg.blas as b\n"
            "a = np.arange(400.0 * 400).reshape(400, 400) / 1e5\n"
            "ok = bool(np.allclose(a @ a, b.dgemm(1.0, a, a)))\n"
            "print(json.dumps({'kernels': r['profile']['kernels'], 'l2': r['profile']['l2'],"
            " 'report': blas_report()['OPENBLAS_L2_SIZE'], 'ok': ok,"
            " 'mismatches': r['kernel_mismatches']}))\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_L2_SIZE"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert (got["l2"], got["report"], got["ok"]) == (2048, "2048", True)
    assert "numpy" in got["kernels"] and not got["mismatches"]
    assert {c: k.lower() for c, k in got["kernels"].items() if c in COPIES} == {
        c: ref.coretypes[c].lower() for c in COPIES if c in got["kernels"]}


def test_a_kernel_spec_names_every_copy():
    spec = kernel_spec({"numpy": "Haswell", "scipy": "Haswell", "pyscf": "Prescott"}, False)
    assert spec == "numpy=Haswell,scipy=Haswell,pyscf=Prescott,numpy_avx512=off"
    r = resolve(spec)
    assert (r.requested, r.used) == (spec, spec)
    assert r.coretypes == {"numpy": "Haswell", "scipy": "Haswell", "pyscf": "Prescott"}
    assert r.numpy_disable and resolve("numpy=Haswell,scipy=Haswell,pyscf=Haswell"
                                       ).numpy_disable == ()
    with pytest.raises(PinError, match="no kernel for pyscf; a kernel spec names one for "
                                       "every copy"):
        resolve("numpy=Haswell,scipy=Haswell")
    with pytest.raises(PinError, match="'blas' is not accepted in a kernel spec; accepted: "
                                       "numpy, scipy, pyscf, numpy_avx512, l2"):
        resolve("blas=Haswell")
    with pytest.raises(PinError, match="numpy_avx512='maybe' is not accepted; accepted: on, off"):
        resolve("numpy=Haswell,scipy=Haswell,pyscf=Haswell,numpy_avx512=maybe")


def test_a_budget_is_a_positive_count():
    with pytest.raises(ParameterError, match=r"budget 0 is not accepted for one entry's "
                                             r"search; accepted: an integer >= 1 \(0, no "
                                             r"search, only with a sweep folder"):
        explain(str(H2_V4), budget=0)
    with pytest.raises(ParameterError, match="budget -1 is not accepted; accepted: an "
                                             "integer >= 1"):
        explain(str(H2_V4), budget=-1)


@pytest.mark.notebook
def test_a_search_runs_nearest_first_and_stops_at_the_first_exact_run(tmp_path):
    result = explain(str(H2_V4), tmp_path / "explain", budget=2, progress=False)
    table = result.table
    assert set(table["status"]) == {"done"}, table["failure"].tolist()
    assert (tmp_path / "explain" / "explain.csv").is_file()
    assert (tmp_path / "explain" / "explain.png").is_file()
    baseline = table[table["rank"] == 0].iloc[0]
    assert baseline["changed"] == "none (baseline)"
    # the recorded stack first (dated; this environment where it holds the lock, or the
    # current one where it cannot be resolved offline), no L2 size set
    assert baseline["stack"] in ("recorded", "current") and baseline["l2_size"] == "unset"
    # the measured kernels are the ones asked for (the pin checks every copy)
    ref = resolve("reference")     # v4: the reference triple
    assert baseline["kernels_measured"] == ",".join(
        f"{c}={ref.coretypes[c]}" for c in ("numpy", "scipy", "pyscf"))
    if baseline["identical"] == True:  # noqa: E712 - stops at once: nothing more is run
        assert len(table) == 1
        assert result.finding.startswith(f"reproduced bit for bit by {baseline['stack']} stack, "
                                         + kernel_spec(ref.coretypes) + ", numpy AVX-512 "
                                         f"loops {baseline['numpy_avx512']}, 1 thread (run "
                                         "1 of 1 tried")
        assert result.reproduced["rank"] == 0
    else:                                   # the budget is the bound
        assert len(table) == 2 and not table["identical"].any()
        assert result.finding.startswith("not reproduced by any of 2 configurations (of a "
                                         f"grid of {result.grid}, budget 2); closest: ")
        assert int(table["ulps"].iloc[0]) <= int(table["ulps"].iloc[1])


@pytest.mark.parametrize("args,said", [
    (["--kernelspecs", "python3"], "--explain searches the stacks itself"),
    (["--budget", "0"], "qencode-nb: --budget 0 is not accepted for one entry's search; "
                        "accepted: an integer >= 1 (0, no search, only with a sweep folder"),
    (["--budget", "-2"], "qencode-nb: --budget -2 is not accepted; accepted: an integer >= 1"),
])
def test_the_cli_refuses_a_search_it_cannot_run(args, said, capsys, tmp_path):
    from qencode_nb.cli import main

    assert main(["study", "environments", str(H2_V4), "--explain", "--out",
                 str(tmp_path / "x"), *args]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
