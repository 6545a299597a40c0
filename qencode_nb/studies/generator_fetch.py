"""QEncode's generator tree at a recorded commit, fetched and checked by its content hash.

``qencode-nb data fetch --generator COMMIT`` downloads the public repository's archive of
that commit (``<repository>/archive/<commit>.tar.gz``, or ``<commit>.tar.gz`` of a
``--from`` mirror: a folder, a ``file://`` or an http(s) URL), unpacks the files the
generator study runs into ``<cache>/<commit>/`` and refuses them unless their **tree
digest** (:func:`tree_digest`) is the one :data:`REGISTRY` holds for that commit.

The tree digest is the SHA-256 of the sorted lines ``<sha256 of the file> <path>`` of the
files the generator needs (:func:`tree_files`: ``scripts/``, ``schema/``, ``benchmarks/``,
the molecule catalogs ``molecules_v*.json``, ``requirements-v3.txt``,
``requirements-v4.txt``, ``CITATION.cff``; ``__pycache__`` and editor backups left out),
so a whole-repository archive and the copy in ``../shared/qencode-history/generator/``
hash alike.  The registry's digests were computed from those copies (unchanged files of
the public repository at each commit, per its NOTICE), 2026-12-07.
Importing this module imports no numpy.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from qencode_nb.errors import DataFetchError, ParameterError
from qencode_nb.paths import ROOT

#: The public repository the entries' commits belong to.
REPOSITORY = "https://github.com/qencode-benchmark/qencode-benchmark"

#: ``data/qencode-history/generator-registry.txt``: ``<full commit> <tree digest> <files>``.
REGISTRY = ROOT / "data" / "qencode-history" / "generator-registry.txt"

#: Top-level folders and files of a commit the generator study runs.
TREE_FOLDERS = ("scripts", "schema", "benchmarks")
TREE_FILES = ("requirements-v3.txt", "requirements-v4.txt", "CITATION.cff")

#: Environment variable naming the fetched trees' folder.
CACHE_ENV = "QENCODE_NB_GENERATOR_CACHE"


def cache_dir(path=None) -> Path:
    """Where fetched trees go: ``path``, else ``$QENCODE_NB_GENERATOR_CACHE``, else
    ``~/.cache/qencode-nb/generator``."""
    import os

    if path is not None:
        return Path(path)
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "qencode-nb" / "generator"


def _kept(rel: Path) -> bool:
    parts = rel.parts
    if any(p == "__pycache__" for p in parts) or rel.name.endswith(("~", ".bak", ".swp", ".orig")):
        return False
    if len(parts) == 1:
        return rel.name in TREE_FILES or (rel.name.startswith("molecules_v")
                                          and rel.name.endswith(".json"))
    return parts[0] in TREE_FOLDERS


def tree_files(root: Path) -> list[Path]:
    """The files of a tree (or of an unpacked whole-repository archive) the digest
    covers, as paths relative to ``root``, sorted."""
    root = Path(root)
    return sorted(p.relative_to(root) for p in root.rglob("*")
                  if p.is_file() and _kept(p.relative_to(root)))


def tree_digest(root: Path) -> tuple[str, int]:
    """``(SHA-256 hex of the sorted "<file sha256> <path>" lines, files)`` of ``root``."""
    lines = []
    for rel in tree_files(root):
        lines.append(f"{hashlib.sha256((Path(root) / rel).read_bytes()).hexdigest()} "
                     f"{rel.as_posix()}\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest(), len(lines)


def registry() -> dict:
    """``{full commit: (tree digest, files)}`` of :data:`REGISTRY`."""
    out = {}
    for line in REGISTRY.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            commit, digest, files = line.split()
            out[commit] = (digest, int(files))
    return out


def full_commit(commit: str) -> str:
    """The registry's full commit id for ``commit`` (a prefix of 7 or more hex digits).

    Raises:
        ParameterError: no registered commit starts with it (lists the registered ones).
    """
    known = registry()
    found = [c for c in known if isinstance(commit, str) and len(commit) >= 7
             and c.startswith(commit.lower())]
    if len(found) != 1:
        raise ParameterError(f"{commit!r} is not a registered generator commit; accepted "
                             "(their trees' digests are known): "
                             + ", ".join(c[:7] for c in known), parameter="--generator")
    return found[0]


def fetch_generator(commit: str, *, base_url: str | None = None, path=None) -> Path:
    """Download, unpack and check the generator tree of ``commit``; its folder.

    Args:
        commit: a registered commit (:func:`full_commit`).
        base_url: where ``<full commit>.tar.gz`` lies (a folder, ``file://`` or http(s)
            URL); default the repository's archive URL, ``<REPOSITORY>/archive``.
        path: the trees' folder (:func:`cache_dir`).

    Raises:
        ParameterError: an unregistered commit.
        DataFetchError: the download failed, the archive holds none of the tree's files,
            or their digest is not the registry's (the tree is removed, both digests named).
    """
    import shutil
    import tarfile
    import tempfile

    full = full_commit(commit)
    want, files = registry()[full]
    folder = cache_dir(path)
    tree = folder / full
    if tree.is_dir() and tree_digest(tree)[0] == want:
        return tree
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        archive = Path(tmp) / f"{full}.tar.gz"
        _download(f"{(base_url or REPOSITORY + '/archive').rstrip('/')}/{full}.tar.gz", archive)
        unpacked = Path(tmp) / "unpacked"
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(unpacked, filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise DataFetchError(f"{archive.name}: not a readable archive: {exc}") from exc
        tops = [p for p in unpacked.iterdir() if p.is_dir()]
        root = tops[0] if len(tops) == 1 and not (unpacked / "scripts").is_dir() else unpacked
        got, count = tree_digest(root)
        if got != want:
            raise DataFetchError(f"generator {full[:7]}: the archive's {count} tree files hash "
                                 f"to {got[:16]}..., the registry's {files} to {want[:16]}...; "
                                 "not kept")
        if tree.exists():
            shutil.rmtree(tree)
        for rel in tree_files(root):
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, tree / rel)
    return tree


def _download(url: str, target: Path) -> None:
    """``url`` to ``target``: a local folder or ``file://`` copied, else pooch's HTTP
    downloader (DataFetchError naming the URL on failure)."""
    import shutil

    from qencode_nb.entry.database import local_mirror

    try:
        local = local_mirror(url.rsplit("/", 1)[0])
    except ParameterError as exc:
        raise DataFetchError(str(exc)) from exc
    if local is not None:
        source = local / url.rsplit("/", 1)[1]
        if not source.is_file():
            raise DataFetchError(f"{source}: no such archive in the mirror")
        shutil.copyfile(source, target)
        return
    import pooch

    try:
        pooch.HTTPDownloader(progressbar=False)(url, str(target), None)
    except Exception as exc:          # requests' and pooch's errors alike: name the URL
        raise DataFetchError(f"{url}: download failed: {exc}") from exc
