"""Shared fixtures and helpers: the real QEncode v4 entries in ../shared (never copied
here), the thread pin for the test process and its children, and the test tiers.

Test tiers (markers registered in pyproject.toml; README, "Run the tests"):
``notebook`` executes a notebook or a Jupyter kernel, ``slow`` takes minutes,
``heavy`` is too long or too big for CI (always also ``slow``), ``network`` needs a
package registry, ``browser`` drives a real headless Chromium (tests/browser.py).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

# Determinism (docs/explanations/notebook-contract.md): the test process and the kernels
# it starts run at one BLAS thread unless a test asks otherwise, and under one kernel profile
# (qencode_nb/notebook/blas_profiles.py), whatever OPENBLAS_CORETYPE /
# OPENBLAS_L2_SIZE the host presets (issue 22): ``reference`` (the QEncode v4
# entries' triple) on a CPU with AVX-512, else ``portable``.  That is also what
# audit.ipynb's default ``reference`` pins on the same CPU, so a notebook a test runs
# computes under the test process's profile.  A
# bit-level expectation is keyed by the profile it was measured under
# (:func:`by_profile`) or holds under ``reference`` only (:data:`reference_only`).
# Set before anything here imports numpy (the pin module imports neither numpy nor
# scipy); the runtime limit covers a numpy that a plugin may have loaded earlier.
# HOST_ENV keeps the environment as the host gave it.
from qencode_nb.notebook import blas_profiles, host_kinds  # noqa: E402
from qencode_nb.notebook.pins import BLAS_KERNEL_VARS, THREAD_VARS, pin, pin_environment

HOST_ENV = dict(os.environ)
_RESOLVED = blas_profiles.resolve("reference")
if _RESOLVED.used not in blas_profiles.PROFILES:   # a CPU without AVX2
    raise SystemExit("tests/conftest.py: the test suite runs under a kernel profile "
                     f"(reference, else portable), which this CPU cannot run: "
                     f"{_RESOLVED.fallback}")
TEST_PROFILE = _RESOLVED.used
# numpy's, scipy's and PySCF's OpenBLAS loaded here, each under its kernel; the
# environment children inherit holds numpy's (a child pins its own profile).
pin(1, TEST_PROFILE)

import pytest  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

threadpool_limits(limits=1)

ROOT = Path(__file__).resolve().parents[1]
SHARED_DB = ROOT.parent / "shared" / "qencode-v4" / "db"
#: QEncode's published history (releases v1-v3.1 entries, curves, leaderboards, receipts,
#: its README, CITATION.cff, CHANGELOG.md, docs/ at commit a46b4ec):
#: ../shared/qencode-history/NOTICE.md.
SHARED_HISTORY = ROOT.parent / "shared" / "qencode-history"
#: The files of ``SHARED_DB.parent`` the tests read (entry ids, then the release files):
#: ``qencode-nb data fetch --only`` fetches exactly these (tests/test_clone.py).
SHARED_LIST = ROOT / "tests" / "data" / "shared-v4.txt"
AUDIT_NB = ROOT / "notebooks" / "audit.ipynb"

LIH_PAR_HEA = SHARED_DB / "LiH_ccpvdz_PAR_HEA_v4_tapered__sha256_e94da71e7eb3b98e.json"
H2_JW_UCCSD = SHARED_DB / "H2_ccpvdz_JW_UCCSD_v4_tapered__sha256_93a0f8a8604d9aed.json"

__all__ = ["ROOT", "SHARED_DB", "SHARED_HISTORY", "AUDIT_NB", "LIH_PAR_HEA", "H2_JW_UCCSD", "THREAD_VARS",
           "HOST_ENV", "TEST_PROFILE", "KERNEL_PIN_VARS", "needs_profile", "reference_only",
           "by_profile", "needs_coretype", "coretype_missing", "HOST_KINDS", "AVX512_CPU", "ZEN3_CPU",
           "pinned_env", "unpinned_env", "cobyla_path_checks", "openblas_kernels", "LIH_PAR_HEA_ERROR_MHA",
           "lih_par_hea_error_mha"]

#: LiH PAR/HEA re-run error |E - E_exact| in mHa (COBYLA, 10 restarts, 1000
#: evaluations, 1 BLAS thread) by the OpenBLAS kernels in force, as threadpoolctl
#: reports them for (numpy's, scipy's, PySCF's bundled) OpenBLAS; see
#: :func:`openblas_kernels`.  COBYLA turns last-bit differences of the arithmetic into
#: another minimum, so the kernels decide which one the re-run finds.  "rebuilt": the
#: bundled ``lih`` entry (Hamiltonian rebuilt with PySCF), "stored": the QEncode JSON
#: (its stored Hamiltonian).  The published error is 5.181379 mHa.  Measured on an
#: Intel Xeon with avx512_bf16 and amx (2 cores), this repository's pinned stack, with
#: OPENBLAS_CORETYPE as in the comment; the project measured 8.993703 mHa on an AMD
#: EPYC's default kernels and 5.181379 there under Cooperlake.  A kernel set that is
#: not listed fails the tests that use it, naming the kernels: measure it and add it.
LIH_PAR_HEA_ERROR_MHA: dict[tuple[str, str, str], dict[str, float]] = {
    # unset (this CPU's default; PySCF's OpenBLAS 0.3.3 does not know it: Prescott)
    ("SkylakeX", "SkylakeX", "Prescott"): {"rebuilt": 5.181378851608187,
                                          "stored": 5.181378851608187},
    # Cooperlake (PySCF's 0.3.3 does not know it either and stays on Prescott)
    ("SkylakeX", "Cooperlake", "Prescott"): {"rebuilt": 5.181378851608187,
                                            "stored": 5.181378851608187},
    ("Haswell", "Haswell", "Haswell"): {"rebuilt": 5.1813781903886635,      # Haswell
                                        "stored": 3.6988012415219984},     # (issue 22, AMD)
    ("Haswell", "Zen", "Zen"): {"rebuilt": 5.1813781903886635},            # Zen
    ("SkylakeX", "SkylakeX", "Haswell"): {"rebuilt": 8.993703306544809},   # SkylakeX
    # Measured on an AMD EPYC (Zen 3, no AVX-512), 2 cores: the portable profile (the
    # tests' and audit.ipynb's default there) and that CPU's default kernels.
    ("Haswell", "Haswell", "Prescott"): {"stored": 3.6988012415219984,
                                         "rebuilt": 9.16388348123931},     # portable
    ("Haswell", "Zen", "Barcelona"): {"stored": 3.6988012415219984},       # unset
}

_KERNELS_CODE = """\
import json, sys
from qencode_nb.notebook.pins import pin
print(json.dumps(pin(1, sys.argv[1] if len(sys.argv) > 1 else None)["profile"]["kernels"]))
"""


@functools.lru_cache(maxsize=None)
def openblas_kernels(blas_coretype: str | None = "reference") -> tuple[str, str, str]:
    """The OpenBLAS kernels (numpy's, scipy's, PySCF's bundled copy) that a kernel
    started with the test pins (1 thread, ``blas_coretype``) runs, as the pin
    (qencode_nb.notebook.pins.pin) measures them in a fresh interpreter.

    PySCF's copy loads only with PySCF, after the notebook records its provenance,
    so the record alone does not show it.
    """
    out = subprocess.run([sys.executable, "-c", _KERNELS_CODE,
                          *([blas_coretype] if blas_coretype else [])], capture_output=True,
                         text=True, env=pinned_env(1, blas_coretype), check=True)
    arch = json.loads(out.stdout.strip().splitlines()[-1])
    return arch.get("numpy"), arch.get("scipy"), arch.get("pyscf")


def lih_par_hea_error_mha(hamiltonian: str, blas_coretype: str | None = "reference") -> float:
    """The LiH PAR/HEA re-run error measured for the kernels in force
    (:data:`LIH_PAR_HEA_ERROR_MHA`); fails naming the kernels where none was measured."""
    kernels = openblas_kernels(blas_coretype)
    value = LIH_PAR_HEA_ERROR_MHA.get(kernels, {}).get(hamiltonian)
    if value is None:
        pytest.fail(f"no measured LiH PAR/HEA re-run ({hamiltonian} Hamiltonian) for the "
                    f"OpenBLAS kernels numpy={kernels[0]}, scipy={kernels[1]}, "
                    f"pyscf={kernels[2]}; measured: {LIH_PAR_HEA_ERROR_MHA}.  Run it on "
                    "this machine and add the row to LIH_PAR_HEA_ERROR_MHA in "
                    "tests/conftest.py")
    return value


def cobyla_path_checks(rerun: dict) -> int:
    """The energies a re-run (its ``rerun`` record) spent checking kept COBYLA paths until
    they differed (qencode_nb/rerun/cobyla_path.py: a path another run kept in this
    machine's cache, under other kernels, is checked evaluation by evaluation, then COBYLA
    runs): ``energy_calls`` is ``nfev`` plus these (issue 51: 4 after a native run, as an
    emulated Zen 3)."""
    return sum(int(re.search(r"evaluation (\d+) of", m).group(1))
               for m in (rerun.get("cobyla_paths") or {}).get("mismatches") or [])


def reseal(tmp_path, source, edit, name):
    """A copy of a real QEncode entry edited by ``edit(raw)`` and re-sealed with QEncode's
    hash rule (``provenance.entry_hash_sha256`` and the ``entry_id``'s suffix recomputed),
    so integrity passes and only the edit is under test: ``tmp_path / f"{name}.json"``."""
    from qencode_nb.entry.hashing import qencode_sha256

    raw = json.loads(Path(source).read_text())
    edit(raw)
    digest = qencode_sha256(raw)
    raw["provenance"]["entry_hash_sha256"] = digest
    raw["entry_id"] = raw["entry_id"].split("__sha256_")[0] + "__sha256_" + digest[:16]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(raw))
    return path


def pinned_env(blas_threads: int = 1, blas_coretype: str | None = None, base=None,
               **extra: str) -> dict[str, str]:
    """An environment for a child process: ``base`` (default ``os.environ``) with all six
    pin variables of :data:`qencode_nb.notebook.pins.THREAD_VARS` set to
    ``blas_threads`` (and ``OPENBLAS_CORETYPE`` when ``blas_coretype`` is given,
    validated for this CPU), then ``extra``."""
    env = dict(os.environ if base is None else base)
    env.update(pin_environment(blas_threads, blas_coretype))
    env.update(extra)
    return env


#: Kernel variables the test pin sets; :func:`unpinned_env` removes them (the host's
#: ``OPENBLAS_L2_SIZE`` stays as the host set it).
KERNEL_PIN_VARS = tuple(v for v in BLAS_KERNEL_VARS if v != "OPENBLAS_L2_SIZE")


def unpinned_env(**extra: str) -> dict[str, str]:
    """``os.environ`` without any of the six pin variables nor the kernel pin
    (:data:`KERNEL_PIN_VARS`), then ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS + KERNEL_PIN_VARS}
    env.update(extra)
    return env


#: Fixtures that install packages from a registry (pip from PyPI); every test that
#: uses one, directly or through another fixture, must carry ``network``.
NETWORK_FIXTURES = frozenset({"stack",      # test_environments.py: SciPy 1.16.3 from PyPI
                              "v3_stack"})  # test_recorded_stack.py: QEncode's v3 pins


@contextlib.contextmanager
def private_stacks(base: Path):
    """Stacks (``QENCODE_NB_STACKS``) and their kernelspecs under ``base``, which Jupyter
    here and in every child process finds through ``JUPYTER_PATH``; yields the Jupyter
    prefix to give :func:`qencode_nb.environment.build.create_stack`, also the default
    where none is given (``QENCODE_NB_JUPYTER_PREFIX``).  The variables are restored
    afterwards."""
    prefix = base / "jupyter"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"))
        mp.setenv("QENCODE_NB_JUPYTER_PREFIX", str(prefix))
        mp.setenv("QENCODE_NB_STACKS", str(base / "stacks"))
        yield prefix


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Keep the tiers honest at collection: a heavy test is also slow (so the quick loop
    ``-m "not slow and not notebook"`` never selects it), a test using a
    :data:`NETWORK_FIXTURES` fixture is marked network, and a bitlevel test is also
    hostkind (its exact bits follow the kernels)."""
    bad = [f"{item.nodeid}: heavy without slow" for item in items
           if item.get_closest_marker("heavy") and not item.get_closest_marker("slow")]
    bad += [f"{item.nodeid}: uses {', '.join(sorted(used))} without the network marker"
            for item in items
            if (used := NETWORK_FIXTURES & set(getattr(item, "fixturenames", ())))
            and not item.get_closest_marker("network")]
    if bad:
        raise pytest.UsageError("test tiers: " + "; ".join(bad))
    for item in items:      # exact bits follow the kernels, so the host kind (issue 51)
        if item.get_closest_marker("bitlevel") and not item.get_closest_marker("hostkind"):
            item.add_marker(pytest.mark.hostkind)


@pytest.fixture(scope="session")
def shared_db() -> Path:
    if not SHARED_DB.is_dir():
        pytest.fail(f"the shared QEncode entries are missing: {SHARED_DB}")
    return SHARED_DB


@pytest.fixture(scope="session")
def python() -> str:
    return sys.executable


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """A ``browser`` test on a machine without Chromium skips before its fixtures (no
    site build, no JupyterLab), naming the Debian package and its install command; it
    fails instead where ``CI`` is set (tests/browser.py, :func:`require_chromium`)."""
    if item.get_closest_marker("browser"):
        from browser import require_chromium

        require_chromium()


@pytest.fixture(scope="session")
def chromium():
    """One real headless Chromium for the session (tests/browser.py); the browser
    tests open their own pages (``chromium.new_page()``) and close them."""
    from playwright.sync_api import sync_playwright

    from browser import launch

    with sync_playwright() as p:
        browser = launch(p)
        yield browser
        browser.close()


def pytest_sessionstart(session):
    """The tests read the forty real QEncode v4.4 entries from ``../shared/qencode-v4/db``
    (README, "Run the tests"); without them, say so once instead of a collection error."""
    if not SHARED_DB.is_dir():
        raise pytest.UsageError(
            f"the tests read the forty real QEncode v4.4 entries from {SHARED_DB}, which "
            "does not exist (the notebooks and the CLI do not need it). Fetch exactly "
            "those forty (and the three release files), each checked by its SHA-256: "
            f"`.venv/bin/qencode-nb data fetch --dir {SHARED_DB.parent} --only $(grep -v "
            f"'^#' tests/data/{SHARED_LIST.name})`; or copy a folder holding them there")


def needs_profile(name: str):
    """A skip marker for a test that runs under kernel profile ``name``
    (:data:`qencode_nb.notebook.blas_profiles.PROFILES`) when this CPU cannot run it,
    naming each copy's kernel and the CPU flags it lacks; on a CPU that runs it, no
    marker at all (issue 22: exactly those tests skip, nothing else)."""
    from qencode_nb.notebook import blas_profiles
    from qencode_nb.notebook.pins import cpu_flags

    missing = blas_profiles.missing_flags(blas_profiles.PROFILES[name], cpu_flags())
    return pytest.mark.skipif(bool(missing), reason=(
        f"this CPU cannot run the {name!r} kernel profile: "
        f"{blas_profiles.describe_missing(missing)}"))


#: The three host kinds this project runs on (README, "Run the tests"; CONTRIBUTING.md),
#: in words: :data:`qencode_nb.notebook.host_kinds.HOST_KINDS` (the fourth, ``unknown``, is
#: a host the profiles do not know, emulated only).
#: What decides the bits is the kernel profile a host resolves to, not the vendor: the
#: pin sets every copy's kernel, whatever the host presets.
HOST_KINDS = {name: kind.description for name, kind in host_kinds.HOST_KINDS.items()
              if name != "unknown"}
#: CPU flags a test passes where it means a kind of CPU, not this one (issue 51): every flag
#: an OpenBLAS coretype of :data:`~qencode_nb.notebook.blas_profiles.CORETYPE_CPU_FLAGS`
#: needs, less AMX (a Xeon with AVX-512 and avx512_bf16, as the project's Intel host) ...
AVX512_CPU = frozenset(f for need in blas_profiles.CORETYPE_CPU_FLAGS.values() for f in need
                       if not f.startswith("amx"))
#: ... and the same less ``avx512*`` (Zen 3, as its emulation shows it).
ZEN3_CPU = frozenset(host_kinds.HOST_KINDS["amd-zen3"].flags(set(AVX512_CPU)))
#: The kernel profile the tests run under on each host kind (conftest pins
#: ``resolve("reference").used``): the host kinds that measure a profile's rows.
PROFILE_HOST_KINDS = {"reference": ("intel-avx512", "amd-avx512-haswell"),
                      "portable": ("amd-zen3",)}


def profile_hosts(profile: str) -> str:
    """The host kinds whose tests run under kernel profile ``profile`` (in words)."""
    kinds = [HOST_KINDS[k] for k in PROFILE_HOST_KINDS[profile]]
    return f"{' or '.join(kinds)} (any CPU {'with' if profile == 'reference' else 'without'} " \
           "AVX-512)"


def _deciding_flags() -> str:
    """Each CPU flag the choice of the test profile reads, present (+) or absent (-):
    the flags of the reference profile's kernels, then the portable profile's
    (blas_profiles.CORETYPE_CPU_FLAGS)."""
    flags = blas_profiles.cpu_flags()
    need = dict.fromkeys(f for prof in (blas_profiles.REFERENCE, blas_profiles.PORTABLE)
                         for kernel in prof.coretypes.values()
                         for f in blas_profiles.CORETYPE_CPU_FLAGS[kernel])
    return " ".join(("+" if f in flags else "-") + f for f in need)


def coretype_missing(coretype: str) -> str | None:
    """Why this CPU cannot run OpenBLAS's ``coretype`` kernel (naming the CPU flags it
    lacks, :data:`qencode_nb.notebook.blas_profiles.CORETYPE_CPU_FLAGS`), or None."""
    flags = blas_profiles.cpu_flags()
    lack = [f for f in blas_profiles.CORETYPE_CPU_FLAGS[coretype] if f not in flags]
    return (f"needs OpenBLAS's {coretype} kernel, which needs the CPU "
            f"flag{'s' if len(lack) > 1 else ''} {', '.join(lack)}, which this CPU lacks"
            if lack else None)


def needs_coretype(coretype: str):
    """A skip marker for a test that pins OpenBLAS's ``coretype`` kernel where this CPU
    cannot run it, naming the missing CPU flags (Cooperlake: ``avx512_bf16``, which the
    Intel Xeon and the AMD EPYC with AVX-512 of this project have)."""
    reason = coretype_missing(coretype)
    return pytest.mark.skipif(reason is not None, reason=reason or "")


#: Why a :data:`reference_only` test does not run under another profile.
_REFERENCE_ONLY_REASON = (
    f"holds under the reference kernel triple only "
    f"({blas_profiles.triple_text(blas_profiles.REFERENCE.coretypes)}; runs on "
    f"{profile_hosts('reference')}), the tests run under {TEST_PROFILE!r}"
    + ("" if TEST_PROFILE != "portable" else ": this CPU cannot run reference ("
       + blas_profiles.describe_missing(blas_profiles.missing_flags(
           blas_profiles.REFERENCE, blas_profiles.cpu_flags()))
       + ")"))

#: A test whose exact expectation was measured under the reference triple only.
reference_only = pytest.mark.skipif(TEST_PROFILE != "reference", reason=_REFERENCE_ONLY_REASON)


def by_profile(values: dict):
    """The expectation measured under the test process's profile: ``values`` is
    ``{profile name: value}`` with a row for every profile of
    :data:`qencode_nb.notebook.blas_profiles.PROFILES` (tests/test_profile_tables.py
    checks every table in the tests).  A name that is not a profile fails the test; a
    table without a row for this process's profile skips it, naming the host kinds
    whose profile has the row."""
    unknown = sorted(set(values) - set(blas_profiles.PROFILES))
    if unknown:
        pytest.fail(f"by_profile: {unknown} are not kernel profiles; accepted: "
                    f"{', '.join(blas_profiles.PROFILES)}")
    if TEST_PROFILE not in values:
        pytest.skip(f"no value measured under the {TEST_PROFILE!r} kernel profile, which "
                    f"the tests run under here; the rows ({', '.join(values)}) run on "
                    + "; ".join(profile_hosts(p) for p in values))
    return values[TEST_PROFILE]


def pytest_report_header(config):
    """pytest's header says which half of the suite runs: the kernel profile the tests
    run under, the CPU flags that decided it, the host's preset and the kernels the pin
    measured (issue 34)."""
    from qencode_nb.notebook.fingerprint import cpu_identity
    from qencode_nb.notebook.pins import copy_kernels

    cpu = cpu_identity()
    preset = ", ".join(f"{v}={HOST_ENV[v]}" for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
                       if v in HOST_ENV) or "none"
    kind = host_kinds.emulated()
    emulation = ([f"qencode-nb host kind: emulated {kind.name} ({kind.description}; "
                  f"{host_kinds.EMULATE_VAR}, tests/as_host_kind.py) on this CPU"]
                 if kind else [])
    return emulation + [f"qencode-nb kernel profile: {TEST_PROFILE} (reference_only tests "
            f"{'run' if TEST_PROFILE == 'reference' else 'skip'}; runs on "
            f"{profile_hosts(TEST_PROFILE)})"
            + (f"; reference not used: {_RESOLVED.fallback}" if _RESOLVED.fallback else ""),
            f"qencode-nb CPU: {cpu['vendor']} {cpu['model']}; flags deciding the profile: "
            f"{_deciding_flags()}",
            f"qencode-nb host OpenBLAS preset: {preset} (overridden per copy by the pin); "
            f"kernels measured: {blas_profiles.triple_text(copy_kernels())}"]


def check_summary_against_table(table, summary, by):
    """A study's per-group summary (readout/summaries.py) recomputed from its table
    (pandas DataFrames; ``by`` the group column): every value must match."""
    assert list(summary[by]) == list(dict.fromkeys(table[by]))
    for _, s in summary.iterrows():
        g = table[(table[by] == s[by]) & (table["status"] == "done")]
        assert s["n"] == len(g) and s["n_failed"] == (table[by] == s[by]).sum() - len(g)
        assert s["n_distinct_energies"] == g["energy_hex"].nunique()
        assert set(s["energies_hex"].split(";")) == set(g["energy_hex"])
        assert s["min_error_mha"] == g["error_mha"].min()
        assert s["median_error_mha"] == g["error_mha"].median()
        assert s["max_error_mha"] == g["error_mha"].max()
        assert s["spread_mha"] == (g["energy"].max() - g["energy"].min()) * 1e3


#: The glyphs of the error axis label $|E - E_{\mathrm{exact}}|$ (mHa) as they stand in
#: an SVG with real text: matplotlib writes a mathtext label as one <text>, a <tspan> per
#: glyph, the subscript's glyphs last.
ERROR_LABEL_GLYPHS = ("|E", "E|", "(mHa)", "exact")


def svg_texts(path) -> list[str]:
    """The text of every ``<text>`` element of an SVG file, its glyphs joined without
    blanks (a figure saved with ``svg.fonttype: none``; a figure whose text is drawn as
    paths has none)."""
    import xml.etree.ElementTree as ET

    ns = "{http://www.w3.org/2000/svg}"
    return ["".join(t.strip() for t in el.itertext())
            for el in ET.parse(str(path)).iter(f"{ns}text")]


def svg_has_text(path, *parts: str) -> bool:
    """One ``<text>`` element of the SVG holds every part (each whitespace-free)."""
    return any(all(p in t for p in parts) for t in svg_texts(path))
