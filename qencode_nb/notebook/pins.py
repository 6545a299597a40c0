"""BLAS thread and BLAS-kernel pins, and the report of what actually runs.

The protocol (DESIGN.md, "The notebook contract"; QEncode's generator header):
thread limits are read by OpenBLAS/MKL/OpenMP when the library is loaded, so
they must be in ``os.environ`` before numpy is first imported; afterwards the
variables are silently ignored.  The BLAS *kernel* is part of the pin too:
OpenBLAS picks a CPU kernel at load time, and ``OPENBLAS_CORETYPE`` overrides
that choice (measured: LiH PAR/HEA needs ``Cooperlake`` to reproduce PySCF's
numbers bit-for-bit on an AMD EPYC with avx512_bf16).

This module imports neither numpy nor scipy at module level.  Only
:func:`pin` imports them, after the environment is set.
"""

from __future__ import annotations

import os
import sys

from qencode_nb.errors import PinError

#: The six thread variables set by the pin (DESIGN.md, notebook contract).
THREAD_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)

#: Variables that describe the OpenBLAS kernel choice; recorded in provenance.
BLAS_KERNEL_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")

#: CPU flags (as in /proc/cpuinfo) each OpenBLAS coretype needs to run.
#: Source: OpenBLAS ``driver/others/dynamic.c`` (the checks behind
#: ``support_avx2``/``support_avx512``/``support_avx512_bf16`` and the
#: Sapphire Rapids AMX test); names as OpenBLAS spells them in
#: ``OPENBLAS_CORETYPE`` and threadpoolctl's ``architecture``.
CORETYPE_CPU_FLAGS: dict[str, tuple[str, ...]] = {
    "Prescott": ("pni",),          # Linux names SSE3 "pni" in /proc/cpuinfo
    "Core2": ("ssse3",),
    "Nehalem": ("sse4_2",),
    "Barcelona": ("sse4a",),
    "Sandybridge": ("avx",),
    "Haswell": ("avx2", "fma"),
    "Zen": ("avx2", "fma"),
    "SkylakeX": ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"),
    "Cooperlake": ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl",
                   "avx512_bf16"),
    "SapphireRapids": ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl",
                       "avx512_bf16", "amx_bf16", "amx_tile"),
}


def cpu_flags() -> set[str]:
    """CPU feature flags of this machine from ``/proc/cpuinfo`` (Linux).

    Returns an empty set where the file does not exist (macOS, Windows).
    """
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def runnable_coretypes(flags: set[str] | None = None) -> list[str]:
    """The OpenBLAS coretypes this CPU can run, in :data:`CORETYPE_CPU_FLAGS` order."""
    flags = cpu_flags() if flags is None else flags
    return [name for name, need in CORETYPE_CPU_FLAGS.items()
            if all(f in flags for f in need)]


def check_coretype(coretype: str, flags: set[str] | None = None) -> str:
    """Validate an ``OPENBLAS_CORETYPE`` value for this CPU.

    Matching is case-insensitive; the canonical spelling is returned.

    Raises:
        PinError: unknown name (the error lists the accepted names), or a
            kernel whose instructions this CPU lacks (the error names the
            missing flags and the kernels this CPU can run).
    """
    by_lower = {name.lower(): name for name in CORETYPE_CPU_FLAGS}
    name = by_lower.get(str(coretype).lower())
    if name is None:
        raise PinError(
            f"blas_coretype {coretype!r} is not an OpenBLAS coretype; accepted: "
            + ", ".join(CORETYPE_CPU_FLAGS))
    flags = cpu_flags() if flags is None else flags
    missing = [f for f in CORETYPE_CPU_FLAGS[name] if f not in flags]
    if missing:
        raise PinError(
            f"blas_coretype {name!r} needs CPU flags {', '.join(missing)}, which this "
            f"CPU lacks; this CPU can run: {', '.join(runnable_coretypes(flags)) or 'none known'}")
    return name


def check_thread_count(blas_threads) -> int:
    """Validate a requested BLAS thread count (a positive int)."""
    if isinstance(blas_threads, bool) or not isinstance(blas_threads, int) or blas_threads < 1:
        raise PinError(f"blas_threads {blas_threads!r} is not accepted; accepted: an integer >= 1")
    return blas_threads


def pin_environment(blas_threads: int = 1, blas_coretype: str | None = None) -> dict[str, str]:
    """The environment variables that pin ``blas_threads`` (and the BLAS kernel).

    Returns a dict of the six :data:`THREAD_VARS` set to ``str(blas_threads)``,
    plus ``OPENBLAS_CORETYPE`` when ``blas_coretype`` is given (validated with
    :func:`check_coretype`).  Used by the pin cell and by the papermill engine
    for the Jupyter kernel's launch environment.
    """
    n = check_thread_count(blas_threads)
    env = {var: str(n) for var in THREAD_VARS}
    if blas_coretype:
        env["OPENBLAS_CORETYPE"] = check_coretype(blas_coretype)
    return env


def blas_pools() -> list[dict]:
    """Every thread pool threadpoolctl sees in this process, as plain dicts.

    Keys: ``user_api`` ("blas"/"openmp"), ``internal_api``, ``prefix``,
    ``filepath``, ``version``, ``num_threads``, and for OpenBLAS
    ``architecture`` (the BLAS kernel in use) and ``threading_layer``.
    """
    from threadpoolctl import threadpool_info

    return [dict(p) for p in threadpool_info()]


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


def pin(blas_threads: int = 1, blas_coretype: str | None = None) -> dict:
    """Pin BLAS threads (and the OpenBLAS CPU kernel), then import numpy and scipy.

    The pin cell of every notebook calls this before anything else imports
    numpy.  Steps:

    1. If numpy or scipy is already imported, the pin can no longer take
       effect through the environment: refuse unless the BLAS pools already
       run ``blas_threads`` threads (and the requested kernel).
    2. Set the six :data:`THREAD_VARS` (and ``OPENBLAS_CORETYPE``).
    3. Import numpy and ``scipy.linalg`` (scipy wheels carry a second
       OpenBLAS).
    4. Measure with threadpoolctl.  OpenBLAS caps its pool at the number of
       cores; a larger request is applied through threadpoolctl's runtime
       limit and measured again.  Every threaded BLAS pool must report
       ``blas_threads``.  With a coretype, pools reporting another
       ``architecture`` are listed (:func:`kernel_mismatches`), not refused.

    Args:
        blas_threads: requested BLAS threads (int >= 1).
        blas_coretype: optional ``OPENBLAS_CORETYPE`` (e.g. "Cooperlake").

    Returns:
        ``{"blas_threads": measured int, "blas_coretype": the
        OPENBLAS_CORETYPE in force (requested, or inherited from the
        environment) or None, "pools": [threadpoolctl dicts],
        "kernel_mismatches": [str]}``.

    Raises:
        PinError: numpy/scipy imported earlier with another count, or
            without the requested kernel in the environment; no BLAS pool
            found; a pool not running the requested count; a coretype this
            CPU cannot run.
    """
    env = pin_environment(blas_threads, blas_coretype)
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
    os.environ.update(env)
    import numpy  # noqa: F401  (the point: load BLAS under the pins)
    import scipy.linalg  # noqa: F401  (scipy's own OpenBLAS)

    pools = blas_pools()
    have = measured_blas_threads(pools)
    if have != blas_threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=blas_threads, user_api="blas")
        pools = blas_pools()
        have = measured_blas_threads(pools)
    if have != blas_threads:
        raise PinError(f"requested {blas_threads} BLAS thread(s) but threadpoolctl "
                       f"measures {have}")
    in_force = os.environ.get("OPENBLAS_CORETYPE") or None
    return {"blas_threads": have, "blas_coretype": in_force, "pools": pools,
            "kernel_mismatches": kernel_mismatches(pools, in_force)}


def kernel_mismatches(pools: list[dict], coretype: str | None) -> list[str]:
    """OpenBLAS pools whose reported ``architecture`` is not ``coretype``.

    Not an error: an OpenBLAS build maps a requested coretype to the nearest
    kernel it was built with (measured here: numpy 2.2.6's OpenBLAS 0.3.29
    reports SkylakeX for ``OPENBLAS_CORETYPE=Cooperlake`` and Haswell for
    Zen, scipy 1.13.1's 0.3.27 reports Cooperlake and Zen).  The provenance
    records the list so the kernel actually in force is never hidden.
    """
    if not coretype:
        return []
    return [f"{p.get('filepath')} runs {p.get('architecture')}" for p in pools
            if p.get("internal_api") == "openblas"
            and str(p.get("architecture", "")).lower() != coretype.lower()]


def blas_report() -> dict:
    """Provenance of the BLAS layer: every pool plus the kernel variables.

    Returns ``{"pools": [{library, version, architecture, threads, user_api,
    threading_layer, filepath}], "OPENBLAS_CORETYPE": str|None,
    "OPENBLAS_L2_SIZE": str|None, "env": {THREAD_VARS...}}``.
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
    report["env"] = {var: os.environ.get(var) for var in THREAD_VARS}
    return report
