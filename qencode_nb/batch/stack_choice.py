"""The ``--stack`` option: the package stack (Jupyter kernel) each audit runs in.

Values (CLI ``--stack`` of ``audit``, ``sweep``, ``robustness`` and ``study``; the audit
notebook's ``stack`` parameter, which records what was asked and what ran,
:func:`qencode_nb.entry.recorded_env.stack_in_force`):

- ``current`` (the default): the environment qencode-nb runs in, the notebook's kernel.
- ``recorded``: the entry's own recorded stack
  (:func:`qencode_nb.entry.recorded_env.recorded_environment`: its ``tool_versions``
  pinned exactly, ``pennylane-lightning`` matched, qencode-nb's other dependencies
  resolved around them), named by its pins
  (:func:`~qencode_nb.entry.recorded_env.recorded_stack_name`, ``v3-8ab2c6341a79``), so
  every entry recording the same stack shares it.  Where the current environment already
  holds every recorded pin (a v4 entry in ``requirements.lock``) no stack is built and
  the audit runs in the current kernel.  Otherwise the stack is built once
  (:func:`qencode_nb.batch.stacks.create_stack`, under a lock in the stacks folder, so
  two sweeps never build it twice at once) and reused by every later run.  Where it
  cannot be built (offline, a pin pip cannot install) its folder keeps ``stack.json``
  with status ``failed`` and pip's reason, the audit runs in the current stack, and the
  run's ``stack`` record and tier 3 name the stack and why.  A failed stack is not
  retried until it is removed (``qencode-nb stack remove NAME``).
- a stack name: that stack's kernel (``qencode-nb stack create NAME ...``); it must
  exist and be ready.
"""

from __future__ import annotations

from pathlib import Path

import sys



def kernels_for(stack: str, targets, db=None, *, log=None) -> dict:
    """The Jupyter kernelspec each target's audit runs in under ``stack``.

    Args:
        stack: a value :func:`qencode_nb.options.check_stack` accepted.
        targets: entry files or bundled names (as sweeps give them).
        db: the audits' ``db`` folder (completes a bundled entry).
        log: ``callable(str)`` told when a stack is built or could not be (default:
            a line on stderr).

    Returns:
        ``{target: kernelspec or None}``; None runs the notebook's own kernel (the
        current stack): always for ``current``; for ``recorded`` where the current
        environment holds every recorded pin, the entry records none or cannot be read
        (its run then says why), or its stack could not be built (its ``stack.json``
        keeps the reason, which the run's ``stack`` record quotes).
    """
    from qencode_nb.batch import stacks

    say = log or (lambda line: print(f"qencode-nb: {line}", file=sys.stderr, flush=True))
    if stack == "current":
        return {t: None for t in targets}
    if stack != "recorded":
        return {t: stacks.kernelspec_name(stack) for t in targets}
    built = {}
    out = {}
    for target in targets:
        recorded = _recorded(target, db)
        if recorded is None:
            out[target] = None
            continue
        name, requirements = recorded
        if name not in built:
            built[name] = ensure_stack(name, requirements, say)
        out[target] = built[name]
    return out


def _recorded(target, db) -> tuple | None:
    """``(stack name, requirements)`` of a target's recorded stack, or None where the
    current environment already holds it, the entry records none or cannot be read."""
    from qencode_nb.entry.lookup import load
    from qencode_nb.entry.recorded_env import recorded_environment, recorded_stack_name
    from qencode_nb.errors import QencodeNbError
    from qencode_nb.notebook.provenance import version_drift

    try:
        entry = load(target, db=db)
    except (QencodeNbError, OSError, ValueError):
        return None
    recorded = recorded_environment(entry.tool_versions)
    if not recorded.requirements:
        return None
    drift = version_drift(entry.tool_versions)
    if all(v["match"] for k, v in drift.items() if k != "python"):
        return None                      # the current stack is the recorded one
    return recorded_stack_name(recorded), recorded.requirements


def ensure_stack(name: str, requirements, log, *, jupyter_prefix=None) -> str | None:
    """The kernelspec of stack ``name``, built from ``requirements`` if it does not
    exist (once: under ``<stacks>/<name>.lock``; a second process waits and then finds
    it built).

    Args:
        name: the stack's name (:func:`qencode_nb.entry.recorded_env.recorded_stack_name`).
        requirements: pip requirement strings of the stack.
        log: ``callable(str)`` told when it is built, or why it is not.
        jupyter_prefix: where its kernelspec goes
            (:func:`qencode_nb.batch.stacks.create_stack`; default this environment's).

    Returns:
        the kernelspec (``qencode-nb-<name>``), or None when the stack failed now or
        before (``log`` is told why; its ``stack.json`` keeps the reason).
    """
    import time

    from qencode_nb.batch import stacks
    from qencode_nb.batch.run_folder import run_lock
    from qencode_nb.errors import StackError

    root = stacks.stacks_root()
    with run_lock(root, name):
        rec = _record(name)
        if rec is None:
            log(f"building stack {name} from the entry's record, once "
                f"({', '.join(r for r in requirements if not r.startswith('pennylane-'))}) ...")
            start = time.monotonic()
            try:
                rec = stacks.create_stack(name, requirements=list(requirements),
                                          jupyter_prefix=jupyter_prefix)
            except StackError as exc:
                log(f"stack {name} could not be built; the audits run in the current stack "
                    f"and say so: {str(exc).splitlines()[0]}")
                return None
            log(f"stack {name} built in {time.monotonic() - start:.0f} s "
                f"(kernel {rec['kernelspec']})")
    if rec.get("status") != "ready":
        log(f"stack {name} failed before ({' '.join(str(rec.get('failure')).split())[:200]}); "
            f"the audits run in the current stack; `qencode-nb stack remove {name}` to "
            "try again")
        return None
    return attach_stack(rec, log, jupyter_prefix=jupyter_prefix)


def attach_stack(rec: dict, log, *, jupyter_prefix=None) -> str | None:
    """Make a ready stack built earlier (by another checkout, or before this one's
    virtual environment was made again) this checkout's: its kernel imports this
    checkout's qencode_nb (``_qencode_nb_checkout.pth`` rewritten where it names another
    folder) and Jupyter here finds its kernelspec (``ipykernel install`` again where it
    does not: a kernelspec lives in the environment that created the stack, which a new
    clone does not have).  Issue 36: before, such a stack's every run failed with
    ``NoSuchKernel``, or its kernel imported another checkout's code.

    Args:
        rec: the stack's ``stack.json`` (:func:`qencode_nb.batch.stacks.read_stack`).
        log: ``callable(str)`` told what was repaired, or why the stack is not used.
        jupyter_prefix: where a kernelspec is registered (default this environment's).

    Returns:
        the kernelspec, or None when the stack's Python no longer runs (``log`` says so).
    """
    import subprocess

    from qencode_nb.batch import stacks
    from qencode_nb.paths import ROOT

    name, env_dir = rec["name"], Path(rec["path"])
    py = stacks.stack_python(env_dir.resolve())   # as its kernelspec names it
    try:
        site = Path(stacks.site_packages(py))
    except (OSError, subprocess.SubprocessError) as exc:
        log(f"stack {name} no longer runs ({exc}); the audits run in the current stack; "
            f"`qencode-nb stack remove {name}` to build it again")
        return None
    pth = site / "_qencode_nb_checkout.pth"
    named = pth.read_text(encoding="utf-8").strip() if pth.is_file() else None
    if named != str(ROOT):
        pth.write_text(f"{ROOT}\n", encoding="utf-8")
        log(f"stack {name}: its kernel now imports this checkout's qencode_nb ({ROOT})")
    own = str(py)
    if _kernel_python(rec["kernelspec"]) != own:   # not found, or another stack's spec
        prefix = stacks.jupyter_prefix_of(jupyter_prefix)
        done = subprocess.run([str(py), "-m", "ipykernel", "install", "--prefix",
                               str(prefix), "--name", rec["kernelspec"], "--display-name",
                               f"qencode-nb {name} (Python {rec.get('python')})"],
                              capture_output=True, text=True)
        if done.returncode != 0 or _kernel_python(rec["kernelspec"]) != own:
            why = done.stderr.strip()[-300:] if done.returncode else (
                f"Jupyter finds another kernelspec of that name first: "
                f"{stacks.available_kernelspecs().get(rec['kernelspec'])}")
            log(f"stack {name}: its kernel could not be registered again ({why}); the "
                "audits run in the current stack")
            return None
        log(f"stack {name}: kernel {rec['kernelspec']} registered again under {prefix}")
    return rec["kernelspec"]


def _kernel_python(kernelspec: str) -> str | None:
    """``argv[0]`` of the kernelspec Jupyter finds under that name here, or None."""
    from qencode_nb.batch import stacks

    found = stacks.available_kernelspecs().get(kernelspec)
    return stacks.spec_python(Path(found)) if found else None


def _record(name: str) -> dict | None:
    from qencode_nb.batch import stacks
    from qencode_nb.errors import StackError

    try:
        return stacks.read_stack(name)
    except StackError:
        return None


def stack_parameter(stack: str) -> dict:
    """The audit.ipynb parameters of ``stack``: ``{"stack": stack}``, nothing for
    ``current`` (the notebook's default), so a sweep's inputs stay as they were."""
    return {} if stack in (None, "current") else {"stack": stack}

