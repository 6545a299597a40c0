"""Package stacks as Jupyter kernels: the environment comparison's other side.

A *stack* is a virtual environment (stdlib :mod:`venv`, packages by pip)
that imports qencode_nb from this checkout (a ``.pth`` file) and holds one set of
package versions, registered as the Jupyter kernelspec ``qencode-nb-<name>``
(``ipykernel install``), so that papermill can run ``audit.ipynb`` in it:
the notebook is driven from the current environment, the kernel's Python
and packages are the stack's.  The kernel records its own versions in the
``provenance`` record, so a comparison reads what actually ran.

Stacks come from one of:

- a registered recipe (:data:`RECIPES`): ``reference`` is ``requirements.lock``
  (QEncode v4's pins plus ours, the whole tree pinned), ``latest`` is the
  names of pyproject's dependencies unpinned, i.e. the latest releases pip
  resolves on the day the stack is created;
- a requirements file (``requirements=PATH``) or requirement strings
  (``requirements=["scipy==1.16.3"]``).

``overlay=True`` starts from the running environment's packages (a ``.pth``
file that adds its site-packages after the stack's own) and installs only the
given requirements on top: a one-package change (e.g. SciPy 1.16, whose COBYLA
is the PRIMA rewrite) costs seconds instead of a whole install.  Binary
packages must still be compatible with what they overlay (pip checks only the
requirements it installs).

Where things go: stacks under :func:`stacks_root` (``$QENCODE_NB_STACKS``, else
``~/.local/share/qencode-nb/stacks``), one folder each with ``stack.json``
(name, recipe, requirements, overlay parent, Python, ``pip freeze``,
kernelspec name, status) and ``create.log`` (pip's output); kernelspecs under
``<jupyter_prefix>/share/jupyter/kernels`` (default: this environment's
``sys.prefix``, which its Jupyter and papermill search).  A failed creation
keeps its folder, log and ``stack.json`` with ``status: "failed"`` and the
reason, and registers no kernel.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from qencode_nb.errors import ParameterError, StackError

from qencode_nb.paths import ROOT, STACK_NAME_PATTERN, STACK_RECORD, stacks_root  # noqa: E402, F401

#: Prefix of every kernelspec this module registers (``qencode-nb-<stack name>``).
KERNELSPEC_PREFIX = "qencode-nb-"

#: Accepted stack names (:data:`qencode_nb.paths.STACK_NAME_PATTERN`).
NAME_PATTERN = re.compile(STACK_NAME_PATTERN)

#: Registered recipes: name -> (what it is, how its requirements are made).
RECIPES = {
    "reference": "requirements.lock: QEncode v4's pins (requirements-v4.txt) and the rest "
                 "of the tree, every version pinned",
    "latest": "pyproject.toml's dependencies unpinned: the latest releases pip resolves "
              "on the day the stack is created",
}

#: Words of the ``--stack`` option (:mod:`qencode_nb.batch.stack_choice`) that no stack
#: may be named, so that ``--stack NAME`` is never ambiguous.
RESERVED_NAMES = ("current", "recorded")


def check_name(name) -> str:
    """Validate a stack name (:data:`NAME_PATTERN`, not one of :data:`RESERVED_NAMES`).

    Raises:
        ParameterError: names the value and what is accepted.
    """
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise ParameterError(f"stack name {name!r} is not accepted; accepted: lower-case "
                             "letters, digits, '.', '_', '-', starting with a letter or digit, "
                             "at most 64 characters")
    if name in RESERVED_NAMES:
        raise ParameterError(f"stack name {name!r} is not accepted: "
                             f"{' and '.join(RESERVED_NAMES)} are words of --stack")
    return name


def kernelspec_name(name: str) -> str:
    """The kernelspec name of stack ``name``: ``qencode-nb-<name>``."""
    return KERNELSPEC_PREFIX + check_name(name)


def _pyproject_dependencies() -> list[str]:
    """Distribution names of pyproject.toml's ``[project] dependencies`` (version
    specifiers dropped)."""
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return [re.split(r"[\s\[<>=!~;]", d, maxsplit=1)[0] for d in deps]


def recipe_requirements(recipe: str) -> list[str]:
    """pip arguments installing a registered recipe.

    Args:
        recipe: a key of :data:`RECIPES` (case-insensitive).

    Returns:
        ``["-r", ".../requirements.lock"]`` for "reference"; the unpinned
        dependency names for "latest".

    Raises:
        ParameterError: an unknown recipe (lists the accepted ones).
    """
    key = str(recipe).lower()
    if key == "reference":
        return ["-r", str(ROOT / "requirements.lock")]
    if key == "latest":
        return _pyproject_dependencies()
    raise ParameterError(f"{recipe!r} is not accepted; accepted: "
                         + ", ".join(RECIPES) + " (or give requirements)", parameter="recipe")


def _requirement_args(requirements) -> list[str]:
    """pip arguments for a requirements file path or a list of requirement strings.

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


def stack_python(env_dir: Path) -> Path:
    """The Python of the stack in folder ``env_dir``."""
    return env_dir / "bin" / "python"


def _run_logged(cmd, log, what: str) -> None:
    """Run ``cmd``, appending its output to ``log``.

    Raises:
        StackError: non-zero exit; the message names ``what`` and quotes the
            last lines of the output.
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


def jupyter_prefix_of(jupyter_prefix) -> Path:
    """The Jupyter prefix a kernelspec goes to: ``jupyter_prefix``, else ``sys.prefix``."""
    return Path(jupyter_prefix) if jupyter_prefix is not None else Path(sys.prefix)


def create_stack(name: str, recipe: str | None = None, *, requirements=None,
                 overlay: bool = False, root=None, jupyter_prefix=None,
                 replace: bool = False) -> dict:
    """Create the virtual environment of a stack and register its Jupyter kernel.

    Steps (each command and its output go to ``<stack>/create.log``): a fresh
    venv (the running interpreter's base Python), with ``overlay`` a ``.pth``
    adding this environment's site-packages after the stack's own, ``pip
    install`` of the requirements, a ``.pth`` file putting this checkout on
    the stack's path (the kernel imports the same qencode_nb), ``pip
    freeze``, then ``python -m ipykernel install --prefix <jupyter_prefix>
    --name qencode-nb-<name>``.  An existing stack of that name is refused
    unless ``replace`` (then it is removed first: a venv cannot be moved, so
    there is no building beside it and swapping).

    Args:
        name: stack name (:data:`NAME_PATTERN`); the kernel is
            ``qencode-nb-<name>``.
        recipe: a key of :data:`RECIPES`; default ``name`` when it is one.
        requirements: instead of a recipe, a requirements file or requirement
            strings, e.g. ``["scipy==1.16.3"]``.  Without ``overlay`` they
            are installed together with pyproject's dependencies (unpinned,
            :func:`recipe_requirements` "latest"), so the kernel has
            ipykernel and everything qencode_nb imports, at the versions pip
            resolves around the given pins.
        overlay: start from the running environment's packages and install
            only ``requirements`` on top.
        replace: remove an existing stack of that name first.
        root: stacks folder (default :func:`stacks_root`).
        jupyter_prefix: prefix whose ``share/jupyter/kernels`` receives the
            kernelspec (default ``sys.prefix``; Jupyter searches it from this
            environment, or through ``JUPYTER_PATH``).

    Returns:
        The stack record (also ``stack.json``): ``name``, ``kernelspec``,
        ``path``, ``python`` (version), ``recipe``, ``requirements`` (pip
        arguments), ``overlay_of`` (parent site-packages or None),
        ``freeze`` ({distribution: version} of the stack's own site-packages
        and, with overlay, the parent's), ``created`` (UTC), ``status``
        ("ready"), ``kernelspec_dir`` (the kernelspec's folder).

    Raises:
        ParameterError: a bad name, an unknown recipe, both or neither of
            recipe and requirements, bad requirements, an overlay with a
            recipe.
        StackError: the stack exists and ``replace`` is False.
        StackError: venv, pip or ipykernel failed; the stack folder keeps
            ``create.log`` and a ``stack.json`` with status "failed" and the
            reason, and no kernel is registered.
    """
    import venv

    check_name(name)
    if recipe is None and requirements is None:
        if name.lower() in RECIPES:
            recipe = name
        else:
            raise ParameterError(f"stack {name!r}: give a recipe ({', '.join(RECIPES)}) or "
                                 "requirements")
    if recipe is not None and requirements is not None:
        raise ParameterError("give a recipe or requirements, not both")
    if overlay and recipe is not None:
        raise ParameterError(f"overlay installs requirements on top of this environment; "
                             f"recipe {recipe!r} is a whole stack (accepted with overlay: "
                             "requirements)")
    args = recipe_requirements(recipe) if recipe is not None else _requirement_args(requirements)
    if recipe is None and not overlay:
        args = [*args, *recipe_requirements("latest")]
    env_dir = stacks_root(root).resolve() / name
    if env_dir.exists():
        if not replace:
            raise StackError(f"stack {name!r} already exists in {env_dir.parent} (status "
                             f"{_status(env_dir)}); remove it first or pass replace=True "
                             "(CLI: --replace)")
        remove_stack(name, root=root, jupyter_prefix=jupyter_prefix)
    env_dir.mkdir(parents=True)
    parent = sysconfig.get_paths()["purelib"] if overlay else None
    record = {"name": name, "kernelspec": kernelspec_name(name), "path": str(env_dir),
              "recipe": recipe, "requirements": args, "overlay_of": parent,
              "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
              "status": "creating"}
    _write_record(env_dir, record)
    py = stack_python(env_dir)
    with open(env_dir / "create.log", "w", encoding="utf-8") as log:
        try:
            log.write(f"venv {env_dir} (base Python {sys.version.split()[0]})\n")
            venv.EnvBuilder(with_pip=True).create(str(env_dir))
            if parent:
                site = Path(site_packages(py))
                (site / "_qencode_nb_overlay.pth").write_text(
                    f"import site; site.addsitedir({parent!r})\n")
            _run_logged([py, "-m", "pip", "install", "--disable-pip-version-check",
                         *args], log, f"pip install {' '.join(args)}")
            # The kernel imports qencode_nb from this checkout, so every stack runs the
            # same toolkit code (no build step: an overlay would see this
            # environment's setuptools inside pip's isolated build).
            (Path(site_packages(py)) / "_qencode_nb_checkout.pth").write_text(f"{ROOT}\n")
            record["python"] = subprocess.run(
                [str(py), "-c", "import platform; print(platform.python_version())"],
                capture_output=True, text=True, check=True).stdout.strip()
            record["freeze"] = _freeze(py)
            prefix = jupyter_prefix_of(jupyter_prefix)
            _run_logged([py, "-m", "ipykernel", "install", "--prefix", prefix,
                         "--name", record["kernelspec"],
                         "--display-name", f"qencode-nb {name} (Python {record['python']})"],
                        log, "ipykernel install")
            record["kernelspec_dir"] = str(prefix / "share" / "jupyter" / "kernels"
                                           / record["kernelspec"])
        except (StackError, OSError, subprocess.SubprocessError) as exc:
            record.update(status="failed", failure=str(exc))
            _write_record(env_dir, record)
            raise StackError(f"stack {name!r} could not be created: {exc} "
                             f"(log: {env_dir / 'create.log'})") from exc
    record["status"] = "ready"
    _write_record(env_dir, record)
    return record


def site_packages(py: Path) -> str:
    """The ``purelib`` folder of the Python ``py`` (a stack's site-packages)."""
    return subprocess.run([str(py), "-c", "import sysconfig; "
                           "print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()


def _freeze(py: Path) -> dict:
    """``{distribution: version}`` as the stack's Python sees them (own first):
    :func:`qencode_nb.notebook.provenance.installed_packages` run in the stack, the same
    map its audits record."""
    code = ("import json; from qencode_nb.notebook.provenance import installed_packages; "
            "print(json.dumps(installed_packages()))")
    out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _write_record(env_dir: Path, record: dict) -> None:
    (env_dir / STACK_RECORD).write_text(json.dumps(record, indent=1, sort_keys=True))


def read_stack(name: str, root=None) -> dict:
    """The ``stack.json`` record of stack ``name``.

    Raises:
        StackError: no such stack (lists the stacks there are).
    """
    path = stacks_root(root) / check_name(name) / STACK_RECORD
    if not path.is_file():
        have = [r["name"] for r in list_stacks(root)]
        raise StackError(f"stack {name!r} does not exist in {stacks_root(root)}; there are: "
                         + (", ".join(have) or "none"))
    return json.loads(path.read_text())


def list_stacks(root=None) -> list[dict]:
    """The records of every stack under :func:`stacks_root` (sorted by name)."""
    base = stacks_root(root)
    if not base.is_dir():
        return []
    out = []
    for rec in sorted(base.glob(f"*/{STACK_RECORD}")):
        try:
            out.append(json.loads(rec.read_text()))
        except (OSError, ValueError):
            out.append({"name": rec.parent.name, "status": "unreadable",
                        "path": str(rec.parent)})
    return out


def remove_stack(name: str, root=None, jupyter_prefix=None) -> None:
    """Delete stack ``name``'s folder and the kernelspec it registered.

    The kernelspec removed is the one recorded in ``stack.json``
    (``kernelspec_dir``), and only if its Python is this stack's; a stack
    with no such record (it failed before registering) falls back to
    ``<jupyter_prefix>/share/jupyter/kernels/qencode-nb-<name>`` under the
    same condition.  A kernelspec of that name belonging to another stacks
    folder is left alone.

    Raises:
        StackError: no such stack (lists the stacks there are).
    """
    env_dir = stacks_root(root) / check_name(name)
    if not env_dir.is_dir():
        have = [r["name"] for r in list_stacks(root)]
        raise StackError(f"stack {name!r} does not exist in {stacks_root(root)}; there are: "
                         + (", ".join(have) or "none"))
    try:
        recorded = json.loads((env_dir / STACK_RECORD).read_text()).get("kernelspec_dir")
    except (OSError, ValueError):
        recorded = None
    spec = Path(recorded) if recorded else (
        jupyter_prefix_of(jupyter_prefix) / "share" / "jupyter" / "kernels" / kernelspec_name(name))
    if spec_python(spec) == str(stack_python(env_dir.resolve())):
        shutil.rmtree(spec)
    shutil.rmtree(env_dir)


def spec_python(spec: Path) -> str | None:
    """``argv[0]`` of the kernelspec in folder ``spec``, or None."""
    try:
        return json.loads((spec / "kernel.json").read_text())["argv"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return None


def _status(env_dir: Path) -> str:
    try:
        return json.loads((env_dir / STACK_RECORD).read_text()).get("status", "unknown")
    except (OSError, ValueError):
        return "unreadable"


def available_kernelspecs() -> dict:
    """``{kernelspec name: resource folder}`` that Jupyter finds from here."""
    from jupyter_client.kernelspec import KernelSpecManager

    return KernelSpecManager().find_kernel_specs()


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
