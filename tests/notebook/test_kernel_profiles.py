"""BLAS kernel profiles, the per-copy pin and the numeric fingerprint (issue 22).

Each pin runs in a fresh interpreter: OpenBLAS reads OPENBLAS_CORETYPE once, when a
copy loads.  The kernels used here (Haswell, Sandybridge, Zen, Prescott) run on every
x86-64 CPU with AVX2 this project runs on; ``reference`` needs AVX-512 and is tested
through its fallback and, where the CPU has AVX-512, for real.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from conftest import TEST_PROFILE, needs_profile, unpinned_env
from qencode_nb.errors import PinError, RebuildMismatch
from qencode_nb.notebook import blas_profiles
from qencode_nb.notebook.blas_profiles import PORTABLE, REFERENCE, resolve

pytestmark = pytest.mark.bitlevel

AVX2 = {"pni", "ssse3", "sse4_2", "sse4a", "avx", "avx2", "fma"}
AVX512 = AVX2 | {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "avx512_bf16"}

_PIN = """\
import json, os, sys
from qencode_nb.notebook import blas_profiles as b, pins, fingerprint
if len(sys.argv) > 2:
    b.PROFILES[sys.argv[1]] = b.KernelProfile(sys.argv[1], json.loads(sys.argv[2]))
r = pins.pin(1, sys.argv[1])
import numpy as np, scipy.linalg
a = np.random.default_rng(7).random((200, 200)); a = a + a.T
w = scipy.linalg.eigh(a)[0]
print(json.dumps({"profile": r["profile"], "mismatches": r["kernel_mismatches"],
                  "coretype": r["blas_coretype"], "env": os.environ.get("OPENBLAS_CORETYPE"),
                  "fingerprint": fingerprint.collect(), "bits": [float((a @ a).sum()).hex(),
                  float(w.sum()).hex()]}))
"""


def _pin(profile: str, kernels: dict | None = None, **env) -> dict:
    args = [sys.executable, "-c", _PIN, profile] + ([json.dumps(kernels)] if kernels else [])
    out = subprocess.run(args, capture_output=True, text=True, env=unpinned_env(**env))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_values_resolve_to_a_profile_the_host_or_one_coretype():
    assert resolve("reference", AVX512).used == "reference"
    assert resolve("Reference", AVX512).coretypes == REFERENCE.coretypes
    assert resolve("portable", AVX2).coretypes == {"numpy": "Haswell", "scipy": "Haswell",
                                                   "pyscf": "Prescott"}
    assert resolve("portable", AVX2).numpy_disable == blas_profiles.NUMPY_AVX512_FEATURES
    for host in (None, "host", "None"):
        r = resolve(host, AVX2)
        assert r.used == "host" and r.coretypes == {"numpy": None, "scipy": None, "pyscf": None}
    r = resolve("haswell", AVX2)
    assert r.used == r.requested == "Haswell" and set(r.coretypes.values()) == {"Haswell"}


def test_reference_falls_back_to_portable_without_avx512_and_says_why():
    r = resolve("reference", AVX2)
    assert r.requested == "reference" and r.used == "portable"
    assert r.coretypes == PORTABLE.coretypes
    assert ("numpy's and scipy's SkylakeX need avx512f, avx512cd, avx512bw, avx512dq, "
            "avx512vl") in r.fallback and "portable profile is used" in r.fallback
    # without AVX2 even portable cannot run: the host's kernels, saying so
    r = resolve("reference", {"pni", "ssse3", "sse4_2"})
    assert r.used == "host" and "the host's kernels are used" in r.fallback
    with pytest.raises(PinError, match="cannot run the reference profile: numpy's and scipy's "
                                       "SkylakeX need avx512f"):
        resolve("reference", AVX2, strict=True)
    with pytest.raises(PinError, match="'portable': this CPU cannot run the portable profile: "
                                       "numpy's and scipy's Haswell need avx2, fma"):
        resolve("portable", {"pni", "ssse3", "sse4_2", "avx"})


def test_a_bad_value_names_it_and_lists_what_is_accepted():
    with pytest.raises(PinError, match=r"blas_coretype 'fastest' is not accepted; accepted: a "
                                       r"profile \(reference, portable\), 'host' .*Haswell"):
        resolve("fastest", AVX2)
    with pytest.raises(PinError, match="'SkylakeX' needs CPU flags avx512f"):
        resolve("SkylakeX", AVX2)


def test_each_copy_loads_with_its_own_kernel():
    """Three different kernels, one per copy, which one OPENBLAS_CORETYPE cannot give:
    each copy reports its own, and the variable holds numpy's afterwards."""
    kernels = {"numpy": "Sandybridge", "scipy": "Zen", "pyscf": "Prescott"}
    out = _pin("mixed", kernels)
    assert out["profile"]["kernels"] == kernels
    assert out["mismatches"] == [] and out["coretype"] == out["env"] == "Sandybridge"
    copies = {c["copy"]: c for c in out["fingerprint"]["openblas"]}
    assert sorted(copies) == ["numpy", "pyscf", "scipy"], "three OpenBLAS copies recorded"
    assert {c: copies[c]["kernel"] for c in copies} == kernels
    assert copies["pyscf"]["file"].startswith("libopenblas") and copies["numpy"]["threads"] == 1


def test_portable_gives_the_same_bits_and_fingerprint_whatever_the_host_presets():
    """The other host kind's preset (OPENBLAS_CORETYPE=Haswell, OPENBLAS_L2_SIZE=512) or
    another preset kernel: under ``portable`` the same kernels, the same fingerprint
    hash and the same last bits; the preset itself is recorded."""
    plain = _pin("portable")
    preset = _pin("portable", OPENBLAS_CORETYPE="Haswell", OPENBLAS_L2_SIZE="512")
    other = _pin("portable", OPENBLAS_CORETYPE="Sandybridge")
    for run in (plain, preset, other):
        assert run["profile"]["kernels"] == PORTABLE.coretypes
    assert plain["fingerprint"]["hash"] == preset["fingerprint"]["hash"] \
        == other["fingerprint"]["hash"]
    assert plain["bits"] == preset["bits"] == other["bits"]
    assert preset["fingerprint"]["env"]["OPENBLAS_L2_SIZE"] == "512"
    env = plain["fingerprint"]["env"]
    assert env["QENCODE_NB_BLAS_PROFILE"] == "portable"
    assert env["NPY_DISABLE_CPU_FEATURES"].split() == list(blas_profiles.NUMPY_AVX512_FEATURES)
    ufuncs = plain["fingerprint"]["numpy"]["ufuncs"]
    assert set(ufuncs) == {"add", "multiply", "subtract", "absolute", "square", "sqrt",
                           "sin", "cos", "exp", "log"}
    assert not any("AVX512" in str(t) for t in ufuncs.values()), ufuncs
    assert plain["fingerprint"]["libc"].startswith("glibc ")
    assert plain["fingerprint"]["cpu"]["vendor"] in ("GenuineIntel", "AuthenticAMD")


def test_another_kernel_changes_the_fingerprint_hash():
    a = _pin("portable")
    b = _pin("mixed", {"numpy": "Sandybridge", "scipy": "Haswell", "pyscf": "Prescott"})
    assert a["fingerprint"]["hash"] != b["fingerprint"]["hash"]
    assert len(a["fingerprint"]["hash"]) == 12


@needs_profile("reference")
def test_reference_pins_the_reference_triple():
    out = _pin("reference")
    assert out["profile"]["used"] == "reference" and out["profile"]["fallback"] is None
    assert out["profile"]["kernels"] == REFERENCE.coretypes


def test_the_test_process_runs_the_profile_audit_ipynb_defaults_to():
    """conftest pins the test process to what ``reference`` means on this CPU, so a
    notebook left on its default computes like the test process."""
    from qencode_nb.notebook.pins import copy_kernels

    assert TEST_PROFILE == resolve("reference").used
    assert copy_kernels() == blas_profiles.PROFILES[TEST_PROFILE].coretypes


def test_a_rebuild_with_another_z2_count_says_so_first():
    """A Z2-symmetry count that differs from the entry's (as PySCF's CASSCF orbitals
    under another kernel give, issue 22) is the error, naming both counts, the kernels
    and the reference triple, before any parameter count is compared."""
    from conftest import H2_JW_UCCSD
    from qencode_nb.entry import load
    from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild
    from qencode_nb.rerun.problem import build_problem

    entry = load(str(H2_JW_UCCSD))
    rebuilt = rebuild(entry)
    assert hamiltonian_check(entry, rebuilt).structure_mismatch is None
    n = len(entry.tapering_sectors)
    hf_orbitals = dataclasses.replace(entry, tapering_sectors=entry.tapering_sectors + [1],
                                      tapered_num_qubits=entry.tapered_num_qubits - 1)
    with pytest.raises(RebuildMismatch) as err:
        build_problem(hf_orbitals, rebuilt, None, hamiltonian_check(hf_orbitals, rebuilt))
    assert "OpenBLAS" not in str(err.value)    # Hartree-Fock orbitals: no kernel story
    # As if the entry declared CASSCF orbitals (whose symmetry count follows the kernels):
    edited = dataclasses.replace(hf_orbitals, orbital_optimization="casscf")
    record = hamiltonian_check(edited, rebuilt)
    assert record.z2_symmetries_stored == n + 1 and record.z2_symmetries_rebuilt == n
    with pytest.raises(RebuildMismatch) as err:
        build_problem(edited, rebuilt, None, record)
    text = str(err.value)
    # the field, its value and the declared vs rebuilt count first (issue 23)
    assert (f"field encoding.tapering.sectors: {edited.tapering_sectors} declares {n + 1} Z2 "
            f"symmetries") in text
    assert f"the rebuild of the declared procedure finds {n}, sectors " in text
    assert f"accepted: {n} sectors" in text
    # the kernels in force (this process's profile), said against the reference triple
    # by the kernel profiles' own sentence, whichever profile the host resolves to
    from qencode_nb.notebook.blas_profiles import reference_clause, triple_text
    from qencode_nb.notebook.pins import copy_kernels

    assert copy_kernels() == blas_profiles.PROFILES[TEST_PROFILE].coretypes
    assert f"here {triple_text(blas_profiles.PROFILES[TEST_PROFILE].coretypes)}" in text
    assert f"here {reference_clause(copy_kernels())}" in text
    assert (text.endswith("(the reference triple): the entry's procedure does not rebuild it")
            if TEST_PROFILE == "reference" else
            f"reference triple {triple_text(REFERENCE.coretypes)}" in text)


def test_the_card_and_the_report_header_name_the_profile_and_the_fingerprint():
    """The card's environment line: the profile used, why not the one asked for, each
    copy's kernel and the fingerprint's hash; the report header counts fingerprints."""
    import pandas as pd

    from qencode_nb.readout.report_header import environments
    from qencode_nb.verdict.card import Card

    fallback = resolve("reference", AVX2).to_record()
    fallback["kernels"] = dict(PORTABLE.coretypes)
    records = {"entry_id": "LiH", "mode": "replay", "blas_profile": fallback,
               "provenance": {"numeric": {"hash": "da1c3e3814f8"}}}
    text = Card(records).text().splitlines()
    line = next(x for x in text if x.startswith("BLAS kernels"))
    assert line.startswith("BLAS kernels: portable profile (numpy Haswell, pyscf Prescott, "
                           "scipy Haswell); reference not used: this CPU cannot run the "
                           "reference profile: numpy's and scipy's SkylakeX need avx512f")
    assert line.endswith("· numeric fingerprint da1c3e3814f8")
    assert 'class="qnb-environment"' in Card(records).html()
    host = {"requested": "host", "used": "host", "fallback": None,
            "kernels": {"numpy": "Haswell", "scipy": "Zen", "pyscf": "Barcelona"}}
    assert "BLAS kernels: the host's (numpy Haswell, pyscf Barcelona, scipy Zen)" in \
        Card({**records, "blas_profile": host}).text()
    table = pd.DataFrame({"numeric_fingerprint": ["da1c3e3814f8"] * 2 + ["433358623704"],
                          "blas_profile": ["portable"] * 2 + ["host"]})
    assert [line["text"] for line in environments(table)] == [
        "numeric fingerprint da1c3e3814f8 (portable kernels; 2 runs)",
        "numeric fingerprint 433358623704 (host kernels; 1 run)",
        "the runs differ: 2 numeric fingerprints (kernels, CPU or libraries); compare "
        "energies bit for bit only within one"]
    assert [line["warn"] for line in environments(table)] == [False, False, True]
