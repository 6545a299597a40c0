"""Where the checkout's folders are: the one place that knows the repository layout,
and the one rule for how a published file names a path of the machine.

``ROOT`` is the checkout (or installed tree) holding ``params/`` and
``notebooks/``; an editable install (``pip install -e .``, as README says)
keeps it the repository itself.

**No absolute path of the machine in a published file** (issue 36, item 4).  Executed
audits record where things were on the machine that ran them (the entry file, the runs
folder, the Python environment); a published file (a report, ``summary.csv``,
``claims.csv``, a crate's metadata, an attestation) is read elsewhere, so it names a file
inside its own folder by the path relative to that folder (:func:`shown_path`) and any
other path from a folder the reader can place: :func:`scrub` replaces the longest known
folder a path lies in by ``…/<that folder's name>`` (the runs folder
``/home/me/x/runs/a.ipynb`` reads ``…/runs/a.ipynb``), and any other absolute path by
``…/<its last two parts>``.  :func:`known_folders` lists the folders a published file
knows: its own folder, the entries' folders, the qencode-nb checkout, the Python
environment and the home folder.
"""

import re
from pathlib import Path

#: The repository root (the folder above the ``qencode_nb`` package).
ROOT = Path(__file__).resolve().parent.parent
#: Bundled entries (``params/<name>.yaml``) and study parameter files.
PARAMS_DIR = ROOT / "params"
#: The notebooks the runner executes (audit, threading, suite, figures).
NOTEBOOKS = ROOT / "notebooks"
#: The QEncode JSON files of the entries ``params/`` names (MIT, QEncode's license; LICENSE
#: and NOTICE beside them), which complete a bundled entry when no ``db`` is given.
BUNDLED_DB = ROOT / "data" / "qencode-v4"
#: Small example runs of the bundled entries (a sweep and the four studies), made by
#: ``data/example-runs/regenerate.py``: the defaults of ``notebooks/figures.ipynb``, so
#: that a clone alone (e.g. on Binder) draws every figure.  Examples, not results.
EXAMPLE_RUNS = ROOT / "data" / "example-runs"
#: Accepted package stack names (they name a folder under :func:`stacks_root` and the
#: Jupyter kernelspec ``qencode-nb-<name>``, which Jupyter restricts likewise): lower-case
#: letters, digits, ".", "_", "-"; a letter or digit first; at most 64 characters.
STACK_NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"

#: The file name of a package stack's record inside its folder (qencode_nb.environment.store).
STACK_RECORD = "stack.json"


def stacks_root(root=None) -> Path:
    """Folder holding the package stacks (:mod:`qencode_nb.environment.store`): ``root``, else
    ``$QENCODE_NB_STACKS``, else ``~/.local/share/qencode-nb/stacks``."""
    import os

    if root is not None:
        return Path(root)
    env = os.environ.get("QENCODE_NB_STACKS")
    return Path(env) if env else Path.home() / ".local" / "share" / "qencode-nb" / "stacks"


#: What stands for the folders a path was shortened from.
ELLIPSIS = "…"

#: An absolute POSIX path of at least two parts, not inside a word, a URL, a base64
#: run or an HTML tag (the character before it is none of ``\\w . ~ / : + , < \\``).
ABSOLUTE_PATH = re.compile(r"(?<![\w.~/:+,<\\])(?:/[\w.@%+~-]+){2,}/?")


def known_folders(folder, entry_sources=()) -> dict[str, str]:
    """``{absolute folder: shown name}`` of a published file: ``folder`` (its own, as
    given and resolved), the folders of ``entry_sources`` (the entry files the runs
    read), the qencode-nb checkout (``qencode-nb``), the Python environment and the home
    folder (``~``).  Longest first, so that a path takes the deepest folder it lies in."""
    import sys

    found: dict[str, str] = {}

    def add(where, name=None) -> None:
        for p in {str(Path(where)), str(Path(where).resolve())}:
            if len(Path(p).parts) > 1:
                found.setdefault(p.rstrip("/"), name or Path(p).name)

    add(Path.home(), "~")
    add(sys.prefix)
    add(ROOT, "qencode-nb")
    for source in entry_sources:
        if isinstance(source, (str, Path)) and str(source).startswith("/"):
            add(Path(source).parent)
    add(folder)
    return dict(sorted(found.items(), key=lambda kv: -len(kv[0])))


def scrub(text: str, folders: dict[str, str]) -> str:
    """``text`` with every absolute path shortened: a path in one of ``folders``
    (:func:`known_folders`) as ``…/<name>/<the rest>`` (``~/<the rest>`` for the home
    folder), any other as ``…/<its last two parts>``."""
    if not isinstance(text, str) or "/" not in text:
        return text

    def shorten(match: re.Match) -> str:
        path = match.group(0)
        for where, name in folders.items():
            if path == where or path.startswith(where + "/"):
                head = name if name == "~" else f"{ELLIPSIS}/{name}"
                return head + path[len(where):]
        parts = path.rstrip("/").split("/")
        return f"{ELLIPSIS}/" + "/".join(parts[-2:])

    return ABSOLUTE_PATH.sub(shorten, text)


def scrub_value(value, folders: dict[str, str]):
    """:func:`scrub` of a table cell: a string, or the strings inside a dict or list."""
    if isinstance(value, str):
        return scrub(value, folders)
    if isinstance(value, dict):
        return {k: scrub_value(v, folders) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(scrub_value(v, folders) for v in value)
    return value


def shown_path(path, folder, folders: dict[str, str] | None = None) -> str:
    """How a file written in ``folder`` names ``path``: relative to ``folder`` (POSIX,
    e.g. ``v4/H2.ipynb``) when it lies inside it (both as given, or both resolved: a
    relative path is relative to the working folder), else as :func:`scrub` shows it
    (``folders``: default :func:`known_folders` of ``folder``); another relative path is
    kept as it is."""
    path, folder = Path(path), Path(folder)
    for p, base in ((path, folder), (path.resolve(), folder.resolve())):
        try:
            return p.relative_to(base).as_posix()
        except ValueError:
            pass
    if not path.is_absolute():
        return path.as_posix()
    return scrub(str(path), folders if folders is not None else known_folders(folder))
