"""Dated resolution (issue 52): an entry's stack locked as PyPI served it on the
entry's date.

A recorded stack pins QEncode's top-level packages; every other package (about a
hundred: rustworkx, cachetools, scipy-openblas32, ...) is whatever the index serves when
the stack is resolved.  PyPI records when each file was uploaded (PEP 700's
``upload-time``), so uv's ``pip compile --exclude-newer <created_utc>`` resolves the
stack as it could have been installed on the entry's date.  The result is a lock:
exact versions with their hashes (``--generate-hashes``), and the stack's key is the
lock's (:attr:`Lock.key`): entries share a stack only where their resolutions are equal.

Where the entry records no date, or the index gives no upload times (uv refuses the
dated resolution), the lock is resolved as the index serves it today and says so
(:attr:`Lock.fallback`).  Today's undated lock of the same pins stays reachable
(``--stack recorded-today``, :mod:`qencode_nb.environment.choice`) so that the two can be
compared.

Resolutions are kept in ``<stacks folder>/locks/`` keyed by their inputs (the
requirements, the date, the Python version; today's by the day), so a sweep resolves
each distinct input once, and a stack built earlier is found again offline.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import platform
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from qencode_nb.errors import StackError
from qencode_nb.paths import ROOT, stacks_root

#: Seconds a resolution may take (uv resolves a v3 stack in about 1.5 s with a warm
#: cache, 10 s cold).
RESOLVE_TIMEOUT_S = 300

#: The lock cache's folder under the stacks folder.
LOCKS_FOLDER = "locks"


@dataclass(frozen=True)
class Lock:
    """A resolved, locked stack.

    Attributes:
        text: the lock (uv ``pip compile`` output: ``name==version`` with
            ``--hash=sha256:...`` lines), installable by ``uv pip sync``.
        key: twelve hex digits, the SHA-256 of :attr:`text`: the stack's key.
        resolved_at: the ``--exclude-newer`` timestamp (the entry's ``created_utc``), or
            None for an undated resolution (as the index serves it today).
        resolved_on: the UTC day the resolution was made (``2026-12-07``).
        fallback: why the resolution is undated although the run asked for a dated one
            (no date recorded, or the index gives no upload times), else None.
        python: the Python version the lock was resolved for.
    """

    text: str = field(repr=False)
    key: str
    resolved_at: str | None
    resolved_on: str
    fallback: str | None
    python: str

    def versions(self) -> dict:
        """``{distribution: version}`` of the lock's packages that apply here (a line's
        environment marker, ``; sys_platform == 'win32'``, evaluated for this Python)."""
        from packaging.markers import Marker

        out = {}
        for line in self.text.splitlines():
            if "==" not in line or line.startswith((" ", "#")):
                continue
            spec, _, marker = line.rstrip("\\ ").partition(";")
            if marker.strip() and not Marker(marker.strip()).evaluate():
                continue
            name, _, version = spec.partition("==")
            out[name.strip().lower()] = version.strip()
        return out

    def to_record(self) -> dict:
        """The lock's description for a stack record (its text is the stack's file)."""
        return {"key": self.key, "resolved_at": self.resolved_at,
                "resolved_on": self.resolved_on, "fallback": self.fallback,
                "python": self.python}


def uv_binary() -> str:
    """The ``uv`` executable of the ``uv`` package (a dependency from PyPI)."""
    from uv import find_uv_bin

    return find_uv_bin()


def toolkit_dependencies() -> list[str]:
    """Distribution names of pyproject.toml's ``[project] dependencies`` (version
    specifiers dropped): what a stack's kernel imports besides the recorded pins, left to
    the resolution.  ``uv`` itself is a tool of the driving environment, not of a kernel."""
    import re
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = [re.split(r"[\s\[<>=!~;]", d, maxsplit=1)[0] for d in deps]
    return [n for n in names if n != "uv"]


def _cache_path(requirements, when: str | None, python: str, root) -> Path:
    day = when or "today-" + _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    inputs = json.dumps({"requirements": sorted(requirements), "exclude_newer": day,
                         "python": python}, sort_keys=True)
    return stacks_root(root) / LOCKS_FOLDER / (
        hashlib.sha256(inputs.encode()).hexdigest()[:16] + ".json")


def _compile(requirements, when: str | None, python: str) -> str:
    cmd = [uv_binary(), "pip", "compile", "-", "--python-version", python,
           "--generate-hashes", "--no-header", "--no-annotate", "--quiet"]
    if when:
        cmd += ["--exclude-newer", when]
    proc = subprocess.run(cmd, input="\n".join(requirements) + "\n", capture_output=True,
                          text=True, timeout=RESOLVE_TIMEOUT_S)
    if proc.returncode != 0:
        raise StackError("uv pip compile " + (f"--exclude-newer {when} " if when else "")
                         + "failed: " + " ".join(proc.stderr.split())[-600:])
    return proc.stdout


def resolve_lock(requirements, created_utc: str | None, *, dated: bool = True,
                 python: str | None = None, root=None, cached_only: bool = False):
    """The lock of a stack: ``requirements`` (the recorded pins) plus the toolkit's
    dependencies, resolved as the index served them at ``created_utc``.

    Args:
        requirements: pip requirement strings of the recorded stack
            (:attr:`~qencode_nb.environment.recorded.RecordedEnvironment.requirements`).
        created_utc: the entry's ``created_utc`` (RFC 3339), or None.
        dated: False resolves as the index serves it today (``recorded-today``).
        python: the Python version the stack is built on (default this interpreter's:
            a stack's venv is made from it).
        root: the stacks folder (:func:`qencode_nb.paths.stacks_root`).
        cached_only: return None instead of resolving where no resolution of these
            inputs is kept (what a kernel asks, to name the stack it was meant to run in).

    Returns:
        a :class:`Lock`; undated with :attr:`Lock.fallback` saying why where a dated
        resolution was asked for and could not be made.

    Raises:
        StackError: uv could not resolve the stack at all (offline with nothing cached,
            a pin the index does not have); the message quotes uv.
    """
    python = python or platform.python_version()
    reqs = [*requirements, *toolkit_dependencies()]
    fallback = None
    when = created_utc if dated else None
    if dated and not created_utc:
        fallback = ("the entry records no date (created_utc), so its stack is resolved "
                    "as the index serves it today")
    path = _cache_path(reqs, when, python, root)
    try:
        return Lock(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        if cached_only:
            return None
    try:
        text = _compile(reqs, when, python)
    except StackError as exc:
        if not when:
            raise
        fallback = (f"the index gave no dated resolution ({exc}), so the stack is resolved "
                    "as it serves it today")
        when = None
        text = _compile(reqs, None, python)
    lock = Lock(text, hashlib.sha256(text.encode()).hexdigest()[:12], when,
                _dt.datetime.now(_dt.timezone.utc).date().isoformat(), fallback, python)
    from qencode_nb.atomic import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(lock.__dict__, indent=1).encode())
    return lock


def cached_as(key: str, root=None) -> list[str]:
    """The file names under ``<stacks>/locks/`` that keep the resolution of key ``key``
    (one per distinct input that resolved to it), sorted: what another host keeps it as
    (:func:`keep`), so that its kernels find the same stack the same way."""
    folder = stacks_root(root) / LOCKS_FOLDER
    names = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            if json.loads(path.read_text()).get("key") == key:
                names.append(path.name)
        except (OSError, ValueError, AttributeError):
            continue
    return names


def keep(lock: Lock, names, root=None) -> None:
    """Keep ``lock`` under ``<stacks>/locks/`` as each of ``names`` (:func:`cached_as` on
    the host that resolved it; a name not of the cache's form is skipped) where nothing
    is kept yet: :func:`resolve_lock` here then finds it without resolving."""
    import re

    from qencode_nb.atomic import write_atomic

    folder = stacks_root(root) / LOCKS_FOLDER
    for name in names:
        path = folder / str(name)
        if re.fullmatch(r"[0-9a-f]{16}\.json", str(name)) and not path.exists():
            folder.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(lock.__dict__, indent=1).encode())
