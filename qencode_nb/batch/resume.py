"""Resume keyed by what ran: a run in an output folder counts as done only under the
conditions the resuming sweep would run it (issue 36).

A sweep (and a robustness study) skips a run only when all of these hold:

1. its notebook recorded ``done``;
2. its ``<name>.inputs.json`` equals the inputs this sweep gives it
   (:func:`qencode_nb.batch.sweep.inputs_of`: the audit parameters, among them mode,
   engine, BLAS threads, the kernel profile *as asked* and the stack; the entry file's
   SHA-256; the Jupyter kernelspec);
3. what the run **measured** equals what this sweep's run would measure: the numeric
   fingerprint (:mod:`qencode_nb.notebook.fingerprint`: the kernel and threads of each
   OpenBLAS copy, numpy's version and ufunc dispatch, libc) and the package stack (the
   versions of the packages its ``stack`` record names, and the Python minor version).

The third step is what the parameters cannot say: ``host``, or ``reference`` on a CPU
that falls back, resolves to other kernels on another host or under another
``OPENBLAS_CORETYPE`` preset, and a kernelspec name can point at another environment.
It is measured by a **probe** (:func:`probe`): a child process of the run's kernel's
Python, started with the launch environment the run would get
(:func:`qencode_nb.executor.papermill_engine.kernel_environment`), that pins as the pin
cell does (:func:`qencode_nb.notebook.pins.pin`, with the entry's release) and reports
its fingerprint and installed versions.  One probe per kernelspec, threads, kernel
profile and release, once per sweep, and only where a done run would otherwise be kept
(a fresh folder probes nothing).  A probe that fails keeps nothing: the run is re-run.

:class:`Resume` tells each run done or not and collects why every kept-looking run was
re-run (:attr:`Resume.reruns`), which the sweep reports and writes to its manifest.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

#: The probe's code, run by the kernel's Python (argument: a JSON object of ``threads``,
#: ``coretype``, ``release``).
PROBE_CODE = """\
import json, platform, sys
from importlib import metadata
from qencode_nb.notebook import fingerprint
from qencode_nb.notebook.pins import pin
from qencode_nb.environment.releases import kernel_profile
args = json.loads(sys.argv[1])
pinned = pin(args["threads"], args["coretype"], release=kernel_profile(args["release"]))
fp = fingerprint.collect(pinned["pools"])
versions = {}
for dist in metadata.distributions():
    name = (dist.metadata["Name"] or "").lower().replace("_", "-")
    versions.setdefault(name, dist.version)
print(json.dumps({"hash": fp["hash"], "openblas": fp["openblas"],
                  "python": platform.python_version(), "versions": versions}))
"""

#: Seconds a probe may take (it imports numpy, scipy and PySCF once).
PROBE_TIMEOUT_S = 120


@dataclass
class Measured:
    """What a run ran under: the fingerprint hash, its OpenBLAS copies
    (``[{copy, kernel, threads, version, ...}]``), the Python version, and package
    versions (``{name: version}``; a run's are those its ``stack`` record names)."""

    hash: str | None
    openblas: list = field(default_factory=list)
    python: str | None = None
    versions: dict = field(default_factory=dict)


def _norm(name: str) -> str:
    return str(name).lower().replace("_", "-")


def ran_under(records: dict) -> Measured:
    """:class:`Measured` of an executed audit from its records (``provenance.numeric``,
    ``stack``)."""
    numeric = (records.get("provenance") or {}).get("numeric") or {}
    stack = records.get("stack") or {}
    return Measured(numeric.get("hash"), list(numeric.get("openblas") or []),
                    stack.get("python"),
                    {_norm(k): v for k, v in (stack.get("pins") or {}).items()})


def _python(kernelspec: str | None) -> str:
    """The Python a kernelspec starts (``argv[0]`` of its ``kernel.json``); this one for
    None (the notebook's own ``python3``, the environment qencode-nb runs in) and for a
    bare ``python``, which jupyter_client replaces by this interpreter too
    (``KernelManager.format_kernel_cmd``)."""
    if not kernelspec:
        return sys.executable
    from jupyter_client.kernelspec import KernelSpecManager

    argv0 = KernelSpecManager().get_kernel_spec(kernelspec).argv[0]
    bare = {"python", f"python{sys.version_info[0]}", "python{}.{}".format(*sys.version_info)}
    return sys.executable if argv0 in bare else argv0


_PROBES: dict = {}


def probe(kernelspec: str | None, blas_threads: int, blas_coretype: str | None,
          release: str | None) -> Measured:
    """What a run with these settings would measure, measured now in a child process
    (module docstring); cached for the life of this process.

    Args:
        kernelspec: the Jupyter kernelspec the run runs in (None: the notebook's own).
        blas_threads: the run's ``blas_threads``.
        blas_coretype: its ``blas_coretype`` as given (``reference``, ``host``, a
            coretype, a kernel spec; None: the notebook's default).
        release: the entry's release environment (``"v3"``, ``"v4"``, None;
            :func:`qencode_nb.environment.choice.release_of_entry`), which ``reference``
            resolves by.

    Raises:
        RuntimeError: the probe failed or timed out (the message says why); the caller
            keeps no run then.
    """
    key = (kernelspec, blas_threads, blas_coretype, release)
    if key not in _PROBES:
        from qencode_nb.environment.releases import kernel_profile
        from qencode_nb.executor.papermill_engine import kernel_environment
        from qencode_nb.paths import ROOT

        args = json.dumps({"threads": blas_threads, "coretype": blas_coretype,
                           "release": release})
        try:
            done = subprocess.run([_python(kernelspec), "-c", PROBE_CODE, args],
                                  env=kernel_environment(blas_threads, blas_coretype,
                                                         release=kernel_profile(release)),
                                  cwd=str(ROOT), capture_output=True, text=True,
                                  timeout=PROBE_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RuntimeError(f"the environment probe did not run ({exc})") from None
        if done.returncode != 0:
            tail = " ".join(done.stderr.strip().splitlines()[-1:])
            raise RuntimeError(f"the environment probe failed: {tail[:300]}")
        doc = json.loads(done.stdout.strip().splitlines()[-1])
        _PROBES[key] = Measured(doc["hash"], doc["openblas"], doc["python"],
                                doc["versions"])
    return _PROBES[key]


def _triple(openblas: list) -> str:
    return ", ".join(f"{c.get('copy')} {c.get('kernel')} x{c.get('threads')}"
                     for c in openblas) or "none recorded"


def differences(ran: Measured, now: Measured) -> list[str]:
    """What differs between a run's :class:`Measured` and a probe's, in words (empty:
    nothing; the run stands).  Kernels and threads first, then the rest of the
    fingerprint, the Python minor version and each recorded package whose version
    differs."""
    out = []
    if ran.hash != now.hash:
        if _triple(ran.openblas) != _triple(now.openblas):
            out.append(f"BLAS kernels and threads {_triple(ran.openblas)} -> "
                       f"{_triple(now.openblas)}")
        else:
            out.append(f"numeric fingerprint {ran.hash} -> {now.hash} (numpy's dispatch "
                       "or version, OpenBLAS or libc version)")
    minor = [".".join(str(v).split(".")[:2]) for v in (ran.python, now.python)]
    if ran.python and minor[0] != minor[1]:
        out.append(f"Python {ran.python} -> {now.python}")
    drift = [f"{name} {have} -> {now.versions.get(name, 'not installed')}"
             for name, have in sorted(ran.versions.items())
             if now.versions.get(name, "not installed") != have]
    if drift:
        out.append("packages " + ", ".join(drift))
    return out


@dataclass
class Resume:
    """Decides, run by run, whether a folder's earlier run stands (module docstring).

    Attributes:
        reruns: ``[{"name", "why"}]`` of the runs that had recorded ``done`` with the
            same inputs but are re-run because what they ran under differs from what
            this sweep would run (or could not be measured).
    """

    reruns: list = field(default_factory=list)

    def done(self, out: Path, name: str, inputs: dict, kernelspec: str | None = None) -> bool:
        """True when run ``name`` in ``out`` recorded ``done`` with ``inputs`` and measured
        what a run of this sweep would measure (``inputs["parameters"]``: the audit
        parameters; ``entry``, ``db``, ``blas_threads`` and ``blas_coretype`` are read
        from them).  Otherwise False; a run that had recorded ``done`` is added to
        :attr:`reruns` with why (the inputs that changed, or what it ran under)."""
        from qencode_nb.environment.choice import release_of_entry
        from qencode_nb.notebook import blas_profiles
        from qencode_nb.notebook.record import read_records

        try:
            stored = json.loads((out / f"{name}.inputs.json").read_text())
            records = read_records(out / f"{name}.ipynb")
        except (OSError, ValueError):
            return False          # never ran here, or nothing readable: a fresh run
        if records.get("done") is not True:
            return False          # failed or killed: run (resumed from its checkpoint)
        if stored != inputs:
            self.reruns.append({"name": name, "why": input_changes(stored, inputs)})
            return False
        params = inputs.get("parameters") or {}
        coretype = params.get("blas_coretype") or blas_profiles.default()   # audit.ipynb's
        try:
            now = probe(kernelspec, params.get("blas_threads", 1), coretype,
                        release_of_entry(params.get("entry"), params.get("db")))
        except RuntimeError as exc:
            self.reruns.append({"name": name, "why": f"not measured: {exc}"})
            return False
        why = differences(ran_under(records), now)
        if why:
            self.reruns.append({"name": name, "why": "; ".join(why)})
            return False
        return True


def input_changes(stored, inputs: dict) -> str:
    """The inputs that changed between an earlier run's ``<name>.inputs.json`` and this
    sweep's, in words: ``inputs blas_threads 1 -> 2; entry file changed``."""
    if not isinstance(stored, dict):
        return "inputs unreadable"
    old, new = stored.get("parameters") or {}, inputs.get("parameters") or {}
    out = [f"{k} {old.get(k, 'unset')!r} -> {new.get(k, 'unset')!r}"
           for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    if stored.get("entry_sha256") != inputs.get("entry_sha256"):
        out.append("entry file changed (SHA-256)")
    if stored.get("kernelspec") != inputs.get("kernelspec"):
        out.append(f"kernelspec {stored.get('kernelspec')!r} -> {inputs.get('kernelspec')!r}")
    return "inputs " + ("; ".join(out) or "changed")


def reruns_text(reruns: list) -> str | None:
    """``re-ran N run(s) done under other conditions ...: name (why); ...`` of
    :attr:`Resume.reruns`, or None when there are none."""
    if not reruns:
        return None
    return (f"re-ran {len(reruns)} run(s) done under other conditions than this "
            "sweep's: " + "; ".join(f"{r['name']} ({r['why']})" for r in reruns))
