"""An entry's recorded environment (issue 35, item 1): every real QEncode entry is named
its release environment from its own ``provenance.tool_versions`` and QEncode's
requirements files, with its release's kernel triple; tier 3 compares the kernels in
force with that triple, not with the v4 one."""

from __future__ import annotations

import json

import pytest

from conftest import SHARED_DB, SHARED_HISTORY
from qencode_nb.environment.recorded import recorded_environment
from qencode_nb.environment.releases import (RELEASES as RELEASE_TABLE, REQUIREMENTS_DIR,
                                             kernel_profile, requirement_pins)
from qencode_nb.notebook.blas_profiles import REFERENCE
from qencode_nb.verdict.tiers import kernel_reason

RELEASES = SHARED_HISTORY / "releases"
V3_PINS = {"pyscf": "2.5.0", "pennylane": "0.44.1", "openfermion": "1.7.1",
           "numpy": "1.26.4", "scipy": "1.17.0"}       # requirements-v3.txt, verbatim
V4_PINS = {"pennylane": "0.45.0", "numpy": "2.2.6", "pyscf": "2.6.2", "scipy": "1.13.1",
           "openfermion": "1.6.1"}                     # requirements-v4.txt
HASWELL = {"numpy": "Haswell", "scipy": "Haswell", "pyscf": "Haswell"}


def _tool_versions(path):
    return (json.loads(path.read_text()).get("provenance") or {}).get("tool_versions")


def test_the_bundled_requirements_files_are_qencodes_own():
    """data/qencode-history/ holds QEncode's files byte for byte (../shared's copies)."""
    for row in RELEASE_TABLE.values():
        name = row.requirements_file
        assert (REQUIREMENTS_DIR / name).read_bytes() == (SHARED_HISTORY / name).read_bytes()
    assert requirement_pins("v3") == V3_PINS and requirement_pins("v4") == V4_PINS
    with pytest.raises(KeyError, match="'v2' is not known; known: v4, v3"):
        requirement_pins("v2")


@pytest.mark.parametrize("folder,release,n", [
    (SHARED_DB, "v4", 40), (RELEASES / "v3" / "db", "v3", 36),
    (RELEASES / "v3.1" / "db", "v3", 42)])
def test_every_real_entry_is_named_its_release_environment(folder, release, n):
    paths = sorted(folder.glob("*__sha256_*.json"))
    assert len(paths) == n
    for path in paths:
        env = recorded_environment(_tool_versions(path))
        assert env.release == release and env.unknown == [], path.name
        assert env.requirements_file == RELEASE_TABLE[release].requirements_file
        assert env.kernels == kernel_profile(release).coretypes
        assert env.python.startswith("3.11.")
        assert json.loads(json.dumps(env.to_record())) == env.to_record()


def test_the_stack_pins_what_the_entry_records_and_matches_lightning():
    v3 = recorded_environment(_tool_versions(next((RELEASES / "v3" / "db").glob("H2_*"))))
    assert v3.pins == V3_PINS and v3.python == "3.11.14"
    # requirements-v3.txt does not pin the plugin: pip would bring 0.45.0 beside 0.44.1
    assert sorted(v3.requirements) == sorted(
        [f"{k}=={v}" for k, v in V3_PINS.items()] + ["pennylane-lightning==0.44.*"])
    assert v3.kernels == HASWELL and "34 of the 36 v3 entries" in v3.kernels_source
    v4 = recorded_environment(_tool_versions(next(SHARED_DB.glob("LiH_ccpvdz_PAR_HEA_*"))))
    assert v4.kernels == REFERENCE.coretypes and "pennylane-lightning==0.45.*" in v4.requirements


def test_what_cannot_be_named_says_why():
    v1 = next((RELEASES / "v1" / "db").glob("*__sha256_*.json"))
    none = recorded_environment(_tool_versions(v1))
    assert none.release is None and none.requirements == [] and none.kernels is None
    assert none.unknown == ["the entry records no package versions "
                            "(provenance.tool_versions), so no stack can be named its own"]
    other = recorded_environment({**V3_PINS, "numpy": "1.26.3", "python": "3.11.9"})
    assert other.release is None and other.kernels is None and "numpy==1.26.3" in other.requirements
    assert other.unknown[0].startswith("no QEncode requirements file pins these "
                                       "versions (known: v4 requirements-v4.txt, v3 "
                                       "requirements-v3.txt)")
    # a package the entry adds to its release's pins keeps the release, in the stack
    more = recorded_environment({**V4_PINS, "qiskit-nature": "0.7.2"})
    assert more.release == "v4" and "qiskit-nature==0.7.2" in more.requirements


def _provenance(kernels: dict) -> dict:
    return {"numeric": {"openblas": [{"copy": c, "kernel": k} for c, k in kernels.items()]}}


def test_tier_3_compares_the_kernels_with_the_entrys_release_triple():
    v3 = recorded_environment(V3_PINS)
    v4 = recorded_environment(V4_PINS)
    note, off = kernel_reason(_provenance(HASWELL), "Haswell", v3)
    assert off is None
    assert note == ("OpenBLAS kernels: numpy Haswell, scipy Haswell, pyscf Haswell "
                    "(OPENBLAS_CORETYPE=Haswell at numpy load); the v3 release's triple: "
                    "numpy Haswell, scipy Haswell, pyscf Haswell (-p blas_coretype reference)")
    note, off = kernel_reason(_provenance(REFERENCE.coretypes), None, v3)
    assert off == ("not the v3 release's kernel triple (numpy SkylakeX, scipy SkylakeX, "
                   "pyscf Prescott)")
    # a v4 entry keeps the reference triple, and its words
    assert kernel_reason(_provenance(REFERENCE.coretypes), None, v4)[1] is None
    note, off = kernel_reason(_provenance(HASWELL), None, v4)
    assert off == "not the reference kernel triple (numpy Haswell, scipy Haswell, pyscf Haswell)"
    assert note.endswith("reference triple: numpy SkylakeX, scipy SkylakeX, pyscf Prescott "
                         "(-p blas_coretype reference)")
    # pins that no release file holds: no triple to compare with, said, never guessed
    note, off = kernel_reason(_provenance(HASWELL), None,
                              recorded_environment({**V3_PINS, "numpy": "1.26.3"}))
    assert note.endswith("the entry's release has no known kernel triple")
    assert off.startswith("no QEncode requirements file pins these versions")


AVX2 = {"pni", "ssse3", "sse4_2", "avx", "avx2", "fma"}
AVX512 = AVX2 | {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}


def test_reference_resolves_to_the_entrys_release_triple():
    """``reference`` means the audited entry's release triple (issue 35 item 3), on
    every CPU that runs it; an explicit profile or coretype is not changed."""
    from qencode_nb.errors import PinError
    from qencode_nb.notebook.blas_profiles import resolve

    for flags in (AVX2, AVX512):
        r = resolve("reference", flags, release=kernel_profile("v3"))
        assert (r.requested, r.used, r.coretypes) == ("reference", "v3", HASWELL)
        assert r.fallback == ("the entry is of the v3 release, made under numpy Haswell, "
                              "scipy Haswell, pyscf Haswell (qencode_nb.environment.releases)")
        assert resolve("portable", flags, release=kernel_profile("v3")).used == "portable"
        assert resolve("Haswell", flags, release=kernel_profile("v3")).used == "Haswell"
    assert resolve("reference", AVX512, release=kernel_profile("v4")).used == "reference"
    assert resolve("reference", AVX512, release=None).used == "reference"
    assert resolve("reference", AVX2, release=None).used == "portable"
    no_avx2 = {"pni", "ssse3", "sse4_2", "avx"}
    host = resolve("reference", no_avx2, release=kernel_profile("v3"))
    assert host.used == "host" and host.fallback.endswith(
        "this CPU cannot run it: numpy's, scipy's and pyscf's Haswell need avx2, fma; the "
        "host's kernels are used")
    with pytest.raises(PinError, match="the entry is of the v3 release"):
        resolve("reference", no_avx2, strict=True, release=kernel_profile("v3"))


def test_the_audit_reads_the_release_before_the_pin():
    """release_of_entry: the release of what the audit is given, None where it cannot be
    read (the load stage says why); reading it loads no numpy (tests/test_imports.py)."""
    from qencode_nb.environment.choice import release_of_entry as entry_release

    assert entry_release("lih") == "v4"
    assert entry_release(str(next((RELEASES / "v3.1" / "db").glob("H2_*.json")))) == "v3"
    assert entry_release(str(next((RELEASES / "v2" / "db").glob("*__sha256_*.json")))) is None
    assert entry_release("no-such-entry") is None and entry_release(3) is None
