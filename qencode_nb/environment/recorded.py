"""An entry's recorded environment: the package versions it records, the release
environment they belong to, and the date it was made (issues 35 and 52).

Every entry of schema 3.0.0 and 4.0.0 records its stack in ``provenance.tool_versions``
and its date in ``created_utc``; schemas 1.0.0 and 2.0.0 record no versions.
:func:`recorded_environment` names the entry's release environment
(:data:`qencode_nb.environment.releases.RELEASES`: the one whose requirements file's pins
it all records), the requirements of its stack (the recorded pins exactly,
``pennylane-lightning`` matched to pennylane's minor version, since neither requirements
file pins it) and its release's kernel triple.  What the stack's other packages were is
resolved from the date (:mod:`qencode_nb.environment.lock`).  Importing this module
imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qencode_nb.environment.releases import RELEASES, kernel_profile, release_of

#: ``tool_versions`` keys that are not package pins.
NOT_PINS = ("python", "git_commit")

#: The PennyLane plugin neither requirements file pins, matched to pennylane's minor
#: version (its releases follow pennylane's: 0.44.x with 0.44.x).
LIGHTNING = "pennylane-lightning"

#: The scientific packages a stack is named by when the entry records no pins (QEncode's
#: requirements files pin these five).
SCIENTIFIC = ("numpy", "scipy", "pyscf", "pennylane", "openfermion")


@dataclass(frozen=True)
class RecordedEnvironment:
    """The environment an entry records, as far as it and its release say.

    Attributes:
        release: the release environment (:data:`RELEASES`) whose requirements file's
            pins are all recorded with their versions (:func:`release_of`), or None.
        pins: ``{distribution: version}`` recorded in ``provenance.tool_versions``.
        python: the recorded Python version, or None.
        requirements: pip requirement strings of the stack (``numpy==1.26.4``, ...,
            ``pennylane-lightning==0.44.*``); empty without pins.
        requirements_file: the release's requirements file name, or None.
        kernels: ``{copy: OpenBLAS coretype}`` of the release's triple, or None.
        kernels_source: the measurement that found the triple, or None.
        unknown: what cannot be named, each with why (no pins recorded, no release
            whose file pins them, no known triple).
        created_utc: when the entry was made (its ``created_utc``, RFC 3339), the date
            its stack is resolved at (:mod:`qencode_nb.environment.lock`), or None.
    """

    release: str | None
    pins: dict
    python: str | None
    requirements: list = field(default_factory=list)
    requirements_file: str | None = None
    kernels: dict | None = None
    kernels_source: str | None = None
    unknown: list = field(default_factory=list)
    created_utc: str | None = None

    def to_record(self) -> dict:
        """The ``recorded_environment`` record (JSON types only)."""
        return {"release": self.release, "pins": dict(self.pins), "python": self.python,
                "requirements": list(self.requirements),
                "requirements_file": self.requirements_file,
                "kernels": None if self.kernels is None else dict(self.kernels),
                "kernels_source": self.kernels_source, "unknown": list(self.unknown),
                "created_utc": self.created_utc}


def recorded_environment(tool_versions: dict | None,
                         created_utc: str | None = None) -> RecordedEnvironment:
    """An entry's recorded environment from its ``provenance.tool_versions``.

    Args:
        tool_versions: ``{"python": "3.11.14", "pyscf": "2.5.0", ..., "git_commit":
            ...}`` as the entry records it (QEncode schemas 3.0.0 and 4.0.0,
            ``provenance.tool_versions``); None or empty for schemas that record none.
        created_utc: the entry's ``created_utc`` (QEncode schemas 3.0.0 and 4.0.0), or
            None.

    Returns:
        a :class:`RecordedEnvironment`; what cannot be named is listed in ``unknown``
        with its reason, never guessed.
    """
    tool_versions = dict(tool_versions or {})
    pins = {k.lower(): str(v) for k, v in sorted(tool_versions.items())
            if k not in NOT_PINS and v is not None}
    python = tool_versions.get("python")
    created_utc = str(created_utc) if created_utc else None
    if not pins:
        return RecordedEnvironment(None, {}, python, unknown=[
            "the entry records no package versions (provenance.tool_versions), so no "
            "stack can be named its own"], created_utc=created_utc)
    requirements = [f"{name}=={version}" for name, version in pins.items()]
    if "pennylane" in pins and LIGHTNING not in pins:
        minor = ".".join(pins["pennylane"].split(".")[:2])
        requirements.append(f"{LIGHTNING}=={minor}.*")
    release = release_of(pins)
    unknown = []
    if release is None:
        unknown.append("no QEncode requirements file pins these versions (known: "
                       + ", ".join(f"{r} {RELEASES[r].requirements_file}" for r in RELEASES)
                       + "), so the release's kernel triple is not known")
        return RecordedEnvironment(None, pins, python, requirements, unknown=unknown,
                                   created_utc=created_utc)
    profile = kernel_profile(release)
    if profile is None:
        unknown.append(f"no kernel triple is known for the {release} release "
                       "(qencode_nb.environment.releases.RELEASES)")
    return RecordedEnvironment(
        release, pins, python, requirements, RELEASES[release].requirements_file,
        None if profile is None else dict(profile.coretypes),
        None if profile is None else profile.source, unknown, created_utc)


def of_entry(entry) -> RecordedEnvironment:
    """:func:`recorded_environment` of a loaded entry
    (:class:`qencode_nb.entry.model.Entry`): its ``tool_versions`` and its
    ``created_utc`` (top level, else ``provenance.created_utc``)."""
    raw = getattr(entry, "raw", None) or {}
    created = raw.get("created_utc") or (raw.get("provenance") or {}).get("created_utc")
    return recorded_environment(entry.tool_versions, created)
