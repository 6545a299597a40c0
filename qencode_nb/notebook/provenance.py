"""Provenance of a re-run: versions against the entry's pins, git, platform, BLAS.

Tier 3 (bit-identical) is only claimed on the reference environment
(docs/explanations/notebook-contract.md): every pin of the entry's
``provenance.tool_versions`` installed,
one BLAS thread as measured, and the BLAS kernel where the entry records it.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from qencode_nb.notebook import pins as threads

#: ``tool_versions`` keys that are packages (distribution names on PyPI).
PINNED_PACKAGES = ("pyscf", "pennylane", "openfermion", "numpy", "scipy")
#: ``tool_versions`` keys that are not package pins.
NOT_PINS = ("git_commit",)

from qencode_nb.paths import ROOT  # noqa: E402


def _name_version(dist) -> tuple[str | None, str | None]:
    """``(Name, Version)`` from a distribution's metadata headers only.

    ``Distribution.metadata`` parses the whole file, long description included
    (slow over every installed distribution, in every audit);
    the headers end at the first blank line, and the stdlib header parser
    stops there."""
    from email.parser import HeaderParser

    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    head = HeaderParser().parsestr(text)
    return head["Name"], head["Version"]


def installed_version(dist: str) -> str | None:
    """Installed version of a distribution, or None when absent."""
    try:
        return _name_version(metadata.distribution(dist))[1]
    except metadata.PackageNotFoundError:
        return None


def version_drift(tool_versions: dict) -> dict:
    """Compare installed versions with an entry's ``provenance.tool_versions``.

    Packages are compared on their exact version string.  Python is compared
    on ``major.minor``: QEncode's requirements files pin "Python 3.11"
    (``requirements-v4.txt``; ``requirements-v3.txt``: "Python 3.11.x") and the
    five packages, so a patch release (3.11.7 vs the recorded 3.11.15) is reported
    in ``note`` but is not drift.

    Returns:
        ``{name: {"want": str, "have": str|None, "match": bool[, "note"]}}``
        for every pin of the entry (``git_commit`` excluded); ``have`` is
        None for a package that is not installed.
    """
    out = {}
    for name, want in sorted(tool_versions.items()):
        if name in NOT_PINS or want is None:
            continue
        if name == "python":
            have = platform.python_version()
            match = have.split(".")[:2] == str(want).split(".")[:2]
            out[name] = {"want": str(want), "have": have, "match": match}
            if match and have != str(want):
                out[name]["note"] = ("patch release differs; QEncode's requirements files "
                                     "pin Python " + ".".join(str(want).split(".")[:2]))
            continue
        have = installed_version(name)
        out[name] = {"want": str(want), "have": have, "match": have == str(want)}
    return out


def installed_packages() -> dict:
    """``{distribution name: version}`` of every distribution on ``sys.path``,
    sorted by name; where one name is installed twice (an overlay stack,
    :mod:`qencode_nb.environment.store`) the first on ``sys.path``, the one imported, wins."""
    found = {}
    for dist in metadata.distributions():
        name, version = _name_version(dist)
        if name:
            found.setdefault(name, version)
    return dict(sorted(found.items(), key=lambda kv: kv[0].lower()))


def git_state(path: Path = ROOT) -> dict:
    """``{"commit": sha|None, "dirty": bool|None}`` of the qencode-nb checkout."""
    def run(*args):
        try:
            return subprocess.run(["git", "-C", str(path), *args], capture_output=True,
                                  text=True, timeout=10, check=True).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    commit = run("rev-parse", "HEAD")
    status = run("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def cpu_model() -> str | None:
    """The CPU model name from /proc/cpuinfo, else ``platform.processor()``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def collect(tool_versions: dict | None = None) -> dict:
    """Everything recorded as ``provenance`` for one audit.

    Returns a dict with ``versions`` (drift table), ``installed`` (the
    toolkit's stack), ``packages`` (every distribution the kernel's Python
    sees, :func:`installed_packages`), ``executable`` (that Python), ``git``, ``platform``, ``python``, ``cpu``,
    ``cpu_flags_avx512_bf16``, ``runnable_coretypes``, ``blas`` (every
    pool with library, version, architecture and threads, plus
    ``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE``) and ``numeric``, the
    numeric fingerprint (:func:`qencode_nb.notebook.fingerprint.collect`: every
    OpenBLAS copy, PySCF's included, numpy's ufunc dispatch, numba's target CPU,
    libc, the variables in force, and its short ``hash``).
    """
    from qencode_nb.notebook import fingerprint

    installed = {name: installed_version(name) for name in
                 (*PINNED_PACKAGES, "pennylane_lightning", "papermill", "threadpoolctl")}
    flags = threads.cpu_flags()
    return {
        "versions": version_drift(tool_versions or {}),
        "installed": installed,
        "packages": installed_packages(),
        "executable": sys.executable,
        "python": platform.python_version(),
        "git": git_state(),
        "platform": f"{sys.platform} {platform.machine()} {platform.release()}",
        "cpu": cpu_model(),
        "runnable_coretypes": threads.runnable_coretypes(flags),
        "blas": threads.blas_report(),
        "numeric": fingerprint.collect(),
    }
