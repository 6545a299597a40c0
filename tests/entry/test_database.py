"""qencode-nb data fetch: the public QEncode v4.4 database through pooch, every file
checked by its SHA-256 (qencode_nb.entry.database).

The mirror is ../shared/qencode-v4 (or a doctored copy of it) served over HTTP on
127.0.0.1, laid out as the fetched folder is, or a local mirror (a folder or a file://
URL) built from the bundled entries; no test here reaches the network.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import SHARED_DB
from qencode_nb.entry import database
from qencode_nb.errors import DataFetchError, EntryError, ParameterError

SHARED = SHARED_DB.parent
QENCODE_NB = Path(sys.executable).parent / "qencode-nb"
ENTRIES = ["H2_ccpvdz_JW_UCCSD_v4_tapered__sha256_93a0f8a8604d9aed",
           "LiH_ccpvdz_PAR_HEA_v4_tapered__sha256_e94da71e7eb3b98e"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def serve():
    """``serve(folder) -> base URL`` of an HTTP server on 127.0.0.1 for the test."""
    servers = []

    def start(folder: Path) -> str:
        handler = functools.partial(_Quiet, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_registry_holds_every_shared_file_with_its_sha256():
    reg = database.registry()
    shared = [f"db/{p.name}" for p in sorted(SHARED_DB.glob("*.json"))]
    assert len(shared) == 40 and len(reg) == 57          # 40 of the 54 entries; 3 files
    shared += ["molecules_v4.json", "requirements-v4.txt", "schema_v4.json"]
    for name in shared:
        assert reg[name][0] == _sha256(SHARED / name), name
        assert reg[name][1].startswith("https://raw.githubusercontent.com/qencode-benchmark/"
                                       f"qencode-benchmark/{database.SOURCE[2]}/")


def test_fetch_downloads_checks_and_then_reads_the_cache(serve, tmp_path):
    base = serve(SHARED)
    folder = database.fetch(ENTRIES + ["schema_v4.json"], base_url=base, path=tmp_path / "c")
    assert folder == tmp_path / "c"
    for name in [f"db/{e}.json" for e in ENTRIES] + ["schema_v4.json"]:
        assert (folder / name).read_bytes() == (SHARED / name).read_bytes()
    # The fetched db/ is a database folder: a bundled entry completes from it.
    from qencode_nb.entry import load

    assert load("h2", db=folder / "db").optimal_params is not None
    # A second fetch needs no server: the cached files are checked, not downloaded.
    assert database.fetch(ENTRIES, base_url="http://127.0.0.1:9/", path=folder, retries=0) \
        == folder
    # A cached file changed on disk is noticed and downloaded again from the mirror.
    cached = folder / f"db/{ENTRIES[0]}.json"
    cached.write_bytes(cached.read_bytes().replace(b"-1.1", b"-1.2", 1))
    assert _sha256(cached) != database.registry()[f"db/{ENTRIES[0]}.json"][0]
    database.fetch([ENTRIES[0]], base_url=base, path=folder)
    assert _sha256(cached) == database.registry()[f"db/{ENTRIES[0]}.json"][0]


@pytest.mark.parametrize("damage", ["tampered", "truncated"])
def test_a_tampered_or_truncated_download_is_refused(serve, tmp_path, damage):
    mirror = tmp_path / "mirror"
    shutil.copytree(SHARED, mirror)
    bad = mirror / "db" / f"{ENTRIES[1]}.json"
    bad.chmod(0o644)
    data = bad.read_bytes()
    bad.write_bytes(data.replace(b"-7.97", b"-7.98", 1) if damage == "tampered"
                    else data[: len(data) // 2])
    assert bad.read_bytes() != data
    base = serve(mirror)
    with pytest.raises(DataFetchError,
                       match=rf"db/{ENTRIES[1]}\.json: downloaded from {base}db/.* refused "
                             r"after 2 attempt\(s\): .*(?i:hash)"):
        database.fetch([ENTRIES[1]], base_url=base, path=tmp_path / "c", retries=1)
    assert not (tmp_path / "c" / "db" / f"{ENTRIES[1]}.json").exists(), "nothing kept"
    # The other files of that mirror are fine.
    database.fetch([ENTRIES[0]], base_url=base, path=tmp_path / "c")


def test_an_unknown_name_and_a_dead_mirror_are_clear_errors(tmp_path):
    with pytest.raises(EntryError, match="field only: 'H99' not in the QEncode v4.4 registry "
                                         r"\(57 files\); accepted: entry ids such as"):
        database.fetch(["H99"], path=tmp_path)
    with pytest.raises(DataFetchError, match="schema_v4.json: cannot be downloaded "
                                                      "from http://127.0.0.1:9/schema_v4.json"):
        database.fetch(["schema_v4.json"], base_url="http://127.0.0.1:9", path=tmp_path,
                       retries=0)


def test_data_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(database.ENV_DATA_DIR, str(tmp_path / "here"))
    assert database.data_dir() == tmp_path / "here"
    assert database.data_dir(tmp_path / "there") == tmp_path / "there"
    monkeypatch.delenv(database.ENV_DATA_DIR)
    assert database.data_dir().parts[-2:] == ("qencode-nb", "qencode-v4")


def test_cli_data_fetch(serve, tmp_path):
    base = serve(SHARED)
    proc = subprocess.run([str(QENCODE_NB), "data", "fetch", "--only", ENTRIES[0],
                           "--base-url", base, "--dir", str(tmp_path / "c")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"1 file(s) of QEncode v4.4 checked in {tmp_path / 'c'}" in proc.stdout
    assert (tmp_path / "c" / "db" / f"{ENTRIES[0]}.json").is_file()
    bad = subprocess.run([str(QENCODE_NB), "data", "fetch", "--only", "nope",
                          "--dir", str(tmp_path / "c")], capture_output=True, text=True)
    assert bad.returncode == 2 and "qencode-nb: --only 'nope' not in" in bad.stderr


BUNDLED = sorted(database.BUNDLED_DB.glob("*.json"))   # three v4.4 entries, byte for byte


def _local_mirror(tmp_path) -> Path:
    """A local mirror laid out like the cache folder, built from the bundled entries."""
    mirror = tmp_path / "mirror"
    (mirror / "db").mkdir(parents=True)
    for path in BUNDLED:
        shutil.copyfile(path, mirror / "db" / path.name)
    return mirror


@pytest.mark.parametrize("spelling", ["folder", "file URL"])
def test_a_local_mirror_is_copied_under_the_same_sha256_checks(tmp_path, spelling):
    """``data fetch --from DIR`` or ``--from file:///DIR``: offline, every file checked
    against the registry as a download is; a tampered copy is refused, nothing kept."""
    mirror = _local_mirror(tmp_path)
    given = str(mirror) if spelling == "folder" else mirror.as_uri()
    ids = [p.stem for p in BUNDLED]
    folder = database.fetch(ids, base_url=given, path=tmp_path / "c")
    for path in BUNDLED:
        assert (folder / "db" / path.name).read_bytes() == path.read_bytes()
    bad = mirror / "db" / BUNDLED[0].name
    bad.write_bytes(bad.read_bytes().replace(b"-1.1", b"-1.2", 1))
    assert bad.read_bytes() != BUNDLED[0].read_bytes()
    with pytest.raises(DataFetchError, match=rf"db/{BUNDLED[0].name}: copied from "
                                             rf"{bad}, refused after 1 attempt\(s\): "
                                             r".*(?i:hash)"):
        database.fetch([BUNDLED[0].stem], base_url=given, path=tmp_path / "d")
    assert not (tmp_path / "d" / "db" / BUNDLED[0].name).exists(), "nothing kept"
    # a file the mirror lacks is named with its path
    with pytest.raises(DataFetchError, match=r"schema_v4.json: cannot be copied from "
                                             rf"{mirror / 'schema_v4.json'}: FileNotFoundError"):
        database.fetch(["schema_v4.json"], base_url=given, path=tmp_path / "d")


def test_a_local_mirror_that_is_not_a_folder_is_refused(tmp_path):
    with pytest.raises(ParameterError, match=r"^base_url '.*nowhere' is not a folder; accepted: "
                                             "a local mirror laid out like the cache folder"):
        database.fetch(["schema_v4.json"], base_url=str(tmp_path / "nowhere"), path=tmp_path)
    with pytest.raises(ParameterError, match="names the host 'example.org'"):
        database.local_mirror("file://example.org/mirror")
    assert database.local_mirror("https://example.org/mirror/") is None
    assert database.local_mirror(tmp_path.as_uri()) == tmp_path.resolve()


def test_cli_data_fetch_from_a_local_mirror(tmp_path):
    mirror = _local_mirror(tmp_path)
    proc = subprocess.run([str(QENCODE_NB), "data", "fetch", "--only", BUNDLED[1].stem,
                           "--from", mirror.as_uri(), "--dir", str(tmp_path / "c")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "c" / "db" / BUNDLED[1].name).read_bytes() == BUNDLED[1].read_bytes()
    bad = mirror / "db" / BUNDLED[1].name
    bad.write_bytes(bad.read_bytes()[:100])            # truncated
    proc = subprocess.run([str(QENCODE_NB), "data", "fetch", "--only", BUNDLED[1].stem,
                           "--from", str(mirror), "--dir", str(tmp_path / "d")],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "refused after 1 attempt(s)" in proc.stderr, proc.stderr
    proc = subprocess.run([str(QENCODE_NB), "data", "fetch", "--from", str(tmp_path / "no"),
                           "--dir", str(tmp_path / "d")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"qencode-nb: --from '{tmp_path / 'no'}' is not a folder")
