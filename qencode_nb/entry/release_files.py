"""What a QEncode release folder holds beside its entries: the one place that knows it.

A release's ``db`` (or ``trusted``) folder holds its entries (``<entry id>.json``) and, at
QEncode's commit a46b4ec, the release's own metadata as JSON too (:data:`RELEASE_METADATA`:
``index.json``, ``manifest.json``, ``entry_content_hashes.json``, ``trusted_index.json``)
beside CSV indexes and READMEs.  Those files are not entries: every folder listing of
entries (a record folder's releases, :mod:`qencode_nb.batch.history`; a plain folder given
to ``sweep`` or ``robustness``, :func:`qencode_nb.batch.targets.resolve_targets`; the ADAPT
table of a folder) takes its entries from :func:`folder_entries`, which lists the
metadata apart, never audited.
"""

from __future__ import annotations

import json
from pathlib import Path

from qencode_nb.errors import EntryError

#: QEncode's release metadata files (at commit a46b4ec: ``releases/v1/db/index.json``,
#: ``releases/v2/db/{index,manifest,entry_content_hashes}.json``,
#: ``releases/v2/trusted/trusted_index.json``) -> what each is.
RELEASE_METADATA = {
    "index.json": "the release's index of its entries",
    "manifest.json": "the release's manifest (file sizes and hashes)",
    "entry_content_hashes.json": "the release's list of entry content hashes",
    "trusted_index.json": "the index of the release's trusted copies",
}

#: The fields every QEncode entry states (schemas 1.0.0 to 4.0.0); a release's metadata
#: states neither.
ENTRY_MARKS = ("schema_version", "entry_id")


def is_release_metadata(path) -> bool:
    """True when ``path`` is one of QEncode's release metadata files: its name is in
    :data:`RELEASE_METADATA` and it is a JSON object stating neither ``schema_version``
    nor ``entry_id``.  A file of such a name that is an entry (it states one of them), or
    that does not parse, is not metadata: its audit reads it, or refuses it with the
    reason."""
    path = Path(path)
    if path.name not in RELEASE_METADATA:
        return False
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and not set(ENTRY_MARKS) & set(data)


def folder_entries(folder) -> tuple[list[Path], list[str]]:
    """``(entry files, release metadata file names)`` of a folder's ``*.json`` files,
    each sorted by name (:func:`is_release_metadata` tells them apart)."""
    entries, metadata = [], []
    for path in sorted(Path(folder).glob("*.json")):
        (metadata.append(path.name) if is_release_metadata(path) else entries.append(path))
    return entries, metadata


def not_entries_text(names) -> str:
    """``"index.json (the release's index of its entries), ..."``: the metadata files a
    listing leaves out, each with what it is."""
    return ", ".join(f"{n} ({RELEASE_METADATA.get(n, 'release metadata')})" for n in names)


def entry_files(folder, field: str = "targets") -> list[Path]:
    """The entry files of a folder (:func:`folder_entries`), sorted.

    Raises:
        EntryError: the folder holds no JSON entry (``field`` named; the release
            metadata it holds listed).
    """
    found, metadata = folder_entries(folder)
    if not found:
        held = (f" (only QEncode release metadata, not entries: {not_entries_text(metadata)})"
                if metadata else "")
        raise EntryError(f"folder {str(folder)!r} holds no .json entry{held}", field=field)
    return found
