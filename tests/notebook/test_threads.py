"""Thread and kernel pins, in fresh processes (the pin only works before numpy loads)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import needs_coretype, unpinned_env
from qencode_nb.notebook import pins as threads
from qencode_nb.errors import ParameterError, PinError
from qencode_nb.notebook import blas_profiles
from qencode_nb.options import check_threads


def _run(code: str, **env) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter: none of the six pin variables set, then ``env``."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=unpinned_env(**env))


@pytest.mark.parametrize("n", [1, 2])
def test_pin_sets_every_blas_pool_to_the_requested_count(n):
    code = ("from qencode_nb.notebook.pins import pin, blas_pools;"
            f"r = pin({n});"
            "blas = [p for p in blas_pools() if p['user_api'] == 'blas'];"
            "threaded = [p for p in blas if p.get('threading_layer') != 'disabled'];"
            "print(r['blas_threads'], len(blas), len(threaded),"
            " *sorted(p['num_threads'] for p in threaded))")
    out = _run(code)
    assert out.returncode == 0, out.stderr
    measured, n_pools, n_threaded, *counts = map(int, out.stdout.split())
    assert measured == n
    # numpy's, scipy's and PySCF's OpenBLAS (PySCF's 0.3.3 is built single-threaded:
    # threadpoolctl reports its threading layer "disabled", and it runs one thread)
    assert n_pools == 3, "numpy's, scipy's and PySCF's OpenBLAS should all be loaded"
    assert n_threaded >= 2 and counts == [n] * n_threaded


def test_pin_refuses_after_numpy_was_imported_with_another_count():
    code = ("import numpy, scipy.linalg\n"
            "from qencode_nb.notebook.pins import pin\n"
            "pin(1)\n")
    out = _run(code, **threads.pin_environment(2))
    assert out.returncode != 0
    assert "PinError" in out.stderr and "imported before the pin cell" in out.stderr
    assert "2 BLAS thread(s)" in out.stderr


def test_pin_accepts_preloaded_numpy_running_the_requested_count():
    code = ("import numpy\nfrom qencode_nb.notebook.pins import pin\nprint(pin(1)['blas_threads'])")
    out = _run(code, **threads.pin_environment(1))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"


def test_pin_refuses_a_kernel_that_can_no_longer_be_set():
    code = ("import numpy\nfrom qencode_nb.notebook.pins import pin\npin(1, 'Haswell')")
    out = _run(code, **threads.pin_environment(1))
    assert out.returncode != 0
    assert "PinError" in out.stderr and "imported before the pin cell without" in out.stderr
    assert "OPENBLAS_CORETYPE=Haswell" in out.stderr


def test_coretype_the_cpu_cannot_run_is_refused():
    with pytest.raises(PinError, match=r"needs CPU flags avx512_bf16.*can run: .*Haswell"):
        blas_profiles.check_coretype("Cooperlake", flags={"sse3", "ssse3", "sse4_2", "avx",
                                                    "avx2", "fma", "avx512f", "avx512cd",
                                                    "avx512bw", "avx512dq", "avx512vl"})


def test_unknown_coretype_lists_the_accepted_names():
    with pytest.raises(PinError, match="accepted: .*Cooperlake"):
        blas_profiles.check_coretype("Skylake-ish")


def test_coretype_is_case_insensitive_and_canonicalised():
    flags = set(threads.CORETYPE_CPU_FLAGS["Haswell"])
    assert blas_profiles.check_coretype("haswell", flags=flags) == "Haswell"


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, None])
def test_bad_thread_counts_are_refused(bad):
    with pytest.raises(ParameterError, match="^blas_threads .* is not accepted; accepted: an "
                                             "integer >= 1"):
        check_threads(bad)


def test_pin_environment_sets_the_six_variables():
    env = threads.pin_environment(3)
    # the six thread variables, idle threads asleep, and the kernel setting named (host:
    # the host's kernels)
    assert env == {**{v: "3" for v in threads.THREAD_VARS}, "OMP_WAIT_POLICY": "PASSIVE",
                   "OPENBLAS_THREAD_TIMEOUT": "4", threads.PROFILE_VAR: "host"}
    assert len(threads.THREAD_VARS) == 6


def test_a_guard_that_finds_no_blas_pool_fails():
    with pytest.raises(PinError, match="no BLAS library"):
        threads.measured_blas_threads([{"user_api": "openmp", "num_threads": 1}])


def test_disagreeing_pools_are_reported():
    pools = [{"user_api": "blas", "num_threads": 1, "filepath": "a"},
             {"user_api": "blas", "num_threads": 2, "filepath": "b"}]
    with pytest.raises(PinError, match="different thread counts"):
        threads.measured_blas_threads(pools)


#: The kernel each OpenBLAS copy of the lock's stack runs when asked for Cooperlake, as
#: measured on an Intel Xeon and an AMD EPYC (Zen 4), both with avx512_bf16: scipy
#: 1.13.1's OpenBLAS 0.3.27 has the kernel; numpy 2.2.6's 0.3.29 (built without it) maps
#: it to SkylakeX; PySCF 2.6.2's bundled 0.3.3 predates it and every AVX-512 kernel and
#: stays on Prescott.
COOPERLAKE_RUNS = {"numpy": "SkylakeX", "scipy": "Cooperlake", "pyscf": "Prescott"}


@pytest.mark.hostkind
@needs_coretype("Cooperlake")
def test_cooperlake_kernel_is_taken_by_scipys_openblas():
    """Asked for Cooperlake, each copy runs what its OpenBLAS build has
    (:data:`COOPERLAKE_RUNS`), and the pin lists every copy that cannot run the asked
    kernel as a mismatch (not an error), in the pin's load order, in its own words."""
    code = ("import json; from qencode_nb.notebook.pins import pin;"
            "r = pin(1, 'Cooperlake');"
            "print(json.dumps([r['blas_coretype'], r['kernel_mismatches'], "
            "r['profile']['kernels']]))")
    out = _run(code)
    assert out.returncode == 0, out.stderr
    coretype, mismatches, kernels = json.loads(out.stdout)
    assert coretype == "Cooperlake"
    assert kernels == COOPERLAKE_RUNS
    cannot = [c for c in threads.blas_profiles.COPIES if kernels[c] != "Cooperlake"]
    assert cannot == ["numpy", "pyscf"]
    assert mismatches == [threads.kernel_mismatch(c, kernels[c], "Cooperlake") for c in cannot]


@pytest.mark.hostkind
def test_every_coretype_below_this_cpu_is_runnable_including_prescott():
    """Linux spells SSE3 "pni"; a CPU that runs Haswell also runs Prescott."""
    runnable = threads.runnable_coretypes()
    if "Haswell" in runnable:
        assert {"Prescott", "Core2", "Nehalem", "Sandybridge"} <= set(runnable)
    assert blas_profiles.check_coretype("prescott", flags={"pni"}) == "Prescott"
