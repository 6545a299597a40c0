"""Host kinds emulated (qencode_nb/notebook/host_kinds.py, tests/as_host_kind.py) and hosts
the kernel profiles do not know (issue 51): no x86 CPU flags, a copy without OpenBLAS, no
BLAS library at all.  Each case in a fresh interpreter, as the pin only works before numpy
loads."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import AUDIT_NB, AVX512_CPU, ROOT, ZEN3_CPU, unpinned_env
from qencode_nb.errors import PinError
from qencode_nb.notebook import blas_profiles, host_kinds
from qencode_nb.notebook.host_kinds import EMULATE_VAR, HOST_KINDS, can_emulate

AS_HOST_KIND = ROOT / "tests" / "as_host_kind.py"

_PIN = """\
import json, sys
from qencode_nb.notebook import pins
{patch}
r = pins.pin(1, sys.argv[1])
from qencode_nb.notebook.blas_profiles import cpu_flags
from qencode_nb.notebook.fingerprint import numpy_dispatch
print(json.dumps({{"threads": r["blas_threads"], "used": r["profile"]["used"],
                  "kernels": r["profile"]["kernels"], "fallback": r["profile"]["fallback"],
                  "unmeasured": r.get("unmeasured"), "avx512f": "avx512f" in cpu_flags(),
                  "exp": numpy_dispatch()["ufuncs"]["exp"]}}))
"""


def _pin(kind: str | None, coretype: str, patch: str = "") -> subprocess.CompletedProcess:
    """``pins.pin(1, coretype)`` in a fresh interpreter run as host kind ``kind`` (through
    tests/as_host_kind.py; None: this host)."""
    cmd = [sys.executable, "-c", _PIN.format(patch=patch), coretype]
    if kind:
        cmd = [sys.executable, str(AS_HOST_KIND), kind, "--", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, env=unpinned_env())


def _needs_emulation(kind: str):
    why = can_emulate(HOST_KINDS[kind], host_kinds.real_cpu_flags())
    return pytest.mark.skipif(why is not None, reason=f"cannot emulate {why}")


@pytest.mark.hostkind
def test_each_kind_shows_its_flags_and_a_bad_name_is_refused(monkeypatch):
    monkeypatch.setenv(EMULATE_VAR, "amd-zen3")
    flags = blas_profiles.cpu_flags()
    assert not any(f.startswith("avx512") for f in flags)
    assert flags == HOST_KINDS["amd-zen3"].flags(host_kinds.real_cpu_flags())
    monkeypatch.setenv(EMULATE_VAR, "unknown")
    assert blas_profiles.cpu_flags() == set()
    monkeypatch.setenv(EMULATE_VAR, "zen3")
    with pytest.raises(ValueError, match="'zen3' is not a host kind; accepted: intel-avx512, "
                                         "amd-avx512-haswell, amd-zen3, unknown"):
        blas_profiles.cpu_flags()
    monkeypatch.delenv(EMULATE_VAR)
    assert blas_profiles.cpu_flags() == host_kinds.real_cpu_flags()


def test_an_emulation_hides_instructions_never_adds_them():
    assert can_emulate(HOST_KINDS["amd-zen3"], set(AVX512_CPU)) is None
    assert can_emulate(HOST_KINDS["amd-zen3"], set(ZEN3_CPU)) is None
    for kind in ("intel-avx512", "amd-avx512-haswell"):
        why = can_emulate(HOST_KINDS[kind], set(ZEN3_CPU))
        assert why and "avx512f, avx512cd, avx512bw, avx512dq, avx512vl" in why
        assert "illegal instruction" in why
    env = HOST_KINDS["amd-avx512-haswell"].environment({"PATH": "/bin"})
    assert env == {"PATH": "/bin", "OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_L2_SIZE": "512",
                   EMULATE_VAR: "amd-avx512-haswell"}
    env = HOST_KINDS["amd-zen3"].environment({"OPENBLAS_CORETYPE": "Haswell",
                                              "OPENBLAS_L2_SIZE": "512"})
    assert env == {"NUMBA_CPU_NAME": "znver3", EMULATE_VAR: "amd-zen3",
                   "NPY_DISABLE_CPU_FEATURES": " ".join(host_kinds.NUMPY_AVX512_FEATURES)}


@pytest.mark.hostkind
@_needs_emulation("amd-zen3")
def test_emulated_zen3_resolves_portable_and_gives_zen3s_own_kernels():
    """As Zen 3: reference falls back to portable naming the flags, and the host's kernels
    are the ones OpenBLAS picks there (numpy Haswell, scipy Zen, PySCF's 0.3.3 Barcelona),
    numpy on its AVX2 loops."""
    ref = _pin("amd-zen3", "reference")
    assert ref.returncode == 0, ref.stderr
    got = json.loads(ref.stdout.splitlines()[-1])
    assert got["used"] == "portable" and not got["avx512f"]
    assert "numpy's and scipy's SkylakeX need avx512f" in got["fallback"]
    assert got["kernels"] == blas_profiles.PORTABLE.coretypes and got["exp"] == "AVX2"
    host = _pin("amd-zen3", "host")
    assert host.returncode == 0, host.stderr
    got = json.loads(host.stdout.splitlines()[-1])
    assert got["kernels"] == HOST_KINDS["amd-zen3"].kernels and got["exp"] == "AVX2"
    refused = _pin("amd-zen3", "SkylakeX")
    assert refused.returncode != 0 and "'SkylakeX' needs CPU flags avx512f" in refused.stderr


@pytest.mark.hostkind
def test_a_process_that_is_not_x86_64_shows_no_flags(monkeypatch):
    """Under qemu-user an aarch64 process reads its x86 host's /proc/cpuinfo (AVX-512 flags
    included, measured with qemu 7.2): its flags are not this process's, so none are shown
    and reference resolves to the host's kernels (issue 51: SkylakeX asked of aarch64
    OpenBLAS gave generic armv8)."""
    import platform

    monkeypatch.delenv(EMULATE_VAR, raising=False)
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    assert host_kinds.real_cpu_flags() == set() == blas_profiles.cpu_flags()
    assert blas_profiles.resolve("reference").used == "host"
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    assert "avx2" in host_kinds.real_cpu_flags()      # every host kind of this project


def test_a_cpu_without_flags_uses_the_hosts_kernels_saying_why():
    res = blas_profiles.resolve("reference", set())
    assert res.used == "host" and res.coretypes == {c: None for c in blas_profiles.COPIES}
    assert "shows no x86 CPU flags" in res.fallback and "aarch64 or macOS" in res.fallback
    for value in ("portable", "Haswell"):
        with pytest.raises(PinError, match="no x86 CPU flags"):
            blas_profiles.resolve(value, set())


def test_a_copy_without_openblas_is_named_and_the_pin_holds():
    """As a host whose numpy has no OpenBLAS (Apple's Accelerate): the pin measures the
    other copies' threads and names no kernel for numpy."""
    run = _pin("unknown", "reference")
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.splitlines()[-1])
    assert got["used"] == "host" and got["threads"] == 1 and got["unmeasured"] is None
    assert "numpy" not in got["kernels"] and set(got["kernels"]) == {"scipy", "pyscf"}


def test_no_blas_library_at_all_leaves_threads_unmeasured_and_refuses_kernels():
    """threadpoolctl finding no BLAS library (a numpy on Accelerate, nothing else): the pin
    promised threads (set, not measurable: None, saying why) and, asked for kernels,
    refuses, as it cannot check them."""
    patch = "pins.blas_pools = lambda: []"
    run = _pin(None, "host", patch)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.splitlines()[-1])
    assert got["threads"] is None and got["kernels"] == {}
    assert got["unmeasured"].startswith("threadpoolctl finds no BLAS library")
    refused = _pin(None, "portable", patch)
    assert refused.returncode != 0
    assert "the kernel pin (numpy Haswell, scipy Haswell, pyscf Prescott) cannot be " \
           "checked" in refused.stderr


def test_the_card_names_the_libraries_found_and_the_kernels_it_cannot_name():
    from qencode_nb.verdict.card import blas_found
    from qencode_nb.verdict.tiers import kernel_reason

    pools = [{"user_api": "blas", "library": "openblas", "version": "0.3.27",
              "filepath": "/v/lib/python3.11/site-packages/scipy.libs/libopenblas.so"}]
    kernels = {"scipy": "Zen"}
    assert blas_found(kernels, {"pools": pools}, 1) == (
        "BLAS libraries found: openblas 0.3.27 (scipy); no OpenBLAS kernel named for numpy, "
        "pyscf (threadpoolctl finds no OpenBLAS there)")
    assert blas_found({}, {"pools": []}, None) == (
        "BLAS libraries found: none; no OpenBLAS kernel named for numpy, scipy, pyscf "
        "(threadpoolctl finds no OpenBLAS there); BLAS threads not measured")
    assert blas_found(dict(blas_profiles.REFERENCE.coretypes), {"pools": pools}, 1) is None
    note, reason = kernel_reason({"numeric": {"openblas": [{"copy": "scipy",
                                                            "kernel": "Zen"}]}})
    assert "numpy no OpenBLAS found" in note
    assert reason.startswith("the kernel of numpy's and pyscf's BLAS cannot be named")


@pytest.mark.notebook
def test_the_main_job_runs_on_a_host_the_profiles_do_not_know(tmp_path):
    """README's main job (``papermill notebooks/audit.ipynb out.ipynb -p entry lih``) as a host
    without x86 flags whose numpy has no OpenBLAS: done, profile host, the card naming the
    libraries it found and the kernel it cannot name, tier 3 n/a saying why."""
    out = tmp_path / "out.ipynb"
    run = subprocess.run(
        [sys.executable, str(AS_HOST_KIND), "unknown", "--", sys.executable, "-m",
         "papermill", str(AUDIT_NB), str(out), "-p", "entry", "lih"],
        capture_output=True, text=True, env=unpinned_env(), cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    from qencode_nb.notebook.record import read_records

    records = read_records(out)
    assert records["done"] is True and records["blas_profile"]["used"] == "host"
    assert records["provenance"]["numeric"]["env"][EMULATE_VAR] == "unknown"
    tier3 = records["tiers"]["bit_identical"]
    assert tier3["status"] == "n/a"
    assert tier3["reasons"][0].startswith("the kernel of numpy's BLAS cannot be named")
    shown = subprocess.run([str(ROOT / ".venv" / "bin" / "qencode-nb"), "show", str(out)],
                           capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "BLAS kernels: the host's" in shown.stdout
    assert "shows no x86 CPU flags" in shown.stdout
    assert "BLAS libraries found: openblas" in shown.stdout
    assert "no OpenBLAS kernel named for numpy" in shown.stdout


def _as_host_kind(*args, kind=None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(AS_HOST_KIND), *args]
    if kind:
        cmd = [sys.executable, str(AS_HOST_KIND), kind, "--", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, env=unpinned_env())


@pytest.mark.hostkind
@_needs_emulation("amd-zen3")
def test_ci_runs_as_each_kind_it_can_and_says_which_it_cannot():
    """.ci/run's passes (tests/as_host_kind.py --others, --selection): run as a Zen 3, no
    other kind can be emulated, each refusal naming the AVX-512 flags; a kind of the same
    test profile runs the in-process hostkind tests, of another all of them."""
    run = _as_host_kind("--others", kind="amd-zen3")
    assert run.returncode == 0 and run.stdout == "", run.stderr
    assert "this host is amd-zen3" in run.stderr
    for other in ("intel-avx512", "amd-avx512-haswell"):
        assert f"cannot run as {other}" in run.stderr
    assert run.stderr.count("needs the CPU flags avx512f") == 2
    same = _as_host_kind("--selection", "amd-zen3", kind="amd-zen3")
    assert same.stdout.strip() == "hostkind and not slow and not notebook and not heavy"
    refused = subprocess.run([sys.executable, str(AS_HOST_KIND), "intel-avx512", "--", "true"],
                             capture_output=True, text=True,
                             env={**unpinned_env(), EMULATE_VAR: ""})
    if can_emulate(HOST_KINDS["intel-avx512"], host_kinds.real_cpu_flags()) is None:
        other = _as_host_kind("--selection", "amd-zen3", kind="intel-avx512")
        assert other.stdout.strip() == "hostkind and not heavy and not network"
        assert refused.returncode == 0
    else:
        assert refused.returncode == 2 and "cannot emulate intel-avx512" in refused.stderr
