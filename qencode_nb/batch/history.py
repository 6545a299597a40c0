"""A benchmark's whole public record as sweep targets: every release, its curves, its claims.

A *record folder* is a checkout of a QEncode-like repository (or
``../shared/qencode-history``): it holds ``releases/<release>/`` folders.  QEncode's
layout at commit a46b4ec (``NOTICE.md`` of the history folder):

- ``releases/<release>/db/*.json``: the entries of a release (``v1``, ``v2``, ``v3``,
  ``v3.1``, ``v4``), one group each, labelled by the release;
- ``releases/<release>/trusted/*.json``: a release's trusted copies (``v2/trusted``),
  their own group, since an entry id may repeat between groups; the release's own
  metadata beside the entries (``index.json``, ``manifest.json``,
  ``entry_content_hashes.json``, ``trusted_index.json``:
  :mod:`qencode_nb.entry.release_files`) is listed in :attr:`Group.not_entries`, not
  audited;
- ``releases/<release>/curves/*.json``: dissociation curves (``v4/curves``), audited by
  :mod:`qencode_nb.studies.curve`, not by ``audit.ipynb``;
- the rest (``website/public/data``, ``README.md``, ``CITATION.cff``, ...): what the claims
  audit reads (:mod:`qencode_nb.claims`).

:func:`discover` turns a sweep's targets into :class:`Group` s: a record folder gives
one group per ``db``/``trusted`` folder holding entries (a release folder or an entry
folder holding none is listed in :attr:`History.empty` with the reason); any other folder
of JSON entries (the v4 database beside the history, ``../shared/qencode-v4/db``, or a
release's ``db`` given alone: its metadata listed, not audited) one group labelled by its
entries' ``schema_version`` (``v4`` for 4.0.0); files and bundled names go to one group
``entries``.  Group labels become sub-folders of the sweep's output, so two releases
holding the same entry id never overwrite each other's notebook.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

#: The sub-folders of ``releases/<release>/`` that hold entries, and the label suffix of
#: each (QEncode's repository layout at commit a46b4ec).
ENTRY_FOLDERS = {"db": "", "trusted": "/trusted"}

#: The sub-folder of ``releases/<release>/`` that holds dissociation curves.
CURVE_FOLDER = "curves"


@dataclass
class Group:
    """One release's entries (or one plain folder's) as sweep targets.

    Attributes:
        label: the release as the record names it (``v3.1``, ``v2/trusted``; ``v4`` for a
            plain folder of schema 4.0.0 entries; ``entries`` for loose files).
        source: the folder the targets came from (None for loose files and names).
        targets: entry files (absolute paths) or bundled names, sorted.
        not_entries: file names of the release's metadata beside its entries
            (:func:`qencode_nb.entry.release_files.is_release_metadata`).
    """

    label: str
    source: Path | None
    targets: list = field(default_factory=list)
    not_entries: list = field(default_factory=list)

    @property
    def slug(self) -> str:
        """The group's sub-folder name in a sweep's output and its anchor in the report:
        the label with every character but letters, digits, ``.``, ``_`` and ``-``
        replaced by ``-`` (``v2/trusted`` -> ``v2-trusted``, ``v4 (copy/db)`` ->
        ``v4--copy-db-``)."""
        import re

        return re.sub(r"[^A-Za-z0-9._-]", "-", self.label)


@dataclass
class History:
    """What a sweep's targets hold: entry groups, curve files and record folders.

    ``record_roots`` are the record folders among the targets (the claims audit reads
    them); ``curves`` their dissociation curve files (absolute paths); ``empty`` the
    release folders (and their ``db``/``trusted`` folders) that hold no entry, each
    ``{"release": label, "reason": why}`` (:func:`empty_reason`).
    """

    groups: list
    curves: list = field(default_factory=list)
    record_roots: list = field(default_factory=list)
    empty: list = field(default_factory=list)

    @property
    def is_history(self) -> bool:
        """True when a target was a record folder (the sweep writes one sub-folder per
        group, the per-release counts and the claims table)."""
        return bool(self.record_roots)


def is_history_folder(path) -> bool:
    """True when ``path`` is a folder holding ``releases/<release>/db``,
    ``.../trusted`` or ``.../curves`` (QEncode's repository layout)."""
    releases = Path(path) / "releases"
    return releases.is_dir() and any(
        (rel / sub).is_dir() for rel in releases.iterdir() if rel.is_dir()
        for sub in (*ENTRY_FOLDERS, CURVE_FOLDER))


def empty_reason(release: Path, sub: str | None = None) -> str:
    """Why a release folder (``sub`` None: none of its entry folders exists) or its entry
    folder ``sub`` holds no entry to audit, in words."""
    from qencode_nb.entry.release_files import folder_entries, not_entries_text

    if sub is None:
        curves = sorted((release / CURVE_FOLDER).glob("*.json"))
        return ("no entries: no " + " or ".join(f"{s}/" for s in ENTRY_FOLDERS) + " folder"
                + (f" ({CURVE_FOLDER}/ holds {len(curves)} curve(s), audited as curves)"
                   if curves else ""))
    _, metadata = folder_entries(release / sub)
    return (f"no entries: {sub}/ holds only release metadata, not audited: "
            f"{not_entries_text(metadata)}" if metadata else f"no entries: {sub}/ holds "
            "no .json entry")


def _release_key(name: str):
    """``v3.1`` sorts after ``v3`` and before ``v10``; other names after them."""
    parts = name.lstrip("v").split(".")
    return (0, [int(p) for p in parts]) if all(p.isdigit() for p in parts) else (1, name)


def folder_label(folder: Path) -> str:
    """A plain folder's group label: ``v<major>`` of its first entry's
    ``schema_version`` (``4.0.0`` -> ``v4``), else the folder's name."""
    for path in sorted(folder.glob("*.json")):
        try:
            version = json.loads(path.read_text(encoding="utf-8")).get("schema_version")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(version, str) and version.split(".")[0].isdigit():
            return f"v{version.split('.')[0]}"
    return folder.name


def _where(source: Path) -> str:
    """How a repeated label is told apart: a record folder's group by the record
    folder's name, a plain folder by ``<parent>/<name>``."""
    if source.parent.parent.name == "releases":
        return source.parents[2].name
    return f"{source.parent.name}/{source.name}"


def discover(items) -> History:
    """Group a sweep's targets (:func:`qencode_nb.batch.targets.resolve_targets` for each
    group's folder).

    Args:
        items: record folders, folders of JSON entries, entry files or bundled names.

    Returns:
        :class:`History`: groups in release order (record folders first), two groups
        never sharing a label or a sub-folder (a repeated label gets its record folder's
        name, or a plain folder's ``<parent>/<name>``, appended); a folder given twice
        is swept once.

    Raises:
        EntryError: a target that does not exist, or a folder without entries (as
            :func:`~qencode_nb.batch.targets.resolve_targets`).
    """
    from qencode_nb.batch.targets import resolve_targets
    from qencode_nb.entry.release_files import folder_entries

    groups, curves, roots, loose, seen_folders, empty = [], [], [], [], set(), []
    for item in items:
        path = Path(item)
        if path.is_dir():   # a folder given twice is swept once
            if path.resolve() in seen_folders:
                continue
            seen_folders.add(path.resolve())
        if path.is_dir() and is_history_folder(path):
            roots.append(path.resolve())
            releases = sorted((p for p in (path / "releases").iterdir() if p.is_dir()),
                              key=lambda p: _release_key(p.name))
            for rel in releases:
                subs = [s for s in ENTRY_FOLDERS if (rel / s).is_dir()]
                for sub in subs:
                    entries, metadata = folder_entries(rel / sub)
                    if entries:
                        groups.append(Group(rel.name + ENTRY_FOLDERS[sub], (rel / sub).resolve(),
                                            resolve_targets(entries), metadata))
                    else:
                        empty.append({"release": rel.name + ENTRY_FOLDERS[sub],
                                      "reason": empty_reason(rel, sub)})
                if not subs:
                    empty.append({"release": rel.name, "reason": empty_reason(rel)})
                curves += sorted(p.resolve() for p in (rel / CURVE_FOLDER).glob("*.json"))
        elif path.is_dir():
            groups.append(Group(folder_label(path), path.resolve(), resolve_targets([path]),
                                folder_entries(path)[1]))
        else:
            loose += resolve_targets([item])
    if loose:
        groups.append(Group("entries", None, loose))
    seen = set()   # sub-folders taken (a unique slug is a unique label)
    for g in groups:
        if g.slug in seen:
            base = f"{g.label} ({_where(g.source)})" if g.source else f"{g.label} (files)"
            g.label, n = base, 2
            while g.slug in seen:
                g.label, n = f"{base} #{n}", n + 1
        seen.add(g.slug)
    return History(groups, curves, roots, empty)
