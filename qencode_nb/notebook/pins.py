"""BLAS thread and BLAS-kernel pins, and the report of what actually runs.

The protocol (docs/explanations/notebook-contract.md; QEncode's generator header):
thread limits are read by OpenBLAS/MKL/OpenMP when the library is loaded, so
they must be in ``os.environ`` before numpy is first imported; afterwards the
variables are silently ignored.  The BLAS *kernel* is part of the pin too:
OpenBLAS picks a CPU kernel at load time, and ``OPENBLAS_CORETYPE`` overrides
that choice.  An audit loads three OpenBLAS copies (numpy's, scipy's, PySCF's);
each reads the variable when it loads, so :func:`pin` loads them one after the
other, each under the kernel its profile names
(:mod:`qencode_nb.notebook.blas_profiles`: the kernel triple, not the
CPU vendor, decides the last bits).

This module imports neither numpy nor scipy at module level.  Only
:func:`pin` imports them, after the environment is set.
"""

from __future__ import annotations

import os
import sys

from qencode_nb.errors import PinError
from qencode_nb.notebook import blas_copies, blas_profiles, host_kinds

#: The six thread variables set by the pin (docs/explanations/notebook-contract.md).
THREAD_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)

#: How idle pool threads wait, set with the thread counts: asleep, not spinning.
#: GNU libgomp (PySCF's OpenMP) spins up to ``GOMP_SPINCOUNT`` before it sleeps unless
#: ``OMP_WAIT_POLICY=PASSIVE`` (libgomp manual, "OMP_WAIT_POLICY"); OpenBLAS's server
#: threads poll for 2**n cycles after each call, ``OPENBLAS_THREAD_TIMEOUT=n`` with n in
#: 4..30, 28 by default (OpenBLAS ``driver/others/blas_server.c``; all three copies read
#: it).  Two 2-thread runs side by side on 2 cores spin into each other's cores: a cold
#: H6 CASSCF audit took 23-53 s each with the default waits, 16.5-18 s with these, and
#: 17.4 / 17.2 s alone (issue 37, item 3; 2-core AMD EPYC).  Only waiting changes: the
#: arithmetic is the same, so these are no cache or checkpoint key; at 1 thread there is
#: no idle thread.
IDLE_WAIT_VARS = {"OMP_WAIT_POLICY": "PASSIVE", "OPENBLAS_THREAD_TIMEOUT": "4"}

#: Variables that describe the OpenBLAS kernel choice; recorded in provenance.
BLAS_KERNEL_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "NPY_DISABLE_CPU_FEATURES",
                    "QENCODE_NB_BLAS_PROFILE")

#: Set at launch to the kernel profile in force (``reference``, ``portable``): what a
#: process was asked to run, recorded in the fingerprint's environment.  Never a cache
#: key: the rebuild cache and the checkpoints are keyed by the kernels measured
#: (:func:`qencode_nb.notebook.fingerprint.measured_numerics`, issue 36).
PROFILE_VAR = "QENCODE_NB_BLAS_PROFILE"

# The OpenBLAS coretypes, the CPU flags each needs, and their checks live with the
# kernel profiles (one place); re-exported here, where callers have always found them.
from qencode_nb.notebook.blas_profiles import (  # noqa: E402,F401
    CORETYPE_CPU_FLAGS, cpu_flags, runnable_coretypes)


def pin_environment(blas_threads: int = 1, blas_coretype: str | None = None,
                    release=None) -> dict[str, str]:
    """The environment variables that pin ``blas_threads`` (and the BLAS kernel) at
    launch, before numpy loads.

    Returns a dict of the six :data:`THREAD_VARS` set to ``str(blas_threads)``,
    :data:`IDLE_WAIT_VARS` (idle threads sleep), plus, where ``blas_coretype`` resolves to a kernel
    (:func:`qencode_nb.notebook.blas_profiles.resolve`), ``OPENBLAS_CORETYPE``
    for numpy's copy (the first to load), ``NPY_DISABLE_CPU_FEATURES`` (the AVX-512
    loops a profile turns off, else empty) and :data:`PROFILE_VAR`.  ``host``/None
    leaves an inherited ``OPENBLAS_CORETYPE`` as it is; ``reference`` on a CPU
    without AVX-512 pins the ``portable`` profile, and for an entry whose ``release`` triple
    (a KernelProfile, v3's) that triple (:func:`blas_profiles.resolve`).
    Used by the pin cell and by the papermill engine for the Jupyter kernel's
    launch environment.  The values are checked before (:mod:`qencode_nb.options`,
    :func:`~qencode_nb.options.check_threads`, :func:`~qencode_nb.options.check_coretype`).

    Raises:
        PinError: kernels this CPU cannot run (:func:`blas_profiles.resolve`).
    """
    return launch_environment(blas_threads,
                              blas_profiles.resolve(blas_coretype, release=release))


def launch_environment(blas_threads: int, resolution) -> dict[str, str]:
    """:func:`pin_environment` of a resolved kernel choice
    (:class:`blas_profiles.Resolution`): the six :data:`THREAD_VARS`,
    :data:`IDLE_WAIT_VARS` and numpy's kernel variables (:func:`profile_environment`)."""
    env = {var: str(blas_threads) for var in THREAD_VARS}
    env.update(IDLE_WAIT_VARS)
    env.update(profile_environment(resolution, "numpy"))
    return env


def profile_environment(resolution, copy: str, own_choice: bool = False) -> dict[str, str]:
    """The kernel variables in force while ``copy`` (:data:`blas_profiles.COPIES`)
    loads under ``resolution``: for numpy (the first copy) :data:`PROFILE_VAR` (the
    profile, ``host`` or the coretype used), always, so that nothing inherited from
    a parent process names another profile, and under a named profile or a kernel spec
    (:func:`blas_profiles.kernel_spec`) ``NPY_DISABLE_CPU_FEATURES`` (its list, else
    empty), and ``OPENBLAS_L2_SIZE`` where a kernel spec names ``l2`` (left set for the
    later copies; without it an inherited value stays); then ``OPENBLAS_CORETYPE``
    where the copy has a kernel (``host`` keeps the inherited variables).

    Where this process emulates a host kind (:mod:`host_kinds`, test-only), numpy's list
    also holds the CPU features that kind lacks, and with ``own_choice`` (the pin loading
    the copies, nothing inherited in ``OPENBLAS_CORETYPE``) a copy without a kernel loads
    under the one OpenBLAS picks by itself on that kind."""
    env = {}
    if copy == "numpy":
        env[PROFILE_VAR] = resolution.used
        if blas_profiles.is_named(resolution):
            env["NPY_DISABLE_CPU_FEATURES"] = " ".join(
                host_kinds.numpy_disable(resolution.numpy_disable))
        if getattr(resolution, "l2", None):      # a kernel spec's l2: every copy reads it
            env["OPENBLAS_L2_SIZE"] = str(resolution.l2)
    kernel = resolution.coretypes.get(copy) or (host_kinds.host_kernel(copy) if own_choice
                                                else None)
    if kernel:
        env["OPENBLAS_CORETYPE"] = kernel
    return env


def blas_pools() -> list[dict]:
    """Every thread pool threadpoolctl sees in this process, as plain dicts.

    Keys: ``user_api`` ("blas"/"openmp"), ``internal_api``, ``prefix``,
    ``filepath``, ``version``, ``num_threads``, and for OpenBLAS
    ``architecture`` (the BLAS kernel in use) and ``threading_layer``.

    The copies of an emulated host kind without an OpenBLAS (:func:`host_kinds.hidden_copies`,
    test-only: a numpy on Apple's Accelerate) are left out, as threadpoolctl would not
    see them there.
    """
    from threadpoolctl import threadpool_info

    hidden = host_kinds.hidden_copies()
    return [dict(p) for p in threadpool_info()
            if not (hidden and copy_of(p.get("filepath")) in hidden)]


def measured_blas_threads(pools: list[dict] | None = None) -> int:
    """The BLAS thread count actually in force, as threadpoolctl measures it.

    Returns the common ``num_threads`` of the BLAS pools whose threading is
    enabled (an OpenBLAS built single-threaded reports ``threading_layer``
    "disabled" and always runs one thread; it is not counted).

    Raises:
        PinError: no BLAS pool is loaded (a check that finds nothing must
            never pass), or the pools disagree.
    """
    pools = blas_pools() if pools is None else pools
    blas = [p for p in pools if p.get("user_api") == "blas"]
    if not blas:
        raise PinError("threadpoolctl found no BLAS library in this process; "
                       "the thread pin cannot be verified")
    threaded = [p for p in blas if p.get("threading_layer") != "disabled"] or blas
    counts = {p["num_threads"] for p in threaded}
    if len(counts) != 1:
        raise PinError("BLAS pools run different thread counts: "
                       + "; ".join(f"{p['filepath']}: {p['num_threads']}" for p in threaded))
    return counts.pop()


def copy_of(filepath: str | None) -> str | None:
    """The package whose OpenBLAS copy lives at ``filepath`` (``numpy``, ``scipy``,
    ``pyscf``, from the folder under ``site-packages`` or ``dist-packages``:
    ``numpy.libs`` -> numpy), or
    None for a library outside a package."""
    from pathlib import Path

    parts = Path(str(filepath or "")).parts
    for folder in ("site-packages", "dist-packages"):   # pip's, Debian's
        if folder in parts and parts.index(folder) + 1 < len(parts):
            return parts[parts.index(folder) + 1].split(".")[0]
    return None


def copy_kernels(pools: list[dict] | None = None) -> dict:
    """``{copy: architecture}`` of every OpenBLAS copy loaded (threadpoolctl's
    ``architecture``, the kernel in use), keyed by :func:`copy_of`, in
    :data:`blas_profiles.COPIES` order (then any other copy by name), whatever order the
    libraries were loaded in."""
    pools = blas_pools() if pools is None else pools
    found = {copy_of(p.get("filepath")) or p.get("filepath"): p.get("architecture")
             for p in pools if p.get("internal_api") == "openblas"}
    rank = {c: i for i, c in enumerate(blas_profiles.COPIES)}
    return dict(sorted(found.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))


def kernel_mismatch(copy: str, ran: str | None, asked: str) -> str:
    """``numpy's OpenBLAS runs SkylakeX (asked: Cooperlake)``: one entry of the pin's
    ``kernel_mismatches`` (a copy whose OpenBLAS build lacks the asked kernel maps it to
    its nearest one)."""
    return f"{copy}'s OpenBLAS runs {ran} (asked: {asked})"


def pin(blas_threads: int = 1, blas_coretype: str | None = None,
        release=None) -> dict:
    """Pin BLAS threads and the OpenBLAS kernel of every copy, then load the copies.

    The pin cell of every notebook calls this before anything else imports
    numpy.  Steps:

    1. Resolve ``blas_coretype`` (:func:`blas_profiles.resolve`: a profile such
       as ``reference``, ``host``/None, or one OpenBLAS coretype); ``reference``
       on a CPU without AVX-512 falls back to ``portable`` (without AVX2 to the
       host's kernels), saying why.
    2. If numpy or scipy is already imported, the pin can no longer take
       effect through the environment: refuse unless the BLAS pools already
       run ``blas_threads`` threads (and the requested kernels).
    3. Set the six :data:`THREAD_VARS`, then load the copies in
       :data:`blas_profiles.COPIES` order (numpy, ``scipy.linalg``, PySCF's
       ``libnp_helper``: :func:`blas_copies.load_copy`),
       each with ``OPENBLAS_CORETYPE`` set to its kernel while it loads (an
       OpenBLAS copy reads the variable once, when it loads).  Afterwards
       ``OPENBLAS_CORETYPE`` holds numpy's value again (the launch value).
    4. Measure with threadpoolctl.  OpenBLAS caps its pool at the number of
       cores; a larger request is applied through threadpoolctl's runtime
       limit and measured again.  Every threaded BLAS pool must report
       ``blas_threads``.  Copies reporting another ``architecture`` than asked
       are listed (``kernel_mismatches``: an OpenBLAS build maps a kernel it
       lacks to its nearest one; measured: numpy 2.2.6's OpenBLAS 0.3.29 reports
       SkylakeX for Cooperlake and Haswell for Zen), not refused.  Where
       threadpoolctl finds no BLAS library at all (a numpy on Apple's Accelerate),
       nothing can measure the threads: ``blas_threads`` is None and ``unmeasured``
       says why, unless kernels were asked for, which cannot then be checked
       (PinError).

    Args:
        blas_threads: requested BLAS threads (int >= 1, checked before:
            :func:`qencode_nb.options.check_threads`).
        blas_coretype: a ``blas_coretype`` value (see step 1).
        release: the audited entry's release triple (a
            :class:`~qencode_nb.notebook.blas_profiles.KernelProfile`, or None;
            :func:`qencode_nb.environment.choice.release_triple`): with ``reference``,
            that triple.

    Returns:
        ``{"blas_threads": measured int (None: unmeasured), "blas_coretype": the OPENBLAS_CORETYPE
        in force when numpy loaded (requested, or inherited) or None,
        "profile": Resolution.to_record() plus "kernels" ({copy: measured
        architecture}), "pools": [threadpoolctl dicts], "kernel_mismatches":
        [str]}``, and ``"unmeasured": why`` where no BLAS pool was found.

    Raises:
        PinError: numpy/scipy imported earlier with another count, or
            without the requested kernel in the environment; no BLAS pool
            found where kernels were asked for; a pool not running the requested
            count; a ``blas_coretype`` this CPU cannot run.
    """
    resolution = blas_profiles.resolve(blas_coretype, release=release)
    env = launch_environment(blas_threads, resolution)
    coretype = env.get("OPENBLAS_CORETYPE")
    preloaded = sorted(m for m in ("numpy", "scipy") if m in sys.modules)
    if preloaded:
        pools = blas_pools()
        have = measured_blas_threads(pools)
        if have != blas_threads:
            raise PinError(
                f"{' and '.join(preloaded)} was imported before the pin cell with "
                f"{have} BLAS thread(s); the pin to {blas_threads} cannot take effect "
                "any more. Run the notebook through the qencode-nb papermill engine "
                "(papermill --engine qencode-nb, or `qencode-nb audit`), which sets the "
                "pins in the Jupyter kernel's environment at launch, or remove the startup "
                "code that imports numpy")
        if coretype and os.environ.get("OPENBLAS_CORETYPE") != coretype:
            raise PinError(
                f"{' and '.join(preloaded)} was imported before the pin cell without "
                f"OPENBLAS_CORETYPE={coretype}; OpenBLAS picks its kernel when it loads, "
                "so the BLAS kernel pin cannot take effect any more. Run the notebook through "
                "the qencode-nb papermill engine, which sets it at Jupyter kernel launch")
    own_choice = "OPENBLAS_CORETYPE" not in os.environ   # each copy picks its own kernel
    os.environ.update(env)
    launch = os.environ.get("OPENBLAS_CORETYPE")
    try:
        for copy in blas_profiles.COPIES:
            os.environ.update(profile_environment(resolution, copy, own_choice))
            try:
                blas_copies.load_copy(copy)
            except (ImportError, OSError):
                if copy == "numpy":   # scipy's / PySCF's copy absent: not loaded
                    raise
    finally:
        if launch is None:
            os.environ.pop("OPENBLAS_CORETYPE", None)
        else:
            os.environ["OPENBLAS_CORETYPE"] = launch

    pools = blas_pools()
    if not any(p.get("user_api") == "blas" for p in pools):
        return _unmeasured(blas_threads, resolution, launch, pools)
    have = measured_blas_threads(pools)
    if have != blas_threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=blas_threads, user_api="blas")
        pools = blas_pools()
        have = measured_blas_threads(pools)
    if have != blas_threads:
        raise PinError(f"requested {blas_threads} BLAS thread(s) but threadpoolctl "
                       f"measures {have}")
    kernels = copy_kernels(pools)
    profile = resolution.to_record()
    profile["kernels"] = kernels
    mismatches = [kernel_mismatch(copy, kernels.get(copy), want)
                  for copy, want in resolution.coretypes.items()
                  if want and copy in kernels
                  and str(kernels.get(copy)).lower() != want.lower()]
    return {"blas_threads": have, "blas_coretype": launch or None, "profile": profile,
            "pools": pools, "kernel_mismatches": mismatches}


def _unmeasured(blas_threads: int, resolution, launch, pools) -> dict:
    """:func:`pin`'s result where threadpoolctl finds no BLAS library at all (a numpy on
    Apple's Accelerate, which it cannot measure; issue 51): the thread variables are set
    and nothing can measure them, so ``blas_threads`` is None and ``unmeasured`` says why.
    Raises PinError where the resolution asked for kernels (a pin it promised could not be
    checked to take)."""
    asked = {c: k for c, k in resolution.coretypes.items() if k}
    why = ("threadpoolctl finds no BLAS library in this process (another BLAS, e.g. Apple's "
           "Accelerate, or none it can measure)")
    if asked:
        raise PinError(f"{why}: the kernel pin ({blas_profiles.triple_text(asked)}) cannot "
                       "be checked; use blas_coretype 'host' on this host")
    profile = resolution.to_record()
    profile["kernels"] = {}
    return {"blas_threads": None, "blas_coretype": launch or None, "profile": profile,
            "pools": pools, "kernel_mismatches": [],
            "unmeasured": f"{why}: the thread variables are set to {blas_threads}, their "
                          "effect is not measured"}


def blas_report() -> dict:
    """Provenance of the BLAS layer: every pool plus the kernel variables.

    Returns ``{"pools": [{library, version, architecture, threads, user_api,
    threading_layer, filepath}], "OPENBLAS_CORETYPE": str|None,
    "OPENBLAS_L2_SIZE": str|None, "env": {THREAD_VARS..., IDLE_WAIT_VARS...}}``.
    """
    pools = []
    for p in blas_pools():
        pools.append({
            "library": p.get("internal_api"),
            "version": p.get("version"),
            "architecture": p.get("architecture"),
            "threads": p.get("num_threads"),
            "user_api": p.get("user_api"),
            "threading_layer": p.get("threading_layer"),
            "filepath": p.get("filepath"),
        })
    report = {"pools": pools}
    for var in BLAS_KERNEL_VARS:
        report[var] = os.environ.get(var)
    report["env"] = {var: os.environ.get(var) for var in (*THREAD_VARS, *IDLE_WAIT_VARS)}
    return report
