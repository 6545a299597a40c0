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


#: The scientific packages a stack is named by when the entry records no pins (QEncode's
#: requirements files pin these five).
SCIENTIFIC = ("numpy", "scipy", "pyscf", "pennylane", "openfermion")

#: Values of the audit's ``stack`` parameter besides a stack name (CLI ``--stack``).
STACK_WORDS = ("current", "recorded")


def stack_key(pins: dict, python: str | None = None) -> str:
    """Twelve hex digits naming a set of package versions: the SHA-256 of the sorted
    ``name==version`` lines and ``python==<major.minor>`` (a venv is built on this
    interpreter, so the minor version is part of what it holds).

    Args:
        pins: ``{distribution: version}`` (the names case-folded).
        python: a Python version (``3.11.14``); None: this interpreter's.
    """
    import hashlib
    import platform

    minor = ".".join(str(python or platform.python_version()).split(".")[:2])
    lines = sorted(f"{k.lower()}=={v}" for k, v in pins.items()) + [f"python=={minor}"]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]


def recorded_stack_name(recorded: RecordedEnvironment) -> str | None:
    """The name of the stack built for an entry's recorded environment:
    ``<release>-<stack_key>`` (``v3-1a2b3c4d5e6f``; ``entry-...`` for pins no release file
    names), keyed by the recorded pins, so every entry that records the same stack
    shares one; None when the entry records no pins."""
    if not recorded.pins:
        return None
    return f"{recorded.release or 'entry'}-{stack_key(recorded.pins)}"


def _registered(name: str) -> dict | None:
    """The ``stack.json`` of stack ``name`` under :func:`qencode_nb.paths.stacks_root`,
    or None."""
    import json

    from qencode_nb.paths import STACK_RECORD, stacks_root

    try:
        return json.loads((stacks_root() / name / STACK_RECORD).read_text())
    except (OSError, ValueError):
        return None


def running_stack() -> dict:
    """The stack this Python runs: ``{"name", "kernelspec"}`` of a stack made by
    :mod:`qencode_nb.batch.stacks` (its ``stack.json`` sits in ``sys.prefix``), else
    ``{"name": "current", "kernelspec": None}`` (the environment qencode-nb is installed
    in)."""
    import json
    import sys
    from pathlib import Path

    from qencode_nb.paths import STACK_RECORD

    try:
        rec = json.loads((Path(sys.prefix) / STACK_RECORD).read_text())
        return {"name": rec["name"], "kernelspec": rec.get("kernelspec")}
    except (OSError, ValueError, KeyError, TypeError):
        return {"name": "current", "kernelspec": None}


def _why_not_used(name: str, running: str, recorded: bool) -> str:
    """Why stack ``name`` (the entry's ``recorded`` one, or one named) is not the one in
    force (a kernel of stack ``running`` runs), from its record: not built, failed (its
    reason), or built but another kernel runs."""
    rec = _registered(name)
    if rec is None:
        how = (f"`qencode-nb audit --stack recorded` builds it, or `qencode-nb stack create "
               f"{name} --from-entry ENTRY`" if recorded else
               "`qencode-nb stack list` lists the stacks there are")
        return f"stack {name} is not built ({how}), so the audit ran in the {running} stack"
    if rec.get("status") != "ready":
        failure = " ".join(str(rec.get("failure") or "no reason recorded").split())
        return (f"stack {name} could not be built ({failure[:300]}; remove it with "
                f"`qencode-nb stack remove {name}` to try again), so the audit ran in the "
                f"{running} stack")
    return (f"stack {name} is built but this kernel is the {running} stack (run with "
            f"`--stack` on the CLI, or papermill -k {rec.get('kernelspec')})")


def stack_in_force(asked, recorded: RecordedEnvironment, drift: dict) -> dict:
    """The audit's ``stack`` record: which package stack ran, against the one asked for.

    Args:
        asked: the ``stack`` parameter, checked (:func:`qencode_nb.options.check_stack`):
            ``"current"``, ``"recorded"`` (the entry's own, :func:`recorded_stack_name`)
            or a stack name (:mod:`qencode_nb.batch.stacks`).
        recorded: the entry's :class:`RecordedEnvironment`.
        drift: :func:`qencode_nb.notebook.provenance.version_drift` of the entry's
            ``tool_versions`` in this kernel (``{name: {"want", "have", "match"}}``).

    Returns:
        ``{"asked", "name" (the stack that ran: a stack name or "current"), "kernelspec",
        "python" (this kernel's version), "pins" ({distribution: version} of the recorded packages, else of
        :data:`SCIENTIFIC`, as this kernel has them), "key" (:func:`stack_key` of those
        pins), "recorded_stack" (:func:`recorded_stack_name`, or None),
        "in_recorded_stack" (every recorded pin installed at its version; None without
        pins), "not_used" (why the stack asked for is not the one that ran, or None)}``.
    """
    import platform

    from qencode_nb.notebook.provenance import installed_version

    running = running_stack()
    names = list(recorded.pins) or list(SCIENTIFIC)
    pins = {n: installed_version(n) or "not installed" for n in names}
    in_recorded = (all(v["match"] for k, v in drift.items() if k != "python")
                   if recorded.pins else None)
    wanted = recorded_stack_name(recorded) if asked == "recorded" else asked
    not_used = None
    if asked == "recorded" and not recorded.pins:
        not_used = "; ".join(recorded.unknown) + ", so the audit ran in the current stack"
    elif asked == "recorded" and not in_recorded and running["name"] != wanted:
        not_used = _why_not_used(wanted, running["name"], True)
    elif asked not in STACK_WORDS and running["name"] != asked:
        not_used = _why_not_used(asked, running["name"], False)
    return {"asked": asked, "name": running["name"], "kernelspec": running["kernelspec"],
            "python": platform.python_version(), "pins": pins,
            "key": stack_key(pins),
            "recorded_stack": recorded_stack_name(recorded),
            "in_recorded_stack": in_recorded, "not_used": not_used}


def stack_text(stack: dict | None) -> str | None:
    """The package stack of a run in one phrase, from its ``stack`` record
    (:func:`stack_in_force`): ``stack v3-8ab2c6341a79 (key 8ab2c6341a79: numpy 1.26.4,
    ...; Python 3.11.7)``, then ``; recorded asked, not used: <why>`` when the stack asked
    for did not run; None without a record.  The card, the report header and the crate
    all say it so."""
    if not isinstance(stack, dict) or not stack.get("name"):
        return None
    pins = ", ".join(f"{k} {v}" for k, v in sorted((stack.get("pins") or {}).items()))
    text = (f"stack {stack['name']} (key {stack.get('key')}: {pins}; Python "
            f"{stack.get('python')})")
    if stack.get("not_used"):
        text += f"; {stack.get('asked')} asked, not used: {stack['not_used']}"
    return text
