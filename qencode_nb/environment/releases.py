"""The one table of QEncode's release environments (issues 35 and 52): for each, the
requirements file QEncode published and the OpenBLAS kernel triple the release was made
under, each with its source.

QEncode made its public record in two environments: v3 and v3.1 with
``requirements-v3.txt`` (pyscf 2.5.0, pennylane 0.44.1, openfermion 1.7.1, numpy 1.26.4,
scipy 1.17.0; "Do NOT use [the v4 file] for v3 entry reproduction") on AVX2 kernels, v4
with ``requirements-v4.txt`` on AVX-512 ones.  The requirements files are bundled in
``data/qencode-history/`` (MIT, with its NOTICE).  Importing this module imports nothing
heavy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from qencode_nb.notebook.blas_profiles import REFERENCE, KernelProfile
from qencode_nb.paths import ROOT

#: QEncode's requirements files, bundled from its repository (data/qencode-history/NOTICE).
REQUIREMENTS_DIR = ROOT / "data" / "qencode-history"


@dataclass(frozen=True)
class Release:
    """One release environment of QEncode.

    Attributes:
        name: the environment's name (``"v4"``, ``"v3"``).
        requirements_file: the requirements file QEncode published for it (in
            :data:`REQUIREMENTS_DIR`).
        releases: the QEncode releases made in it.
        requirements_source: where the file says it is the release's environment.
        kernels: its kernel triple (a :class:`KernelProfile`), or None when none is known.
    """

    name: str
    requirements_file: str
    releases: tuple
    requirements_source: str
    kernels: KernelProfile | None


#: The release environments, the one table (issue 52): requirements file and kernel
#: triple together.  A release without a triple has ``kernels`` None and its entries say
#: so.  v4's triple is the ``reference`` profile itself
#: (:data:`qencode_nb.notebook.blas_profiles.REFERENCE`, with its measurement).
RELEASES = {
    "v4": Release(
        "v4", "requirements-v4.txt", ("v4",),
        "QEncode's requirements-v4.txt, the v4 entries' tool_versions", REFERENCE),
    "v3": Release(
        "v3", "requirements-v3.txt", ("v3", "v3.1"),
        "QEncode's requirements-v3.txt: \"Exact versions used to generate the certified "
        "Suite v3.1 (6-31G) entries\"; v3 entries record the same versions",
        KernelProfile(
            "v3", {"numpy": "Haswell", "scipy": "Haswell", "pyscf": "Haswell"},
            source="issue 35, measured on an Intel Xeon with AVX-512 in QEncode's v3 stack "
                   "(requirements-v3.txt), full mode on the recorded backend, 1 thread, "
                   "OPENBLAS_CORETYPE=Haswell for every copy: 34 of the 36 v3 entries "
                   "bit-identical (the 2 others' stored Hamiltonians equal no generator "
                   "path), and H2 6-31G JW/HEA of v3.1; under the v4 triple H2 6-31G misses "
                   "by 1.2e-10 Ha and LiH STO-3G by 1.3e-9 Ha. Confirmed 2026-12-04 on an "
                   "AMD EPYC (Zen 4): H2 STO-3G JW/UCCSD, H2 6-31G JW/HEA, LiH STO-3G JW/HEA "
                   "at 0 ulps (tests/studies/test_recorded_stack.py); 2026-12-05 the whole "
                   "of v3.1 there: 35 of the 37 entries re-run within 400 s bit-identical, "
                   "the 2 others (LiH 6-31G BK/HEA, BK/UCCSD) with stored Hamiltonians "
                   "equal to no generator path")),
}


def kernel_profile(release: str | None) -> KernelProfile | None:
    """The kernel triple of release environment ``release`` (``"v3"``), or None (no
    release, or one without a known triple)."""
    row = RELEASES.get(release) if release else None
    return None if row is None else row.kernels


def named_triples() -> dict:
    """``{name: KernelProfile}`` of the release triples (v4's is ``reference``)."""
    return {r.kernels.name: r.kernels for r in RELEASES.values() if r.kernels is not None}


@lru_cache(maxsize=None)
def requirement_pins(release: str) -> dict:
    """``{distribution: version}`` of the ``==`` pins of a release's requirements file.

    Args:
        release: a name of :data:`RELEASES` (``"v3"``, ``"v4"``).

    Raises:
        KeyError: a release without a requirements file (the message lists the known ones).
    """
    if release not in RELEASES:
        raise KeyError(f"release environment {release!r} is not known; known: "
                       + ", ".join(RELEASES))
    text = (REQUIREMENTS_DIR / RELEASES[release].requirements_file).read_text(encoding="utf-8")
    pins = {}
    for line in text.splitlines():
        match = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s#;]+)", line)
        if match:
            pins[match.group(1).lower()] = match.group(2)
    return pins


def release_of(pins: dict) -> str | None:
    """The release environment whose requirements file's every pin is recorded in
    ``pins`` (``{distribution: version}``) with the same version, or None.  Pins the
    file does not name (a package the entry added) do not change the release; they
    stay in the stack."""
    recorded = {k.lower(): str(v) for k, v in pins.items()}
    for release in RELEASES:
        if all(recorded.get(k) == v for k, v in requirement_pins(release).items()):
            return release
    return None
