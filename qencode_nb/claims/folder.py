"""Where a QEncode-like folder keeps what ``qencode-nb claims`` checks, and the v4.4
registry's entry ids.

A folder is a checkout of the QEncode repository (``website/public/data/``: the
leaderboard CSVs, ``leaderboard_metadata.json``, ``certified_receipts.json``;
``releases/``: the entries of every release; README.md, CITATION.cff, CHANGELOG.md,
docs/) or a copy of those files at the same paths (``../shared/qencode-history``).
The v4 database is ``--db`` or ``FOLDER/releases/v4/db``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from qencode_nb.errors import ClaimsError

#: Where the leaderboard files are looked for, first found wins.
DATA_DIRS = ("website/public/data", "datasets/leaderboard")
#: The leaderboard CSVs' file pattern.
LEADERBOARD_GLOB = "leaderboard_*.csv"
#: The receipts file's name in a data folder.
RECEIPTS_NAME = "certified_receipts.json"
#: The leaderboards' metadata file's name in a data folder.
METADATA_NAME = "leaderboard_metadata.json"
#: The default v4 database inside a folder.
DEFAULT_DB = "releases/v4/db"
#: What an entry file's name carries: QEncode's ``<name>__sha256_<16 hex>.json``.
ID_MARK = "__sha256_"


@dataclass
class Folder:
    """A folder to check and its v4 database.

    Attributes:
        root: the folder.
        db: the v4 database folder (entry JSON files), or None when there is none.
    """

    root: Path
    db: Path | None
    _cache: dict = field(default_factory=dict, repr=False)

    @cached_property
    def data_dir(self) -> Path | None:
        """The folder holding the leaderboard CSVs (:data:`DATA_DIRS`), or None."""
        return next((self.root / d for d in DATA_DIRS
                     if any((self.root / d).glob(LEADERBOARD_GLOB))), None)

    @cached_property
    def leaderboards(self) -> list[Path]:
        """The leaderboard CSVs, sorted by name."""
        return sorted(self.data_dir.glob(LEADERBOARD_GLOB)) if self.data_dir else []

    @cached_property
    def receipts_file(self) -> Path | None:
        """``certified_receipts.json`` beside the leaderboards (or in the first data
        folder holding one), or None."""
        return next((self.root / d / RECEIPTS_NAME for d in DATA_DIRS
                     if (self.root / d / RECEIPTS_NAME).is_file()), None)

    @cached_property
    def metadata(self) -> dict | None:
        """``leaderboard_metadata.json`` beside the leaderboards, or None."""
        if self.data_dir is None or not (self.data_dir / METADATA_NAME).is_file():
            return None
        return read_json(self.data_dir / METADATA_NAME)

    @cached_property
    def db_entries(self) -> dict[str, Path]:
        """``{entry id: file}`` of the v4 database (file stem = entry id)."""
        if self.db is None:
            return {}
        return {p.stem: p for p in sorted(self.db.glob("*.json")) if ID_MARK in p.stem}

    @cached_property
    def release_entries(self) -> dict[str, list[Path]]:
        """``{entry id: [files]}`` of every entry file under ``releases/`` and the v4
        database (an id may be in several folders: ``v2/db`` and ``v2/trusted``)."""
        out: dict[str, list[Path]] = {}
        roots = [self.root / "releases"] + ([self.db] if self.db else [])
        for base in roots:
            for p in sorted(base.rglob("*.json")) if base.is_dir() else ():
                if ID_MARK in p.stem and p not in out.get(p.stem, []):
                    out.setdefault(p.stem, []).append(p)
        return out

    def entry(self, path: Path) -> dict:
        """An entry file's JSON (read once)."""
        if path not in self._cache:
            self._cache[path] = read_json(path)
        return self._cache[path]


def read_json(path: Path):
    """A JSON file's content.

    Raises:
        ClaimsError: it cannot be read or is not JSON (names the file).
    """
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ClaimsError(f"{path}: cannot be read as JSON ({exc})") from None


def open_folder(root, db=None) -> Folder:
    """The :class:`Folder` of ``root`` with ``db`` (default ``root/releases/v4/db`` when
    it holds entry files).

    Raises:
        ClaimsError: ``root`` is not a folder; ``db`` is given and is not a folder; or
            ``root`` holds no leaderboard CSV, no receipts file and no README.md.
    """
    root = Path(root)
    if not root.is_dir():
        raise ClaimsError(f"{root}: not a folder; accepted: a checkout of a QEncode-like "
                          "repository (website/public/data/leaderboard_*.csv, README.md)")
    if db is not None:
        db = Path(db)
        if not db.is_dir():
            raise ClaimsError(f"--db {db}: not a folder; accepted: a folder of QEncode v4 "
                              "entry files (<entry id>.json)")
    elif any((root / DEFAULT_DB).glob("*.json")):
        db = root / DEFAULT_DB
    folder = Folder(root=root, db=db)
    if not folder.leaderboards and folder.receipts_file is None \
            and not (root / "README.md").is_file():
        raise ClaimsError(f"{root}: holds no leaderboard ({' or '.join(DATA_DIRS)}/"
                          f"{LEADERBOARD_GLOB}), no {RECEIPTS_NAME} and no README.md")
    return folder


def registry_ids() -> dict[str, str]:
    """``{entry id: file SHA-256}`` of every entry of the v4.4 release
    (``data/qencode-v4/registry.txt``, :func:`qencode_nb.entry.database.registry`)."""
    from qencode_nb.entry.database import registry

    return {name[3:-5]: sha for name, (sha, _url) in registry().items()
            if name.startswith("db/") and name.endswith(".json")}


def file_sha256(path) -> str:
    """The SHA-256 (hex) of a file's bytes."""
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def rel(folder: Folder, path: Path) -> str:
    """``path`` relative to the folder (or to the database's parent: ``--db
    ../shared/qencode-v4/db`` reads ``db``), for a table; a path outside both as
    :func:`qencode_nb.paths.shown_path` shows it (``…/<its last two parts>``): never
    an absolute path of the machine (``claims.csv`` is published)."""
    from qencode_nb.paths import shown_path

    for base in (folder.root, folder.db.parent if folder.db else None):
        if base is not None:
            try:
                return str(Path(path).relative_to(base))
            except ValueError:
                pass
    return shown_path(path, folder.root)
