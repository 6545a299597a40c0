"""No absolute path of the machine in a published report (``qencode-nb report``).

Executed audits record where things were on the machine that ran them (the entry
file, the runs folder, the Python environment); a report is read elsewhere, so what it
writes (the page, its CSV, the notebook pages) shows each such path from a folder the
reader can place instead: :func:`scrub` replaces the longest known folder a path lies
in by ``…/<that folder's name>`` (the runs folder ``/home/me/x/runs/a.ipynb`` reads
``…/runs/a.ipynb``), and any other absolute path by ``…/<its last two parts>``.
:func:`known_folders` lists the folders of a report: the runs folder, the entries'
folders, the qencode-nb checkout, the Python environment and the home folder.
"""

from __future__ import annotations

import re
from pathlib import Path

#: What stands for the folders a path was shortened from.
ELLIPSIS = "…"

#: An absolute POSIX path of at least two parts, not inside a word, a URL, a base64
#: run or an HTML tag (the character before it is none of ``\\w . ~ / : + , < \\``).
ABSOLUTE_PATH = re.compile(r"(?<![\w.~/:+,<\\])(?:/[\w.@%+~-]+){2,}/?")


def known_folders(runs, entry_sources=()) -> dict[str, str]:
    """``{absolute folder: shown name}`` of a report: the runs folder (as given and
    resolved), the folders of ``entry_sources`` (the files the runs read), the
    qencode-nb checkout (``qencode-nb``), the Python environment and the home folder
    (``~``).  Longest first, so that a path takes the deepest folder it lies in."""
    import sys

    from qencode_nb.paths import ROOT

    found: dict[str, str] = {}

    def add(folder, name=None) -> None:
        for p in {str(Path(folder)), str(Path(folder).resolve())}:
            if len(Path(p).parts) > 1:
                found.setdefault(p.rstrip("/"), name or Path(p).name)

    add(Path.home(), "~")
    add(sys.prefix)
    add(ROOT, "qencode-nb")
    for source in entry_sources:
        if isinstance(source, str) and source.startswith("/"):
            add(Path(source).parent)
    add(runs)
    return dict(sorted(found.items(), key=lambda kv: -len(kv[0])))


def scrub(text: str, folders: dict[str, str]) -> str:
    """``text`` with every absolute path shortened: a path in one of ``folders``
    (:func:`known_folders`) as ``…/<name>/<the rest>`` (``~/<the rest>`` for the home
    folder), any other as ``…/<its last two parts>``."""
    if not isinstance(text, str) or "/" not in text:
        return text

    def shorten(match: re.Match) -> str:
        path = match.group(0)
        for folder, name in folders.items():
            if path == folder or path.startswith(folder + "/"):
                head = name if name == "~" else f"{ELLIPSIS}/{name}"
                return head + path[len(folder):]
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
