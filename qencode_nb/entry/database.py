"""The public QEncode v4.4 database on demand, every file checked by its SHA-256.

:func:`fetch` downloads the release with ``pooch`` into a cache folder laid out
like a database folder (``db/<entry id>.json`` beside ``molecules_v4.json``,
``requirements-v4.txt`` and ``schema_v4.json``), so its ``db/`` is a target for
``qencode-nb sweep`` and a ``db=`` for a bundled entry.  The registry
(``data/qencode-v4/registry.txt``: name, SHA-256, URL, one line a file) is the
release's content at a fixed commit of the QEncode repository: a download whose
hash differs (corrupted, truncated, tampered) is retried and then refused, and a
file already in the cache is checked again before it is used.  A mirror laid out like
the cache folder may be an http(s) URL, a ``file://`` URL or a local folder
(:func:`local_mirror`: an offline copy, e.g. ``../shared/qencode-v4`` or another
machine's cache); its files are copied in and checked by the same SHA-256 rule.

Importing this module imports nothing heavy (pooch is imported by :func:`fetch`).
"""

from __future__ import annotations

import os
from pathlib import Path

from qencode_nb.errors import DataFetchError, EntryError, ParameterError
from qencode_nb.paths import BUNDLED_DB

#: The registry of the public database (pooch's format: ``name sha256 url``).
REGISTRY = BUNDLED_DB / "registry.txt"
#: Where the files come from: repository, branch and commit of the registry.
SOURCE = ("https://github.com/qencode-benchmark/qencode-benchmark", "master",
          "a46b4ece504335c6e3026a35b7309772ebe96a48")
#: The QEncode release the registry holds (data/qencode-v4/NOTICE: suite v4.4).
RELEASE = "v4.4"
#: Environment variable naming the cache folder (default: pooch's OS cache,
#: ``~/.cache/qencode-nb/qencode-v4`` on Linux).
ENV_DATA_DIR = "QENCODE_NB_DATA"
#: Download attempts after the first when one fails or its hash differs.
RETRIES = 2


def data_dir(path=None) -> Path:
    """The cache folder: ``path``, else ``$QENCODE_NB_DATA``, else pooch's OS cache
    folder for qencode-nb, ``qencode-v4`` inside it."""
    if path is not None:
        return Path(path)
    env = os.environ.get(ENV_DATA_DIR)
    if env:
        return Path(env)
    import pooch

    return Path(pooch.os_cache("qencode-nb")) / "qencode-v4"


def registry() -> dict:
    """``{name: (sha256 hex, url)}`` of every file of the release, in registry order.

    Raises:
        DataFetchError: the registry file is missing or a line is malformed.
    """
    try:
        lines = REGISTRY.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataFetchError(f"registry {REGISTRY} cannot be read: {exc}") from None
    out = {}
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 3 or len(parts[1]) != 64:
            raise DataFetchError(f"registry {REGISTRY} line {n}: {line!r}; accepted: "
                                 "'name sha256hex url'")
        out[parts[0]] = (parts[1], parts[2])
    return out


def release_of(file_name: str, file_sha256: str | None) -> str | None:
    """:data:`RELEASE` when the registry holds an entry file of that name
    (``db/<file_name>``) with that SHA-256 of its bytes (the file is the release's,
    byte for byte), else None (not a release file, or changed)."""
    if not file_sha256:
        return None
    try:
        known = registry().get(f"db/{file_name}")
    except DataFetchError:
        return None
    return RELEASE if known and known[0] == file_sha256 else None


def select(only=None, reg: dict | None = None) -> list[str]:
    """The registry names to fetch: all, or those whose name or entry id (file stem)
    is in ``only`` (the release files by their names, e.g. ``schema_v4.json``);
    ``reg`` is :func:`registry` when already read.

    Raises:
        EntryError: a name of ``only`` is not in the registry (field ``only``).
    """
    names = list(registry() if reg is None else reg)
    if not only:
        return names
    by_key = {}
    for name in names:
        by_key[name] = name
        by_key[Path(name).name] = name
        by_key[Path(name).stem] = name
    unknown = [o for o in only if o not in by_key]
    if unknown:
        raise EntryError(f"{', '.join(map(repr, unknown))} not in the QEncode v4.4 registry "
                         f"({len(names)} files); accepted: entry ids such as "
                         f"{Path(names[-1]).stem!r}, or {', '.join(n for n in names if '/' not in n)}",
                         field="only")
    return list(dict.fromkeys(by_key[o] for o in only))


def local_mirror(base_url: str | None) -> Path | None:
    """The folder of a local mirror: ``base_url`` as a ``file://`` URL or as a path (no
    ``scheme://``); None for an http(s) mirror or none.

    Raises:
        ParameterError: a local mirror that is not a folder (parameter ``base_url``,
            ``data fetch --from``).
    """
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    if base_url is None:
        return None
    text = str(base_url)
    if text.lower().startswith("file:"):
        url = urlparse(text)
        if url.netloc not in ("", "localhost"):
            raise ParameterError(f"{text!r} names the host {url.netloc!r}; accepted: a "
                                 "file URL of this machine (file:///path/to/mirror), a "
                                 "folder or an http(s) URL", parameter="base_url")
        folder = Path(url2pathname(url.path))
    elif "://" in text:
        return None
    else:
        folder = Path(text).expanduser()
    if not folder.is_dir():
        raise ParameterError(f"{text!r} is not a folder; accepted: a local mirror laid out "
                             "like the cache folder (db/<entry id>.json, schema_v4.json, "
                             "...), as a folder or a file:// URL, or an http(s) URL",
                             parameter="base_url")
    return folder.resolve()


def copy_from_mirror(url: str, output_file, pooch_instance=None) -> None:
    """A pooch downloader for a ``file://`` URL: copy the file to ``output_file`` (pooch
    then checks its SHA-256 before it keeps it, as for a download)."""
    import shutil
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    shutil.copyfile(url2pathname(urlparse(url).path), output_file)


def fetch(only=None, *, base_url: str | None = None, path=None, retries: int = RETRIES,
          progress: bool = False) -> Path:
    """Download (or find, checked, in the cache) the release's files; return the folder.

    Args:
        only: entry ids or release file names (:func:`select`); None: every file.
        base_url: a mirror laid out like the cache folder (``<base_url>db/<id>.json``,
            ``<base_url>schema_v4.json``): an http(s) URL, or a local folder given as a
            path or a ``file://`` URL (:func:`local_mirror`; its files are copied, each
            once: a file that differs differs again); None: the QEncode repository at
            :data:`SOURCE` (each file's URL in the registry).
        path: the cache folder (:func:`data_dir`).
        retries: attempts after the first when a download fails or its hash differs.
        progress: show pooch's download progress bars (tqdm).

    Returns:
        the cache folder; its ``db/`` holds the entries.

    Raises:
        EntryError: a name of ``only`` is not in the registry.
        ParameterError: a local mirror that is not a folder (:func:`local_mirror`).
        DataFetchError: a file that cannot be downloaded (or read from a local
            mirror), or whose SHA-256 is still not the registry's after the retries
            (names the file, the URL or path and both hashes); nothing of it is left in
            the cache.
    """
    import pooch

    reg = registry()
    names = select(only, reg)
    mirror = local_mirror(base_url)
    if mirror is not None:
        base_url, retries = mirror.as_uri(), 0
    if not progress:
        pooch.get_logger().setLevel("WARNING")   # one "Downloading ..." line a file otherwise
    folder = data_dir(path)
    base = base_url if base_url is None or base_url.endswith("/") else base_url + "/"
    store = pooch.create(path=folder, base_url=base or "", retry_if_failed=int(retries),
                         registry={n: f"sha256:{reg[n][0]}" for n in reg},
                         urls=None if base else {n: reg[n][1] for n in reg})
    for name in names:
        url = (base + name) if base else reg[name][1]
        source = mirror / name if mirror is not None else url
        got = "copied" if mirror is not None else "downloaded"
        try:
            store.fetch(name, progressbar=progress,
                        downloader=copy_from_mirror if mirror is not None else None)
        except ValueError as exc:          # pooch: the hash does not match
            raise DataFetchError(f"{name}: {got} from {source}, refused after "
                                 f"{1 + int(retries)} attempt(s): {exc}") from None
        except Exception as exc:  # noqa: BLE001 - requests' errors, an HTTP status, OSError
            raise DataFetchError(f"{name}: cannot be {got} from {source}: "
                                 f"{type(exc).__name__}: {exc}") from None
    return folder
