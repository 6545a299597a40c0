"""Stacks built by uv (issue 52): ``uv venv`` plus a sync of the stack's lock, once.

:func:`create_stack` makes a stack's virtual environment and registers its kernel;
what goes in comes from one of:

- a lock (:class:`qencode_nb.environment.lock.Lock`): an entry's recorded stack resolved
  at its date, installed exactly (``uv pip sync``, every hash checked);
- a registered recipe (:data:`RECIPES`): ``reference`` is ``requirements.lock``,
  ``latest`` pyproject's dependencies unpinned (the newest releases on the day);
- a requirements file or requirement strings, installed with pyproject's dependencies
  (``uv pip install``);
- ``overlay=True``: the running environment's packages (a ``.pth`` adding its
  site-packages after the stack's own) and only the given requirements on top, by pip,
  which sees the overlaid packages as installed (uv looks at the venv's own
  site-packages only, and would install them again).

Records and kernelspecs are written through :mod:`qencode_nb.environment.store`.
:func:`ensure_stack` builds a stack once under a lock in the stacks folder (two sweeps
never build it twice at once) and attaches a stack built earlier.  A distributed run
carries a locked stack to each Dask worker: :func:`stack_description` (the driver: the
stack's name and lock) and :func:`ensure_described` (the worker: built or attached there).
"""

from __future__ import annotations

import datetime as _dt
import os
import subprocess
import sys
import time
from pathlib import Path

from qencode_nb.environment import store
from qencode_nb.environment.lock import toolkit_dependencies, uv_binary
from qencode_nb.errors import ParameterError, StackError
from qencode_nb.paths import ROOT, stacks_root

#: Registered recipes: name -> what it is.
RECIPES = {
    "reference": "requirements.lock: QEncode v4's pins (requirements-v4.txt) and the rest "
                 "of the tree, every version pinned",
    "latest": "pyproject.toml's dependencies unpinned: the latest releases the index "
              "serves on the day the stack is created",
}

#: The file holding a stack's lock in its folder (:data:`~qencode_nb.environment.store.LOCK_FILE`).
LOCK_FILE = store.LOCK_FILE


def recipe_requirements(recipe: str) -> list[str]:
    """Installer arguments of a registered recipe.

    Args:
        recipe: a key of :data:`RECIPES` (case-insensitive).

    Returns:
        ``["-r", ".../requirements.lock"]`` for "reference"; the unpinned dependency names
        for "latest".

    Raises:
        ParameterError: an unknown recipe (lists the accepted ones).
    """
    key = str(recipe).lower()
    if key == "reference":
        return ["-r", str(ROOT / "requirements.lock")]
    if key == "latest":
        return toolkit_dependencies()
    raise ParameterError(f"{recipe!r} is not accepted; accepted: "
                         + ", ".join(RECIPES) + " (or give requirements)", parameter="recipe")


def _requirement_args(requirements) -> list[str]:
    """Installer arguments for a requirements file path or a list of requirement strings.

    Raises:
        ParameterError: an empty list, a non-string item, a missing file.
    """
    if isinstance(requirements, (str, os.PathLike)) and Path(requirements).suffix in (
            ".txt", ".lock", ".in"):
        path = Path(requirements)
        if not path.is_file():
            raise ParameterError(f"requirements file {str(path)!r} does not exist; accepted: "
                                 "a pip requirements file or requirement strings")
        return ["-r", str(path.resolve())]
    items = [requirements] if isinstance(requirements, str) else list(requirements or ())
    if not items or not all(isinstance(i, str) and i.strip() for i in items):
        raise ParameterError(f"{requirements!r} are not accepted; accepted: a pip "
                             "requirements file (.txt/.lock/.in) or one or more "
                             "requirement strings such as 'scipy==1.16.3'",
                             parameter="requirements")
    return [i.strip() for i in items]


def _run_logged(cmd, log, what: str) -> None:
    """Run ``cmd``, appending its output to ``log``.

    Raises:
        StackError: non-zero exit; the message names ``what`` and quotes the last lines.
    """
    log.write(f"$ {' '.join(map(str, cmd))}\n")
    log.flush()
    proc = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    log.write(proc.stdout)
    log.flush()
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.strip().splitlines()[-8:])
        raise StackError(f"{what} failed (exit {proc.returncode}):\n{tail}")


def _installed(py: Path) -> dict:
    """``{distribution: version}`` as the stack's Python sees them (own first):
    :func:`qencode_nb.notebook.provenance.installed_packages` run in the stack, the map
    its audits record."""
    import json

    code = ("import json; from qencode_nb.notebook.provenance import installed_packages; "
            "print(json.dumps(installed_packages()))")
    out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _install(env_dir: Path, py: Path, args, lock, overlay: bool, log) -> str:
    """Make the venv and install into it; returns the builder's name and version."""
    if overlay:
        import venv

        log.write(f"venv {env_dir} (base Python {sys.version.split()[0]}), pip: overlay\n")
        venv.EnvBuilder(with_pip=True).create(str(env_dir))
        import sysconfig

        parent = sysconfig.get_paths()["purelib"]
        (Path(store.site_packages(py)) / "_qencode_nb_overlay.pth").write_text(
            f"import site; site.addsitedir({parent!r})\n")
        _run_logged([py, "-m", "pip", "install", "--disable-pip-version-check", *args], log,
                    f"pip install {' '.join(args)}")
        return "pip"
    uv = uv_binary()
    _run_logged([uv, "venv", "--python", sys.executable, "--no-project", "--allow-existing",
                 env_dir], log,
                "uv venv")
    if lock is not None:
        (env_dir / LOCK_FILE).write_text(lock.text, encoding="utf-8")
        _run_logged([uv, "pip", "sync", "--python", py, env_dir / LOCK_FILE], log,
                    "uv pip sync of the stack's lock")
    else:
        _run_logged([uv, "pip", "install", "--python", py, *args], log,
                    f"uv pip install {' '.join(args)}")
    return subprocess.run([uv, "--version"], capture_output=True, text=True).stdout.strip()


def create_stack(name: str, recipe: str | None = None, *, requirements=None, lock=None,
                 overlay: bool = False, root=None, jupyter_prefix=None,
                 replace: bool = False) -> dict:
    """Create the virtual environment of a stack and register its Jupyter kernel.

    Steps (each command and its output go to ``<stack>/create.log``): ``uv venv`` on this
    interpreter, ``uv pip sync`` of the lock (or ``uv pip install`` of the recipe or
    requirements; pip for an overlay), a ``.pth`` file putting this checkout on the
    stack's path (the kernel imports the same qencode_nb), the installed versions, then
    ``python -m ipykernel install --prefix <jupyter_prefix> --name qencode-nb-<name>``.
    An existing stack of that name is refused unless ``replace``.

    Args:
        name: stack name (:data:`qencode_nb.environment.store.NAME_PATTERN`).
        recipe: a key of :data:`RECIPES`; default ``name`` when it is one.
        requirements: a requirements file or requirement strings (installed with
            pyproject's dependencies unless ``overlay``).
        lock: a :class:`~qencode_nb.environment.lock.Lock`, installed exactly.
        overlay: start from the running environment's packages, install only
            ``requirements`` on top.
        replace: remove an existing stack of that name first.
        root: stacks folder (default :func:`qencode_nb.paths.stacks_root`).
        jupyter_prefix: prefix whose ``share/jupyter/kernels`` receives the kernelspec.

    Returns:
        The stack record (also ``stack.json``): ``name``, ``kernelspec``, ``path``,
        ``python``, ``recipe``, ``requirements``, ``lock`` (the lock's description:
        key, resolved_at, resolved_on, fallback; None without one), ``builder`` (``uv
        0.13.9``, or ``pip``), ``build_s``, ``overlay_of``, ``freeze`` ({distribution:
        version}), ``created`` (UTC), ``status`` ("ready"), ``kernelspec_dir``.

    Raises:
        ParameterError: a bad name, an unknown recipe, not exactly one of recipe,
            requirements and lock, an overlay with a recipe or a lock.
        StackError: the stack exists and ``replace`` is False; or uv, pip or ipykernel
            failed: the folder keeps ``create.log`` and a record with status "failed" and
            the reason, and no kernel is registered.
    """
    store.check_name(name)
    if recipe is None and requirements is None and lock is None:
        if name.lower() not in RECIPES:
            raise ParameterError(f"stack {name!r}: give a recipe ({', '.join(RECIPES)}), "
                                 "requirements or a lock")
        recipe = name
    given = [w for w, x in (("recipe", recipe), ("requirements", requirements),
                            ("a lock", lock)) if x is not None]
    if len(given) != 1:
        raise ParameterError(f"give one of a recipe, requirements or a lock, not both "
                             f"(given: {', '.join(given)})")
    if overlay and requirements is None:
        what = f"recipe {recipe!r}" if recipe is not None else "a lock"
        raise ParameterError(f"overlay installs requirements on top of this environment; "
                             f"{what} is a whole stack (accepted with overlay: requirements)")
    args = (recipe_requirements(recipe) if recipe is not None else
            _requirement_args(requirements) if requirements is not None else [])
    if requirements is not None and not overlay:
        args = [*args, *toolkit_dependencies()]
    env_dir = store.stack_dir(name, root)
    if env_dir.exists():
        if not replace:
            raise StackError(f"stack {name!r} already exists in {env_dir.parent} (status "
                             f"{store.status(env_dir)}); remove it first or pass replace=True "
                             "(CLI: --replace)")
        store.remove_stack(name, root=root, jupyter_prefix=jupyter_prefix)
    env_dir.mkdir(parents=True)
    record = {"name": name, "kernelspec": store.kernelspec_name(name), "path": str(env_dir),
              "recipe": recipe, "requirements": args,
              "lock": None if lock is None else lock.to_record(),
              "overlay_of": None, "status": "creating",
              "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    if overlay:
        import sysconfig

        record["overlay_of"] = sysconfig.get_paths()["purelib"]
    store.write_record(env_dir, record)
    py = store.stack_python(env_dir)
    start = time.monotonic()
    with open(env_dir / "create.log", "w", encoding="utf-8") as log:
        try:
            record["builder"] = _install(env_dir, py, args, lock, overlay, log)
            # The kernel imports qencode_nb from this checkout, so every stack runs the
            # same toolkit code (no build step).
            (Path(store.site_packages(py)) / "_qencode_nb_checkout.pth").write_text(f"{ROOT}\n")
            record["python"] = subprocess.run(
                [str(py), "-c", "import platform; print(platform.python_version())"],
                capture_output=True, text=True, check=True).stdout.strip()
            record["freeze"] = _installed(py)
            done = store.register_kernelspec(py, record, jupyter_prefix)
            log.write(done.stdout + done.stderr)
            if done.returncode != 0:
                raise StackError(f"ipykernel install failed (exit {done.returncode}): "
                                 + done.stderr.strip()[-300:])
            record["kernelspec_dir"] = str(store.jupyter_prefix_of(jupyter_prefix) / "share"
                                           / "jupyter" / "kernels" / record["kernelspec"])
        except (StackError, OSError, subprocess.SubprocessError) as exc:
            record.update(status="failed", failure=str(exc))
            store.write_record(env_dir, record)
            raise StackError(f"stack {name!r} could not be created: {exc} "
                             f"(log: {env_dir / 'create.log'})") from exc
    record.update(status="ready", build_s=round(time.monotonic() - start, 1))
    store.write_record(env_dir, record)
    return record


def ensure_stack(name: str, lock, log, *, jupyter_prefix=None) -> str | None:
    """The kernelspec of stack ``name``, built from ``lock`` if it does not exist (once:
    under ``<stacks>/<name>.lock``; a second process waits and then finds it built).

    Args:
        name: the stack's name (:func:`qencode_nb.environment.choice.stack_name`).
        lock: its :class:`~qencode_nb.environment.lock.Lock`.
        log: ``callable(str)`` told when it is built, or why it is not.
        jupyter_prefix: where its kernelspec goes (default this environment's).

    Returns:
        the kernelspec (``qencode-nb-<name>``), or None when the stack failed now or
        before (``log`` is told why; its record keeps the reason).
    """
    from qencode_nb.file_lock import exclusive

    with exclusive(stacks_root() / f"{name}.lock"):
        rec = store.find_stack(name)
        if rec is None:
            when = lock.resolved_at or f"today ({lock.resolved_on}, undated)"
            log(f"building stack {name} from the entry's record, resolved at {when}, once ...")
            try:
                rec = create_stack(name, lock=lock, jupyter_prefix=jupyter_prefix)
            except StackError as exc:
                log(f"stack {name} could not be built; the audits run in the current stack "
                    f"and say so: {str(exc).splitlines()[0]}")
                return None
            log(f"stack {name} built by {rec.get('builder')} in {rec.get('build_s')} s "
                f"(kernel {rec['kernelspec']})")
    if rec.get("status") != "ready":
        log(f"stack {name} failed before ({' '.join(str(rec.get('failure')).split())[:200]}); "
            f"the audits run in the current stack; `qencode-nb stack remove {name}` to "
            "try again")
        return None
    return store.attach_stack(rec, log, jupyter_prefix=jupyter_prefix)


def stack_description(kernelspec, root=None) -> dict | None:
    """What another host needs to build the stack a kernelspec of the store runs (a Dask
    worker, :func:`ensure_described`): ``{"name", "lock": {key, resolved_at, resolved_on,
    fallback, python, text}, "cached_as": [the lock's file names under <stacks>/locks/]}``.

    Returns:
        the description, or None for a kernelspec that is not a ready locked stack of the
        store here (None, ``python3``, a stack of a recipe or of requirements).
    """
    from qencode_nb.environment.lock import cached_as

    prefix = store.KERNELSPEC_PREFIX
    if not isinstance(kernelspec, str) or not kernelspec.startswith(prefix):
        return None
    name = kernelspec[len(prefix):]
    try:
        rec = store.find_stack(name, root)
    except ParameterError:
        return None
    text = store.lock_text(name, root)
    if (not isinstance(rec, dict) or rec.get("status") != "ready" or not rec.get("lock")
            or rec.get("kernelspec") != kernelspec or text is None):
        return None
    return {"name": name, "lock": {**rec["lock"], "text": text},
            "cached_as": cached_as(rec["lock"]["key"], root)}


def ensure_described(description: dict, log, *, jupyter_prefix=None) -> str | None:
    """On the host that runs it (a Dask worker, its own ``QENCODE_NB_STACKS``): the
    kernelspec of the stack ``description`` (:func:`stack_description`) describes, built
    here from its lock once or attached (:func:`ensure_stack`, under its file lock); the
    lock kept as the describing host kept it, so the kernel names the stack alike.

    Returns:
        the kernelspec, or None where it cannot be built or the description is not one
        (``log`` says why; the run then runs in the notebook's kernel, and its ``stack``
        record says why).
    """
    import hashlib

    from qencode_nb.environment.lock import Lock, keep

    try:
        name = store.check_name(description["name"])
        lock = Lock(**description["lock"])
        if hashlib.sha256(lock.text.encode()).hexdigest()[:12] != lock.key:
            raise ValueError(f"its lock text does not hash to its key {lock.key}")
    except (ParameterError, KeyError, TypeError, ValueError, AttributeError) as exc:
        log(f"a stack description that cannot be used ({exc}); the audit runs in the "
            "current stack")
        return None
    keep(lock, description.get("cached_as") or ())
    return ensure_stack(name, lock, log, jupyter_prefix=jupyter_prefix)
