"""An entry's recorded environment: the package stack and the OpenBLAS kernel triple
its release was made in (issue 35).

QEncode made its public record in two environments: v3 and v3.1 with
``requirements-v3.txt`` (pyscf 2.5.0, pennylane 0.44.1, openfermion 1.7.1, numpy 1.26.4,
scipy 1.17.0; "Do NOT use [the v4 file] for v3 entry reproduction") on AVX2 kernels, v4
with ``requirements-v4.txt`` on AVX-512 ones.  Every entry of schema 3.0.0 and 4.0.0
records its stack in ``provenance.tool_versions``; schemas 1.0.0 and 2.0.0 record none.

:func:`recorded_environment` reads an entry's ``tool_versions`` and names its release
environment (:data:`RELEASE_STACKS`: the release whose requirements file's pins it all
records), the pip requirements of its stack (the recorded pins exactly,
``pennylane-lightning`` matched to pennylane's minor version, since neither requirements
file pins it and pip would otherwise bring the newest beside an older pennylane) and its
release's kernel triple (:data:`qencode_nb.notebook.blas_profiles.RELEASE_KERNELS`).
QEncode's requirements files are bundled in ``data/qencode-history/`` (MIT, with its
NOTICE).  Importing this module imports nothing heavy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from qencode_nb.paths import ROOT

#: QEncode's requirements files, bundled from its repository (data/qencode-history/NOTICE).
REQUIREMENTS_DIR = ROOT / "data" / "qencode-history"

#: The release environments QEncode published a requirements file for: ``{name:
#: (requirements file, the releases made in it)}``.  Source: QEncode's own files
#: (requirements-v3.txt: "Exact versions used to generate the certified Suite v3.1
#: (6-31G) entries", and v3 entries record the same versions; requirements-v4.txt).
RELEASE_STACKS = {
    "v4": ("requirements-v4.txt", ("v4",)),
    "v3": ("requirements-v3.txt", ("v3", "v3.1")),
}

#: ``tool_versions`` keys that are not package pins.
NOT_PINS = ("python", "git_commit")

#: The PennyLane plugin neither requirements file pins, matched to pennylane's minor
#: version (its releases follow pennylane's: 0.44.x with 0.44.x).
LIGHTNING = "pennylane-lightning"


@lru_cache(maxsize=None)
def requirement_pins(release: str) -> dict:
    """``{distribution: version}`` of the ``==`` pins of a release's requirements file.

    Args:
        release: a name of :data:`RELEASE_STACKS` (``"v3"``, ``"v4"``).

    Raises:
        KeyError: a release without a requirements file (the message lists the known ones).
    """
    if release not in RELEASE_STACKS:
        raise KeyError(f"release environment {release!r} is not known; known: "
                       + ", ".join(RELEASE_STACKS))
    text = (REQUIREMENTS_DIR / RELEASE_STACKS[release][0]).read_text(encoding="utf-8")
    pins = {}
    for line in text.splitlines():
        match = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s#;]+)", line)
        if match:
            pins[match.group(1).lower()] = match.group(2)
    return pins


@dataclass(frozen=True)
class RecordedEnvironment:
    """The environment an entry records, as far as it and its release say.

    Attributes:
        release: the release environment (:data:`RELEASE_STACKS`) whose requirements
            file's pins are all recorded with their versions (:func:`release_of`), or None.
        pins: ``{distribution: version}`` recorded in ``provenance.tool_versions``.
        python: the recorded Python version, or None.
        requirements: pip requirement strings of the stack (``numpy==1.26.4``, ...,
            ``pennylane-lightning==0.44.*``); empty without pins.
        requirements_file: the release's requirements file name, or None.
        kernels: ``{copy: OpenBLAS coretype}`` of the release's triple, or None.
        kernels_source: the measurement that found the triple, or None.
        unknown: what cannot be named, each with why (no pins recorded, no release
            whose file pins them, no known triple).
    """

    release: str | None
    pins: dict
    python: str | None
    requirements: list = field(default_factory=list)
    requirements_file: str | None = None
    kernels: dict | None = None
    kernels_source: str | None = None
    unknown: list = field(default_factory=list)

    def to_record(self) -> dict:
        """The ``recorded_environment`` record (JSON types only)."""
        return {"release": self.release, "pins": dict(self.pins), "python": self.python,
                "requirements": list(self.requirements),
                "requirements_file": self.requirements_file,
                "kernels": None if self.kernels is None else dict(self.kernels),
                "kernels_source": self.kernels_source, "unknown": list(self.unknown)}


def release_of(pins: dict) -> str | None:
    """The release environment whose requirements file's every pin is recorded in
    ``pins`` (``{distribution: version}``) with the same version, or None.  Pins the
    file does not name (a package the entry added) do not change the release; they
    stay in the stack."""
    recorded = {k.lower(): str(v) for k, v in pins.items()}
    for release in RELEASE_STACKS:
        if all(recorded.get(k) == v for k, v in requirement_pins(release).items()):
            return release
    return None


def recorded_environment(tool_versions: dict | None) -> RecordedEnvironment:
    """An entry's recorded environment from its ``provenance.tool_versions``.

    Args:
        tool_versions: ``{"python": "3.11.14", "pyscf": "2.5.0", ..., "git_commit":
            ...}`` as the entry records it (QEncode schemas 3.0.0 and 4.0.0,
            ``provenance.tool_versions``); None or empty for schemas that record none.

    Returns:
        a :class:`RecordedEnvironment`; what cannot be named is listed in ``unknown``
        with its reason, never guessed.
    """
    from qencode_nb.notebook.blas_profiles import RELEASE_KERNELS

    tool_versions = dict(tool_versions or {})
    pins = {k.lower(): str(v) for k, v in sorted(tool_versions.items())
            if k not in NOT_PINS and v is not None}
    python = tool_versions.get("python")
    if not pins:
        return RecordedEnvironment(None, {}, python, unknown=[
            "the entry records no package versions (provenance.tool_versions), so no "
            "stack can be named its own"])
    requirements = [f"{name}=={version}" for name, version in pins.items()]
    if "pennylane" in pins and LIGHTNING not in pins:
        minor = ".".join(pins["pennylane"].split(".")[:2])
        requirements.append(f"{LIGHTNING}=={minor}.*")
    release = release_of(pins)
    unknown = []
    if release is None:
        unknown.append("no QEncode requirements file pins these versions (known: "
                       + ", ".join(f"{r} {RELEASE_STACKS[r][0]}" for r in RELEASE_STACKS)
                       + "), so the release's kernel triple is not known")
        return RecordedEnvironment(None, pins, python, requirements, unknown=unknown)
    profile = RELEASE_KERNELS.get(release)
    if profile is None:
        unknown.append(f"no kernel triple is known for the {release} release "
                       "(qencode_nb.notebook.blas_profiles.RELEASE_KERNELS)")
    return RecordedEnvironment(
        release, pins, python, requirements, RELEASE_STACKS[release][0],
        None if profile is None else dict(profile.coretypes),
        None if profile is None else profile.source, unknown)


def entry_release(entry, db=None) -> str | None:
    """The release environment of the entry an audit is given, read before the pin
    cell loads numpy (loading an entry imports no numpy), so that ``reference`` pins
    that release's kernel triple
    (:func:`qencode_nb.notebook.blas_profiles.resolve`).

    Args:
        entry, db: the audit's ``entry`` and ``db`` parameters
            (:func:`qencode_nb.entry.lookup.load`).

    Returns:
        ``"v4"``, ``"v3"`` or None (no recorded stack, or an entry that cannot be read:
        the audit's load stage then says why, under the v4 reference triple).
    """
    from qencode_nb.entry.lookup import load
    from qencode_nb.errors import QencodeNbError

    try:
        return recorded_environment(load(entry, db=db).tool_versions).release
    except (QencodeNbError, OSError, ValueError):
        return None
