"""The notebooks of an output folder: their kind, and the run manifest naming those of
its last run (issue 36).

A sweep (:func:`qencode_nb.batch.sweep.sweep`, and through it each release folder of a
record sweep) and a robustness study write :data:`MANIFEST` in their ``--out`` folder
as they finish: the notebooks of that run, relative to the folder, and the runs it
re-ran because they had run under other conditions.  Re-using a folder for another run
(other entries, a subset) leaves the earlier run's notebooks on disk; the readers --
reports, ``show``, ``compare``, ``sign``, the cross-host table -- take the audit
notebooks the manifest lists (:func:`audit_notebooks`) and
name the others as **stale** (:func:`stale_notebooks`), never silently mixing them in.
A folder without a manifest (audits copied by hand, a folder from before issue 36) is
read whole, as before.

The file (JSON): ``{"format": 1, "tool": "qencode-nb", "kind": "sweep" | "robustness",
"written_utc", "notebooks": ["<name>.ipynb", ...], "reruns": [{"name", "why"}]}``.  A
manifest that cannot be read is reported (:class:`ManifestWarning`) and the folder read
whole.
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

#: The manifest's file name in an output folder (not ``manifest.json``: that is
#: QEncode's release metadata).
MANIFEST = "qencode-nb-runs.json"

#: Bump when the manifest's layout changes.
FORMAT = 1

#: The kinds of run that write one.
KINDS = ("sweep", "robustness")


class ManifestWarning(UserWarning):
    """A folder's run manifest could not be read; the folder is read whole."""


def write_manifest(folder, kind: str, notebooks, reruns=()) -> Path:
    """Write ``folder``'s manifest (atomically) for a run of ``kind`` (:data:`KINDS`)
    whose notebooks are ``notebooks`` (paths or names; stored by file name, relative to
    the folder) and that re-ran ``reruns`` (``[{"name", "why"}]``).  Returns its path.

    Raises:
        ValueError: ``kind`` not in :data:`KINDS` (names it and the accepted ones).
    """
    from qencode_nb.atomic import write_atomic

    if kind not in KINDS:
        raise ValueError(f"manifest kind {kind!r} is not accepted; accepted: {', '.join(KINDS)}")
    folder = Path(folder)
    doc = {"format": FORMAT, "tool": "qencode-nb", "kind": kind,
           "written_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "notebooks": sorted({Path(p).name for p in notebooks}),
           "reruns": [dict(r) for r in reruns]}
    path = folder / MANIFEST
    write_atomic(path, (json.dumps(doc, indent=1) + "\n").encode())
    return path


def read_manifest(folder) -> dict | None:
    """``folder``'s manifest, or None when it has none (or one that cannot be read:
    a :class:`ManifestWarning` names the file and why)."""
    path = Path(folder) / MANIFEST
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        warnings.warn(f"{path}: the run manifest cannot be read ({exc}); every notebook of "
                      "the folder is read", ManifestWarning, stacklevel=2)
        return None
    if not (isinstance(doc, dict) and doc.get("format") == FORMAT
            and isinstance(doc.get("notebooks"), list)):
        warnings.warn(f"{path}: not a format-{FORMAT} run manifest; every notebook of the "
                      "folder is read", ManifestWarning, stacklevel=2)
        return None
    return doc


def listed(folder) -> set[str] | None:
    """The notebook file names ``folder``'s manifest lists, or None without one."""
    doc = read_manifest(folder)
    return None if doc is None else {str(n) for n in doc["notebooks"]}


#: Where a notebook of ``notebooks/`` records what it is: ``metadata.qencode_nb.kind``
#: ("audit", "figures", "robustness", "suite", "threading").  Papermill and
#: JupyterLab keep notebook metadata, so an executed copy says its kind too.
KIND_METADATA = "qencode_nb"


def notebook_kind(path) -> str | None:
    """The recorded kind of a notebook (``metadata.qencode_nb.kind``), or None
    when it records none or is not a readable notebook."""
    import json

    try:
        meta = json.loads(Path(path).read_text()).get("metadata") or {}
    except (OSError, ValueError, AttributeError):
        return None
    kind = (meta.get(KIND_METADATA) or {}).get("kind") if isinstance(meta, dict) else None
    return kind if isinstance(kind, str) else None


def all_audit_notebooks(folder) -> list[Path]:
    """Every audit notebook of a folder: its ``*.ipynb`` whose recorded kind is
    "audit" (:data:`KIND_METADATA`), sorted by name; never guessed from the file
    name, so an executed figures notebook beside the audits is not counted.

    Raises:
        FileNotFoundError: ``folder`` is not a folder.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"no such folder of executed notebooks: {folder}")
    return [p for p in sorted(folder.glob("*.ipynb")) if notebook_kind(p) == "audit"]


def audit_notebooks(folder) -> list[Path]:
    """The audit notebooks of a folder's last run: :func:`all_audit_notebooks` that its
    run manifest lists (:mod:`qencode_nb.readout.manifest`; the others are stale, named
    by :func:`~qencode_nb.readout.manifest.stale_notebooks`), or all of them when the
    folder has no manifest.

    Raises:
        FileNotFoundError: ``folder`` is not a folder.
    """
    found = all_audit_notebooks(folder)
    names = listed(folder)
    return found if names is None else [p for p in found if p.name in names]


def stale_notebooks(folder) -> list[Path]:
    """The audit notebooks of ``folder`` that its manifest does not list (left by an
    earlier run of the folder), sorted; empty without a manifest."""
    names = listed(folder)
    if names is None:
        return []
    return [p for p in all_audit_notebooks(folder) if p.name not in names]


def stale_text(folder) -> str | None:
    """``N stale notebook(s) outside this folder's last run (qencode-nb-runs.json),
    not read: a, b, ...``, or None when there are none."""
    stale = stale_notebooks(folder)
    if not stale:
        return None
    names = ", ".join(p.stem for p in stale[:10]) + (", ..." if len(stale) > 10 else "")
    return (f"{len(stale)} stale notebook(s) outside this folder's last run ({MANIFEST}), "
            f"not read: {names}")
