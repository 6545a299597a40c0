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
from qencode_nb.studies.explain import explain, grid

H2_V4 = sorted(SHARED_DB.glob("H2_ccpvdz_JW_HEA_v4*.json"))[0]


@pytest.mark.hostkind
def test_the_grid_starts_at_the_recorded_environment_and_moves_one_axis_at_a_time():
    configs, base = grid(str(H2_V4))
    ref = resolve("reference", release="v4")
    # a v4 entry: the current stack is its recorded one, so no other stack is searched
    assert {c["stack"] for c in configs} == {"current"}
    first = configs[0]
    assert first["changed"] == [] and first["threads"] == 1
    assert first["kernels"] == {c: ref.coretypes[c] for c in COPIES}
    assert first["avx512"] is (not ref.numpy_disable)
    distances = [len(c["changed"]) for c in configs]
    assert distances == sorted(distances) and distances[1] == 1
    # one copy's kernel at a time, over the kernels this CPU runs
    runnable = runnable_coretypes()
    singles = [c for c in configs if c["changed"] == ["numpy kernel"]]
    assert sorted(c["kernels"]["numpy"] for c in singles) == sorted(
        k for k in runnable if k != ref.coretypes["numpy"])
    assert not any(sum(c["kernels"][x] != first["kernels"][x] for x in COPIES) > 1
                   for c in configs)
    loops = (2 if "avx512f" in cpu_flags() else 1)
    assert len(configs) == (1 + 3 * (len(runnable) - 1)) * loops * 2
    assert len({(c["stack"], kernel_spec(c["kernels"], c["avx512"]), c["threads"])
                for c in configs}) == len(configs)


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
                                       "numpy, scipy, pyscf, numpy_avx512"):
        resolve("blas=Haswell")
    with pytest.raises(PinError, match="numpy_avx512='maybe' is not accepted; accepted: on, off"):
        resolve("numpy=Haswell,scipy=Haswell,pyscf=Haswell,numpy_avx512=maybe")


def test_a_budget_is_a_positive_count():
    with pytest.raises(ParameterError, match="budget 0 is not accepted; accepted: an integer "
                                             ">= 1"):
        explain(str(H2_V4), budget=0)


@pytest.mark.notebook
def test_a_search_runs_nearest_first_and_stops_at_the_first_exact_run(tmp_path):
    result = explain(str(H2_V4), tmp_path / "explain", budget=2, progress=False)
    table = result.table
    assert set(table["status"]) == {"done"}, table["failure"].tolist()
    assert (tmp_path / "explain" / "explain.csv").is_file()
    assert (tmp_path / "explain" / "explain.png").is_file()
    baseline = table[table["rank"] == 0].iloc[0]
    assert baseline["changed"] == "none (baseline)"
    # the measured kernels are the ones asked for (the pin checks every copy)
    ref = resolve("reference", release="v4")
    assert baseline["kernels_measured"] == ",".join(
        f"{c}={ref.coretypes[c]}" for c in ("numpy", "scipy", "pyscf"))
    if baseline["identical"] == True:  # noqa: E712 - stops at once: nothing more is run
        assert len(table) == 1
        assert result.finding.startswith("reproduced bit for bit by current stack, "
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
    (["--budget", "0"], "qencode-nb: --budget 0 is not accepted; accepted: an integer >= 1"),
])
def test_the_cli_refuses_a_search_it_cannot_run(args, said, capsys, tmp_path):
    from qencode_nb.cli import main

    assert main(["study", "environments", str(H2_V4), "--explain", "--out",
                 str(tmp_path / "x"), *args]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
