"""The stack store: package stacks as Jupyter kernels, and the only reader and writer
of their records (``stack.json``) and kernelspecs.

A *stack* is a virtual environment that imports qencode_nb from this checkout (a
``.pth`` file) and holds one set of package versions, registered as the Jupyter
kernelspec ``qencode-nb-<name>`` so that papermill can run ``audit.ipynb`` in it: the
notebook is driven from the current environment, the kernel's Python and packages are
the stack's.  Stacks live under :func:`qencode_nb.paths.stacks_root`
(``$QENCODE_NB_STACKS``, else ``~/.local/share/qencode-nb/stacks``), one folder each
with ``stack.json`` (name, recipe or lock, Python, the installed versions, kernelspec,
status; :mod:`qencode_nb.environment.build` makes them), ``create.log`` and, for a
locked stack, its lock text (``stack.lock``); kernelspecs under
``<jupyter_prefix>/share/jupyter/kernels`` (default ``$QENCODE_NB_JUPYTER_PREFIX``, else
this environment's ``sys.prefix``).  A failed creation keeps its folder, log and a record with ``status:
"failed"`` and the reason, and registers no kernel.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from qencode_nb.errors import ParameterError, StackError
from qencode_nb.paths import ROOT, STACK_NAME_PATTERN, STACK_RECORD, stacks_root

#: Prefix of every kernelspec the store registers (``qencode-nb-<stack name>``).
KERNELSPEC_PREFIX = "qencode-nb-"

#: The file holding a locked stack's lock text in its folder (``uv pip sync``'s input).
LOCK_FILE = "stack.lock"

#: Accepted stack names (:data:`qencode_nb.paths.STACK_NAME_PATTERN`).
NAME_PATTERN = re.compile(STACK_NAME_PATTERN)

#: The words of the ``stack`` parameter besides a stack name (CLI ``--stack``), defined
#: here once: no stack may be named one, so ``--stack NAME`` is never ambiguous.  What
#: each means is decided in :mod:`qencode_nb.environment.choice`: ``current`` (this
#: environment), ``recorded`` (the entry's stack resolved at its date) and
#: ``recorded-today`` (its pins resolved as the index serves them today).
STACK_WORDS = ("current", "recorded", "recorded-today")
CURRENT, RECORDED, RECORDED_TODAY = STACK_WORDS


def check_name(name) -> str:
    """Validate a stack name (:data:`NAME_PATTERN`, not one of :data:`STACK_WORDS`).

    Raises:
        ParameterError: names the value and what is accepted.
    """
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise ParameterError(f"stack name {name!r} is not accepted; accepted: lower-case "
                             "letters, digits, '.', '_', '-', starting with a letter or digit, "
                             "at most 64 characters")
    if name in STACK_WORDS:
        raise ParameterError(f"stack name {name!r} is not accepted: "
                             f"{', '.join(STACK_WORDS)} are words of --stack")
    return name


def kernelspec_name(name: str) -> str:
    """The kernelspec name of stack ``name``: ``qencode-nb-<name>``."""
    return KERNELSPEC_PREFIX + check_name(name)


def stack_dir(name: str, root=None) -> Path:
    """The folder of stack ``name`` (absolute)."""
    return stacks_root(root).resolve() / check_name(name)


def stack_python(env_dir: Path) -> Path:
    """The Python of the stack in folder ``env_dir``."""
    return Path(env_dir) / "bin" / "python"


def write_record(env_dir: Path, record: dict) -> None:
    """Write a stack's record (``stack.json`` in its folder)."""
    (Path(env_dir) / STACK_RECORD).write_text(json.dumps(record, indent=1, sort_keys=True))


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def find_stack(name: str, root=None) -> dict | None:
    """The record of stack ``name``, or None (no such stack, or an unreadable record)."""
    return _read(stacks_root(root) / check_name(name) / STACK_RECORD)


def lock_text(name: str, root=None) -> str | None:
    """The lock text of stack ``name`` (its :data:`LOCK_FILE`), or None: no such stack, or
    one built from a recipe or requirements (no lock)."""
    try:
        return (stacks_root(root) / check_name(name) / LOCK_FILE).read_text(encoding="utf-8")
    except OSError:
        return None


def read_stack(name: str, root=None) -> dict:
    """The record of stack ``name``.

    Raises:
        StackError: no such stack (lists the stacks there are).
    """
    rec = find_stack(name, root)
    if rec is None:
        have = [r["name"] for r in list_stacks(root)]
        raise StackError(f"stack {name!r} does not exist in {stacks_root(root)}; there are: "
                         + (", ".join(have) or "none"))
    return rec


def list_stacks(root=None) -> list[dict]:
    """The records of every stack under :func:`stacks_root` (sorted by name)."""
    base = stacks_root(root)
    if not base.is_dir():
        return []
    out = []
    for path in sorted(base.glob(f"*/{STACK_RECORD}")):
        rec = _read(path)
        out.append(rec if rec is not None else {"name": path.parent.name,
                                                "status": "unreadable",
                                                "path": str(path.parent)})
    return out


def ready_stacks(root=None) -> list[str]:
    """The names of the ready stacks (``status: "ready"``), sorted."""
    return [r["name"] for r in list_stacks(root) if r.get("status") == "ready"]


def running_stack() -> dict:
    """The stack this Python runs: ``{"name", "kernelspec", "lock"}`` of a stack of the
    store (its ``stack.json`` sits in ``sys.prefix``; ``lock`` its lock's description or
    None), else ``{"name": "current", "kernelspec": None, "lock": None}`` (the
    environment qencode-nb is installed in)."""
    rec = _read(Path(sys.prefix) / STACK_RECORD)
    if not isinstance(rec, dict) or "name" not in rec:
        return {"name": CURRENT, "kernelspec": None, "lock": None}
    return {"name": rec["name"], "kernelspec": rec.get("kernelspec"), "lock": rec.get("lock")}


def remove_stack(name: str, root=None, jupyter_prefix=None) -> None:
    """Delete stack ``name``'s folder and the kernelspec it registered.

    The kernelspec removed is the one its record names (``kernelspec_dir``), and only if
    its Python is this stack's; a stack with no such record falls back to
    ``<jupyter_prefix>/share/jupyter/kernels/qencode-nb-<name>`` under the same
    condition.  A kernelspec of that name belonging to another stacks folder is left
    alone.

    Raises:
        StackError: no such stack (lists the stacks there are).
    """
    env_dir = stacks_root(root) / check_name(name)
    if not env_dir.is_dir():
        read_stack(name, root)          # raises, listing the stacks there are
    recorded = (_read(env_dir / STACK_RECORD) or {}).get("kernelspec_dir")
    spec = Path(recorded) if recorded else (
        jupyter_prefix_of(jupyter_prefix) / "share" / "jupyter" / "kernels" / kernelspec_name(name))
    if spec_python(spec) == str(stack_python(env_dir.resolve())):
        shutil.rmtree(spec)
    shutil.rmtree(env_dir)


def status(env_dir: Path) -> str:
    """A stack folder's status (``ready``, ``failed``, ``creating``, ``unreadable``)."""
    rec = _read(Path(env_dir) / STACK_RECORD)
    return "unreadable" if rec is None else rec.get("status", "unknown")


def jupyter_prefix_of(jupyter_prefix) -> Path:
    """The Jupyter prefix a kernelspec goes to: ``jupyter_prefix``, else
    ``$QENCODE_NB_JUPYTER_PREFIX`` (a Dask worker's own, beside its own
    ``QENCODE_NB_STACKS``; Jupyter finds it through ``JUPYTER_PATH``), else ``sys.prefix``."""
    import os

    if jupyter_prefix is None:
        jupyter_prefix = os.environ.get("QENCODE_NB_JUPYTER_PREFIX") or sys.prefix
    return Path(jupyter_prefix)


def site_packages(py: Path) -> str:
    """The ``purelib`` folder of the Python ``py`` (a stack's site-packages)."""
    return subprocess.run([str(py), "-c", "import sysconfig; "
                           "print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()


def spec_python(spec: Path) -> str | None:
    """``argv[0]`` of the kernelspec in folder ``spec``, or None."""
    try:
        return json.loads((Path(spec) / "kernel.json").read_text())["argv"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return None


def available_kernelspecs() -> dict:
    """``{kernelspec name: resource folder}`` that Jupyter finds from here."""
    from jupyter_client.kernelspec import KernelSpecManager

    return KernelSpecManager().find_kernel_specs()


def kernel_python(kernelspec: str) -> str | None:
    """``argv[0]`` of the kernelspec Jupyter finds under that name here, or None."""
    found = available_kernelspecs().get(kernelspec)
    return spec_python(Path(found)) if found else None


def register_kernelspec(py: Path, record: dict, jupyter_prefix=None) -> subprocess.CompletedProcess:
    """``python -m ipykernel install`` of a stack's kernelspec under ``jupyter_prefix``
    (default this environment's); the caller checks the result."""
    return subprocess.run([str(py), "-m", "ipykernel", "install", "--prefix",
                           str(jupyter_prefix_of(jupyter_prefix)), "--name",
                           record["kernelspec"], "--display-name",
                           f"qencode-nb {record['name']} (Python {record.get('python')})"],
                          capture_output=True, text=True)


def attach_stack(rec: dict, log, *, jupyter_prefix=None) -> str | None:
    """Make a ready stack built earlier (by another checkout, or before this one's
    virtual environment was made again) this checkout's: its kernel imports this
    checkout's qencode_nb (``_qencode_nb_checkout.pth`` rewritten where it names another
    folder) and Jupyter here finds its kernelspec (registered again where it does not:
    a kernelspec lives in the environment that created the stack).  Issue 36.

    Args:
        rec: the stack's record (:func:`read_stack`).
        log: ``callable(str)`` told what was repaired, or why the stack is not used.
        jupyter_prefix: where a kernelspec is registered (default this environment's).

    Returns:
        the kernelspec, or None when the stack's Python no longer runs (``log`` says so).
    """
    name, env_dir = rec["name"], Path(rec["path"])
    py = stack_python(env_dir.resolve())   # as its kernelspec names it
    try:
        site = Path(site_packages(py))
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
    if kernel_python(rec["kernelspec"]) != own:   # not found, or another stack's spec
        done = register_kernelspec(py, rec, jupyter_prefix)
        if done.returncode != 0 or kernel_python(rec["kernelspec"]) != own:
            why = done.stderr.strip()[-300:] if done.returncode else (
                f"Jupyter finds another kernelspec of that name first: "
                f"{available_kernelspecs().get(rec['kernelspec'])}")
            log(f"stack {name}: its kernel could not be registered again ({why}); the "
                "audits run in the current stack")
            return None
        log(f"stack {name}: kernel {rec['kernelspec']} registered again under "
            f"{jupyter_prefix_of(jupyter_prefix)}")
    return rec["kernelspec"]


def check_kernelspecs(kernelspecs) -> list[str]:
    """Validate the kernels of an environment comparison early.

    Args:
        kernelspecs: two or more kernelspec names (e.g. ``["python3",
            "qencode-nb-latest"]``, or one string of names separated by commas
            or spaces, as ``papermill -p`` passes them); repeats are dropped.

    Raises:
        ParameterError: fewer than two, or a name Jupyter does not find (lists
            the kernels it finds and how to create a stack).
    """
    items = [kernelspecs] if isinstance(kernelspecs, str) else list(kernelspecs or ())
    names = [n for item in items for n in re.split(r"[,\s]+", str(item).strip()) if n]
    names = list(dict.fromkeys(names))
    found = available_kernelspecs()
    if len(names) < 2:
        raise ParameterError(f"{kernelspecs!r}: an environment comparison needs two or "
                             "more distinct kernelspecs; accepted: " + ", ".join(sorted(found)),
                             parameter="kernelspecs")
    unknown = [k for k in names if k not in found]
    if unknown:
        failed = [r["name"] for r in list_stacks()
                  if r.get("status") != "ready" and kernelspec_name(r["name"]) in unknown]
        raise ParameterError(f"kernelspec(s) {', '.join(unknown)} not found; accepted: "
                             + ", ".join(sorted(found))
                             + "".join(f"; stack {n!r} failed, see its create.log" for n in failed)
                             + " (create one with `qencode-nb stack create NAME`)")
    return names
