"""Finding an entry: a bundled name (``params/<name>.yaml``), a path, or an id in a db folder."""

from __future__ import annotations

from pathlib import Path

from qencode_nb.entry.fieldpath import shown
from qencode_nb.entry.fields import CROSS_CHECK, YAML_PATHS
from qencode_nb.entry.readers import read_params_yaml, read_qencode_json
from qencode_nb.errors import EntryError
from qencode_nb.paths import BUNDLED_DB, PARAMS_DIR


def bundled_names() -> list[str]:
    """Short names of the entries bundled in ``params/``."""
    return sorted(p.stem for p in PARAMS_DIR.glob("*.yaml"))


#: File suffixes of an entry given as a path.
ENTRY_SUFFIXES = (".json", ".yaml", ".yml")


def did_you_mean(text: str, choices) -> list[str]:
    """The ``choices`` closest to ``text``: those of the best difflib ratio, when it is
    at least 0.6 (difflib's ``get_close_matches`` cutoff; case ignored), at most three,
    in the order given."""
    import difflib

    by_lower = {str(c).lower(): str(c) for c in choices}
    close = difflib.get_close_matches(text.lower(), list(by_lower), n=3)
    if not close:
        return []

    def ratio(c):
        return difflib.SequenceMatcher(None, text.lower(), c).ratio()
    best = ratio(close[0])
    return [by_lower[c] for c in close if ratio(c) == best]


def _suggestion(text: str, choices) -> str:
    close = did_you_mean(text, choices)
    return f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""


def _accepted(folders: bool, existing: bool = False) -> str:
    path = f"the path of {'an existing' if existing else 'a'} .json / .yaml entry"
    names = "a bundled name (" + ", ".join(bundled_names()) + ")"
    return (f"{names}, {path} or a folder of .json entries" if folders
            else f"{names} or {path}")


def unknown_name(text: str, field: str = "entry", folders: bool = False) -> EntryError:
    """The error for a name that is not bundled: the name, the closest bundled names
    ("did you mean 'lih'?") and what is accepted (``folders``: a folder too)."""
    what = "a folder, a file" if folders else "a file"
    return EntryError(f"{text!r} is neither {what} nor a bundled entry; "
                      + _suggestion(text, bundled_names()) + "accepted: " + _accepted(folders),
                      field=field)


def missing_file(text: str, field: str = "entry", folders: bool = False) -> EntryError:
    """The error for an entry path that does not exist: the path, the closest files
    of its folder when the folder exists, and what is accepted."""
    path = Path(text).expanduser()
    hint = ""
    if path.parent.is_dir():
        files = [p.name for p in path.parent.iterdir() if p.suffix.lower() in ENTRY_SUFFIXES]
        hint = _suggestion(path.name, files)
    return EntryError(f"no such file {text!r}; " + hint + "accepted: "
                      + _accepted(folders, existing=True),
                      field=field)


def check_reference(entry, field: str = "entry", folders: bool = False) -> str:
    """Check an entry reference before any kernel starts (``qencode-nb audit``,
    sweep and study targets): an existing file, or a bundled name; nothing is read.

    Args:
        entry: a bundled name (``"lih"``) or a path (str or Path).
        field: the argument named in the error.
        folders: a folder is accepted too (sweep targets): the error says so.

    Returns:
        what the kernel is to receive: an existing file's absolute path, else the name.

    Raises:
        EntryError: a folder, a path that does not exist (it has a folder part or an
            entry suffix: names the closest files of its folder), or a name that is not
            bundled ("did you mean ..." by difflib over the bundled names).
    """
    text = str(entry)
    path = Path(text).expanduser()
    if path.is_dir() and not folders:
        raise EntryError(f"{text!r} is a folder; accepted: one entry file or a bundled name "
                         "(audit a folder with `qencode-nb sweep`)", field=field)
    if path.is_file() or path.is_dir():
        return str(path.resolve())
    if path.suffix.lower() in ENTRY_SUFFIXES or len(path.parts) > 1:
        raise missing_file(text, field, folders)
    if not (PARAMS_DIR / f"{text}.yaml").is_file():
        raise unknown_name(text, field, folders)
    return text


def find_in_db(entry_id: str, db) -> Path:
    """The JSON file of ``entry_id`` in folder ``db`` (``<entry_id>.json``).

    Raises:
        EntryError: ``db`` is not a folder, or holds no file for that id.
    """
    db = Path(db)
    if not db.is_dir():
        raise EntryError(f"db {str(db)!r} is not a folder of QEncode JSON files", field="db")
    path = db / f"{entry_id}.json"
    if not path.is_file():
        raise EntryError(f"no file {path.name} in {db}", field="qencode.entry_id")
    return path


def looks_like_json(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(64).lstrip().startswith(b"{")


def load(entry, db=None) -> Entry:
    """Load an entry by short name (``params/<name>.yaml``) or by path.

    Args:
        entry: a bundled name such as ``"lih"``, or a path to a ``.yaml`` or a
            QEncode ``.json`` file.
        db: optional folder of QEncode JSON files.  A ``params/`` entry is
            completed from the JSON file of its ``qencode.entry_id`` (stored
            Hamiltonian and optimal parameters), after checking that every fact
            the YAML states agrees with it.  Without ``db`` a bundled entry
            (``params/<name>.yaml``) is completed from its copy in
            ``data/qencode-v4/`` (:data:`qencode_nb.paths.BUNDLED_DB`); any other
            YAML gives its own facts alone.

    Raises:
        EntryError: unknown name (the closest bundled names, then all of them), a
            file that does not exist, malformed file,
            or a YAML fact that disagrees with its JSON.
    """
    if not isinstance(entry, (str, Path)):
        raise EntryError(f"{entry!r} is not accepted; accepted: a bundled name or a path",
                         field="entry")
    if db is not None and not isinstance(db, (str, Path)):
        raise EntryError(f"{db!r} is not accepted; accepted: a folder path", field="db")
    text = str(entry)
    path = Path(text)
    if path.is_dir():
        raise EntryError(f"{text!r} is a folder; accepted: one entry file or a bundled name "
                         "(audit a folder with `qencode-nb sweep`)", field="entry")
    if path.suffix.lower() in ENTRY_SUFFIXES or path.exists():
        if not path.is_file():
            raise missing_file(text)
    else:
        path = PARAMS_DIR / f"{text}.yaml"
        if not path.is_file():
            raise unknown_name(text)
    if path.suffix.lower() == ".json" or looks_like_json(path):
        return read_qencode_json(path)
    short = read_params_yaml(path)
    if db is None:
        bundled = BUNDLED_DB / f"{short.entry_id}.json"
        if path.resolve().parent != PARAMS_DIR.resolve() or not bundled.is_file():
            return short        # a YAML of one's own states its own facts
        db = BUNDLED_DB
    full = read_qencode_json(find_in_db(short.entry_id, db))
    for name in CROSS_CHECK:
        mine, theirs = getattr(short, name), getattr(full, name)
        if mine != theirs:
            raise EntryError(f"states {shown(mine)} but {full.source.name} has "
                             f"{shown(theirs)}; accepted: {shown(theirs)} (a params/ entry "
                             "states each fact as its QEncode JSON)",
                             field=YAML_PATHS[name], path=path)
    full.params_yaml = path
    return full
