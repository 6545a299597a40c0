"""The rebuild cache's key: what determines a rebuild, and its SHA-256.

Key: SHA-256 of the canonical JSON of :func:`key_material`: every field of
the declared procedure that determines the result (geometry, basis, charge,
spin, active space, orbital optimisation, mapping, Hamiltonian source,
``classical``, ``verify_tol``), the cache's format version, a SHA-256 of the
code that computes the result (:data:`CODE_FILES`), the installed versions of
pyscf, pennylane, openfermion, numpy and scipy, the **measured** numeric environment
of the process (:func:`qencode_nb.notebook.fingerprint.measured_numerics`: the kernel
and threads of each of the three OpenBLAS copies, numpy's ufunc dispatch, libc; PySCF's
kernel changes its CASSCF orbitals, the rebuilt Hamiltonian and even the Z2 symmetry
count), the thread variables (PySCF's OpenMP reads them; the thread count moved an N2
CASCI root by 2e-5 Ha) and the CPU model.  Kernels are measured after the copies load,
never read from ``OPENBLAS_CORETYPE`` or the kernel profile's name: a child process
that inherits a profile's variables without pinning loads PySCF's copy with numpy's
kernel, and its key says so (issue 36; format 3).

Also the canonical JSON and its SHA-256 (:func:`canonical_json`,
:func:`sha256_json`), which the store uses for file checksums.  Importing this
module imports nothing heavy.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from pathlib import Path

from qencode_nb.errors import CapabilityMissing, EntryError
from qencode_nb.rules import OF_BRIDGE_VERIFY_TOL_HA

FORMAT = "qencode-nb-rebuild-cache"
FORMAT_VERSION = 3
"""Bump when the payload layout or its meaning changes (3: the environment part holds
the measured kernels, issue 36)."""

KEY_PACKAGES = ("pyscf", "pennylane", "openfermion", "numpy", "scipy")
"""Installed distributions whose versions enter the key."""

CODE_FILES = ("chemistry.py", "pauli.py", "of_bridge.py", "tapering.py", "exact.py",
              "rebuild.py")
"""Modules of ``qencode_nb/hamiltonian/`` whose source enters the key (any edit
invalidates): the chemistry, the Pauli-term conversion, the of_bridge
Hamiltonian, the tapering, the exact diagonalisation and the rebuild glue."""

BUILDABLE_SOURCES = ("of_bridge",)
"""Hamiltonian paths this version can rebuild.  ``None`` (an entry that does
not declare its source) builds ``of_bridge``, the generator's default since
v4.4; ``pennylane_native`` raises :class:`CapabilityMissing`."""


def package_version(name: str) -> str:
    """Installed version of distribution ``name``, or ``"not installed"``."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def files_sha256(folder: Path, names) -> str:
    """SHA-256 (hex) of the names and bytes of the files ``names`` in ``folder``, in
    order (a key's code part: any edit of one of them changes it)."""
    digest = hashlib.sha256()
    for name in names:
        digest.update(name.encode() + b"\0")
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()


def code_sha256() -> str:
    """:func:`files_sha256` of :data:`CODE_FILES`."""
    return files_sha256(Path(__file__).resolve().parent, CODE_FILES)


def cpu_model() -> str:
    """``model name`` of ``/proc/cpuinfo``, else ``platform.processor()`` or ``"unknown"``."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def environment_material() -> dict:
    """The environment part of the key: versions, code, the measured numeric
    environment (loads numpy, ``scipy.linalg`` and ``pyscf.lib`` when not yet loaded:
    :func:`qencode_nb.notebook.fingerprint.measured_numerics`), the thread variables,
    the CPU."""
    from qencode_nb.notebook.fingerprint import measured_numerics
    from qencode_nb.notebook.pins import THREAD_VARS

    return {
        "versions": {name: package_version(name) for name in KEY_PACKAGES},
        "code_sha256": code_sha256(),
        "numeric": measured_numerics(),
        "thread_env": {var: os.environ.get(var) for var in THREAD_VARS},
        "cpu": {"machine": platform.machine(), "model": cpu_model(),
                "count": os.cpu_count()},
    }


def built_source(hamiltonian_source):
    """The Hamiltonian path a rebuild takes for a declared ``hamiltonian_source``.

    ``None`` (undeclared) -> ``"of_bridge"``; a :data:`BUILDABLE_SOURCES` value
    is returned as is.

    Raises:
        CapabilityMissing: ``"pennylane_native"`` (not implemented).
        EntryError: any other value (field ``provenance.hamiltonian_source``).
    """
    if hamiltonian_source is None:
        return "of_bridge"
    if hamiltonian_source in BUILDABLE_SOURCES:
        return hamiltonian_source
    if hamiltonian_source == "pennylane_native":
        raise CapabilityMissing(
            "re-running on a rebuilt 'pennylane_native' Hamiltonian is not implemented "
            "(the Hamiltonian check builds that path only to prove which one a stored "
            f"Hamiltonian equals); rebuilt for a re-run: {', '.join(BUILDABLE_SOURCES)}")
    raise EntryError(f"hamiltonian_source {hamiltonian_source!r} is not accepted; "
                     "accepted: of_bridge, pennylane_native, or undeclared (null)",
                     field="provenance.hamiltonian_source")


def key_material(geometry: str, basis: str, charge: int, spin: int,
                 num_electrons: int, num_spatial_orbitals: int,
                 orbital_optimization: str, mapping: str,
                 hamiltonian_source: str | None = "of_bridge", *,
                 classical: bool = False,
                 verify_tol: float | None = OF_BRIDGE_VERIFY_TOL_HA,
                 environment: dict | None = None, light: bool = False,
                 tapering_rule: str = "v4") -> dict:
    """Everything that determines a rebuild, as a JSON-able dict.

    ``{"format", "format_version", "problem": {...}, "environment": {...}}``.
    ``hamiltonian_source`` enters as the path actually built
    (:func:`built_source`: ``None`` -> ``"of_bridge"``); ``light`` enters only
    when true.  ``environment`` defaults to :func:`environment_material`.

    Raises:
        CapabilityMissing, EntryError: as :func:`built_source`.
    """
    problem = {
        "geometry": geometry, "basis": basis, "charge": charge, "spin": spin,
        "active_space": [num_electrons, num_spatial_orbitals],
        "orbital_optimization": orbital_optimization, "mapping": mapping,
        "hamiltonian_source": built_source(hamiltonian_source),
        "classical": bool(classical), "verify_tol": verify_tol,
    }
    if light:   # only then, so that the keys of full rebuilds do not change
        problem["light"] = True
    if tapering_rule != "v4":     # likewise (schema 3.0.0's real-part strip)
        problem["tapering_rule"] = tapering_rule
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "problem": problem,
            "environment": environment_material() if environment is None else environment}


def canonical_json(obj) -> bytes:
    """Canonical JSON bytes: sorted keys, no spaces, ASCII, NaN allowed."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=True).encode()


def sha256_json(obj) -> str:
    """SHA-256 (hex) of :func:`canonical_json` of ``obj``."""
    return hashlib.sha256(canonical_json(obj)).hexdigest()


def cache_key(*args, **kwargs) -> str:
    """SHA-256 (hex) of :func:`key_material` (same arguments)."""
    return sha256_json(key_material(*args, **kwargs))
