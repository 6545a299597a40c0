"""The numeric fingerprint of a run: everything below Python that decides the last bits.

Recorded in the ``provenance`` record (key ``numeric``) of every audit:

- every OpenBLAS copy loaded (numpy's, scipy's, PySCF's bundled one): library,
  version, kernel (threadpoolctl's ``architecture``), threads and file;
- numpy's enabled CPU features and the dispatch target of the float64 ufuncs
  an audit uses (:data:`UFUNCS`; ``numpy.lib.introspect.opt_func_info``);
- numba's target CPU (``NUMBA_CPU_NAME``, else LLVM's host CPU name);
- the C library (glibc) version, which supplies libm;
- the ``OPENBLAS_*``, ``NPY_*`` and ``NUMBA_*`` variables in force;
- the CPU vendor and model.

:func:`short_hash` hashes the parts that decide the bits: the kernels, versions
and threads of the OpenBLAS copies, numpy's version and ufunc dispatch targets,
and the libc version.  The CPU vendor and model, numba's target CPU and the
cache-size variables are recorded but left out of the hash: the same kernel
triple gives the same bits on an Intel Xeon and an AMD EPYC (40 of 40
fast-engine re-runs, numba kernels included, equal under Haswell on both, with
and without ``OPENBLAS_L2_SIZE=512``, numba targeting each host's own CPU).

Importing this module imports nothing heavy; :func:`collect` reads numpy only
when it is already loaded (the pin cell loads it).  :func:`measured_numerics` loads
the three copies and measures them: the key of every cache (issue 36).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

#: The float64 ufuncs an audit's arithmetic goes through (statevector updates,
#: rotations, exponentials and norms), whose numpy dispatch target is recorded.
UFUNCS = ("add", "multiply", "subtract", "absolute", "square", "sqrt", "sin", "cos",
          "exp", "log")

#: Prefixes of the environment variables recorded as in force.
ENV_PREFIXES = ("OPENBLAS_", "NPY_", "NUMBA_", "QENCODE_NB_BLAS_", "QENCODE_NB_EMULATE_")

#: Hex digits of :func:`short_hash`.
HASH_DIGITS = 12


def openblas_copies(pools: list[dict] | None = None) -> list[dict]:
    """Every OpenBLAS copy threadpoolctl sees: ``[{copy, library, version, kernel,
    threads, file}]`` sorted by copy (``copy``: numpy, scipy, pyscf, from the
    package folder the library sits in)."""
    from qencode_nb.notebook.pins import blas_pools, copy_of

    pools = blas_pools() if pools is None else pools
    out = [{"copy": copy_of(p.get("filepath")), "library": p.get("internal_api"),
            "version": p.get("version"), "kernel": p.get("architecture"),
            "threads": p.get("num_threads"),
            "file": os.path.basename(str(p.get("filepath") or ""))}
           for p in pools if p.get("internal_api") == "openblas"]
    return sorted(out, key=lambda c: (str(c["copy"]), c["file"]))


def numpy_dispatch() -> dict | None:
    """numpy's version, enabled CPU features and the dispatch target of each
    :data:`UFUNCS` float64 loop, or None when numpy is not loaded.

    ``{"version", "baseline": [...], "enabled": [...], "ufuncs": {name: target}}``.
    """
    np = sys.modules.get("numpy")
    if np is None:
        return None
    try:
        from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_features__
    except ImportError:      # numpy < 2
        from numpy.core._multiarray_umath import __cpu_baseline__, __cpu_features__
    ufuncs = {}
    try:
        from numpy.lib.introspect import opt_func_info

        info = opt_func_info(func_name="^(" + "|".join(UFUNCS) + ")$", signature="float64")
        for name in UFUNCS:
            loops = info.get(name) or {}
            targets = sorted({v["current"] for v in loops.values()
                              if isinstance(v, dict) and "current" in v})
            ufuncs[name] = "/".join(targets) or None
    except ImportError:      # numpy < 2.1 has no introspection
        ufuncs = {name: "unknown (numpy < 2.1)" for name in UFUNCS}
    return {"version": np.__version__, "baseline": list(__cpu_baseline__),
            "enabled": sorted(k for k, v in __cpu_features__.items() if v),
            "ufuncs": ufuncs}


def numba_target() -> str | None:
    """numba's target CPU: ``NUMBA_CPU_NAME`` when set, else LLVM's host CPU name
    (llvmlite, imported without numba), else None."""
    if os.environ.get("NUMBA_CPU_NAME"):
        return os.environ["NUMBA_CPU_NAME"]
    try:
        import llvmlite.binding as llvm
    except ImportError:
        return None
    return llvm.get_host_cpu_name()


def libc_version() -> str | None:
    """``glibc 2.36`` (the libm's library), or the platform's answer elsewhere."""
    try:
        return os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        import platform

        name, version = platform.libc_ver()
        return f"{name} {version}".strip() or None


def cpu_identity() -> dict:
    """``{"vendor", "model"}`` from /proc/cpuinfo (None where absent)."""
    out = {"vendor": None, "model": None}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "vendor_id" and out["vendor"] is None:
                    out["vendor"] = value.strip()
                elif key == "model name" and out["model"] is None:
                    out["model"] = value.strip()
    except OSError:
        pass
    return out


def env_in_force() -> dict:
    """The ``OPENBLAS_*``, ``NPY_*``, ``NUMBA_*``, ``QENCODE_NB_BLAS_*`` and
    ``QENCODE_NB_EMULATE_*`` (a test-only host emulation, :mod:`host_kinds`) variables set."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES)}


def short_hash(fp: dict) -> str:
    """The first :data:`HASH_DIGITS` hex digits of the SHA-256 of the bit-deciding
    parts of a fingerprint (see the module docstring)."""
    numpy_part = fp.get("numpy") or {}
    material = {
        "openblas": [[c.get("copy"), c.get("version"), c.get("kernel"), c.get("threads")]
                     for c in fp.get("openblas") or []],
        "numpy": [numpy_part.get("version"), numpy_part.get("ufuncs")],
        "libc": fp.get("libc"),
    }
    text = json.dumps(material, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_DIGITS]


def collect(pools: list[dict] | None = None) -> dict:
    """The fingerprint of this process.

    Returns ``{"hash": 12 hex digits, "openblas": [...], "numpy": {...} or None,
    "numba_cpu": str|None, "libc": str|None, "env": {...}, "cpu": {vendor, model}}``.
    """
    fp = {"openblas": openblas_copies(pools), "numpy": numpy_dispatch(),
          "numba_cpu": numba_target(), "libc": libc_version(), "env": env_in_force(),
          "cpu": cpu_identity()}
    fp["hash"] = short_hash(fp)
    return {"hash": fp.pop("hash"), **fp}


def measured_numerics(load: bool = True) -> dict:
    """The bit-deciding numeric environment of this process, as threadpoolctl and numpy
    measure it: what the rebuild cache and the re-run checkpoints are keyed by
    (issue 36), so that a cached result is served only to a process whose kernels
    would have computed it.

    Args:
        load: first import the OpenBLAS copies not yet loaded
            (:func:`qencode_nb.notebook.blas_copies.load_copy`: numpy,
            ``scipy.linalg``, PySCF's library), as the work the key stands for would:
            each copy picks its kernel when it loads (``OPENBLAS_CORETYPE`` then in
            force), so the kernel it runs is measured, never assumed from the variables
            or the profile a parent process named.  A copy that is not installed is
            left out.

    Returns:
        ``{"hash": 12 hex digits (:func:`short_hash` of the OpenBLAS copies, numpy's
        version and ufunc dispatch, libc), "kernels": {copy: kernel}, "threads":
        {copy: threads}}``.
    """
    if load:
        from qencode_nb.notebook.blas_copies import load_copy
        from qencode_nb.notebook.blas_profiles import COPIES

        for copy in COPIES:
            try:
                load_copy(copy)
            except ImportError:
                if copy == "numpy":
                    raise
    part = {"openblas": openblas_copies(), "numpy": numpy_dispatch(), "libc": libc_version()}
    return {"hash": short_hash(part),
            "kernels": {str(c["copy"]): c["kernel"] for c in part["openblas"]},
            "threads": {str(c["copy"]): c["threads"] for c in part["openblas"]}}


def kernel_triple(fp: dict | None) -> str:
    """``numpy SkylakeX, scipy SkylakeX, pyscf Prescott`` from a fingerprint (or a
    provenance record's ``numeric``); ``unknown`` when none is recorded."""
    copies = (fp or {}).get("openblas") or []
    return ", ".join(f"{c.get('copy')} {c.get('kernel')}" for c in copies) or "unknown"
