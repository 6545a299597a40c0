"""No absolute path of the machine in a published file (issue 36, item 4).

Every kind of output is written once from a folder under a recognisable temporary path
(``.../PRIVATE-qnb-path-marker/``): a record sweep in mode replay of one real v4 entry
(its release's ``summary.csv``, margin plot and crate; the record's ``summary.csv``,
``releases.csv``, ``record.json`` and ``claims.csv``), ``report`` (the record page, the
release's page, its CSV and notebook pages, and a report with a claims section written
elsewhere), ``claims --out``, ``keygen``, ``sign`` and ``crate``.  Then every file written
is read as bytes and searched for the marker and for the machine's absolute prefixes (the
temporary folder, the home folder, the checkout's parent, the Python environment).

Two kinds of file are the run's own record, kept as the machine wrote them, and are
listed apart (:data:`RUN_RECORDS`): the executed audit notebooks (papermill's parameters
and paths, the ``entry_source`` record, the BLAS libraries' file paths: the attestation
signs their SHA-256, and ``report`` publishes them as scrubbed HTML pages) and their
``<name>.inputs.json`` (the resume key: the parameters the notebook ran with).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, SHARED_DB, SHARED_HISTORY as HISTORY
from qencode_nb.cli import main

MARKER = "PRIVATE-qnb-path-marker"
H2 = next(SHARED_DB.glob("H2_ccpvdz_JW_UCCSD_v4_*.json"))

#: The files that are a run's own record, not a published summary of it (module
#: docstring): ``(what, why)`` by file-name ending.
RUN_RECORDS = {
    ".ipynb": "the executed audit notebook, as papermill and the kernel wrote it",
    ".inputs.json": "the resume key: the parameters the notebook ran with",
}


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> dict:
    """Every kind of output written under ``<tmp>/PRIVATE-qnb-path-marker/``; returns
    the folders (``base``, ``record``: the input copy, ``runs``, ``claims``, ``site``,
    ``keys``) and each command's exit status."""
    base = tmp_path_factory.mktemp("published") / MARKER
    record = base / "record"
    db = record / "releases" / "v4" / "db"
    db.mkdir(parents=True)
    shutil.copy(H2, db)
    shutil.copy(HISTORY / "releases" / "v2" / "db" / "manifest.json", db)  # not an entry
    (record / "releases" / "v1" / "db").mkdir(parents=True)                  # no entry
    for name in ("README.md", "CITATION.cff", "CHANGELOG.md"):
        shutil.copy(HISTORY / name, record)
    shutil.copytree(HISTORY / "docs", record / "docs")
    shutil.copytree(HISTORY / "website", record / "website")
    runs, release = base / "runs", base / "runs" / "v4"
    status = {
        "sweep": main(["sweep", str(record), "--mode", "replay", "--engine", "fast",
                       "--out", str(runs)]),
        "claims": main(["claims", str(record), "--out", str(base / "claims")]),
        "report": main(["report", str(runs)]),
        "keygen": main(["keygen", "--out", str(base / "keys" / "audit-key")]),
    }
    status["sign"] = main(["sign", str(release), "--key", str(base / "keys" / "audit-key")])
    status["crate"] = main(["crate", str(release)])
    status["report --claims"] = main(["report", str(release), "--claims",
                                      str(base / "claims" / "claims.csv"),
                                      "--out", str(base / "site" / "report.html")])
    return {"base": base, "record": record, "runs": runs, "release": release,
            "status": status}


def _private_prefixes(base: Path) -> set[str]:
    """The marker and the absolute prefixes of this machine a published file must not
    hold: the temporary folder, the home folder, the checkout's parent folder and the
    Python environment (each as given and resolved, with a trailing ``/``)."""
    found = {MARKER, str(base), str(base.resolve())}
    for folder in (tempfile.gettempdir(), Path.home(), ROOT.parent, sys.prefix):
        for p in {Path(folder), Path(folder).resolve()}:
            if len(p.parts) > 1:
                found.add(str(p).rstrip("/") + "/")
    return found


def _written(published) -> list[Path]:
    """Every file the commands wrote (the record folder is the input copy)."""
    return sorted(p for p in published["base"].rglob("*") if p.is_file()
                  and published["record"] not in p.parents)


def _is_run_record(path: Path) -> bool:
    if path.name.endswith(".inputs.json"):
        return True
    return path.suffix == ".ipynb" and path.parent.name != "instruments"


@pytest.mark.notebook
def test_every_kind_of_output_was_written(published):
    """The check below is not vacuous: each command ran and wrote its files."""
    status, runs, release = published["status"], published["runs"], published["release"]
    assert status.pop("claims") in (0, 3)           # 3: QEncode's stale and false claims
    assert set(status.values()) == {0}, status
    base = published["base"]
    for path in (runs / "summary.csv", runs / "releases.csv", runs / "record.json",
                 runs / "claims.csv", runs / "report.html", release / "summary.csv",
                 release / "margins.svg", release / "margins.pdf", release / "margins.png",
                 release / "ro-crate-metadata.json", release / "report.html",
                 release / "report.csv", base / "claims" / "claims.csv",
                 base / "site" / "report.html", base / "site" / "report.csv"):
        assert path.is_file() and path.stat().st_size, path
    assert len(list(release.glob("*.attestation.json"))) == 1
    assert len(list(release.glob("*.attestation.sig"))) == 1
    assert len(list((release / "report_notebooks").glob("*.html"))) == 1
    assert len(list((base / "site" / "report_notebooks").glob("*.html"))) == 1
    assert len(list((release / "entries").glob("*.json"))) == 1


@pytest.mark.notebook
def test_no_published_file_holds_a_path_of_the_machine(published):
    written = _written(published)
    private = _private_prefixes(published["base"])
    records = [p for p in written if _is_run_record(p)]
    # the run records are the audit notebook and its resume key, nothing else
    assert {p.name.split(".", 1)[1] for p in records} == {"ipynb", "inputs.json"}
    assert len(records) == 2 and all(any(p.name.endswith(e) for e in RUN_RECORDS)
                                     for p in records)
    found = []
    for path in (p for p in written if not _is_run_record(p)):
        data = path.read_bytes()
        found += [f"{path.relative_to(published['base'])}: {s!r}" for s in sorted(private)
                  if s.encode() in data]
    assert len(written) - len(records) >= 25
    assert not found, "absolute paths of the machine in published files:\n" + "\n".join(found)


@pytest.mark.notebook
def test_tables_name_each_notebook_relative_to_their_folder(published):
    runs, release = published["runs"], published["release"]
    name = f"{H2.stem}.ipynb"
    assert pd.read_csv(release / "summary.csv")["notebook"].tolist() == [name]
    assert pd.read_csv(runs / "summary.csv")["notebook"].tolist() == [f"v4/{name}"]
    assert (release / name).is_file() and (runs / "v4" / name).is_file()
    claims = pd.read_csv(published["base"] / "claims" / "claims.csv", dtype=str,
                         keep_default_na=False)
    assert any(w.startswith("README.md:") for w in claims["where"])
    assert not any(w.startswith("/") for w in claims["where"])
    manifest = json.loads((runs / "record.json").read_text())
    assert manifest["groups"][0]["source"] == "releases/v4/db"
    assert manifest["groups"][0]["not_entries"] == ["manifest.json"]
    assert manifest["empty_releases"] == [
        {"release": "v1", "reason": "no entries: db/ holds no .json entry"}]


@pytest.mark.notebook
def test_an_attestation_names_its_entry_by_name_and_verifies_from_a_published_copy(
        published, tmp_path, capsys):
    """The attestation names the entry file by its name (it lies outside its folder); a
    copy of the published folder elsewhere verifies against the crate's copy of the
    entry, ``entries/<name>``, without ``--entry``."""
    release = published["release"]
    (att,) = release.glob("*.attestation.json")
    body = json.loads(att.read_bytes())
    assert body["entry"]["file"] == H2.name and body["notebook"]["file"] == f"{H2.stem}.ipynb"
    copy = tmp_path / "published"
    shutil.copytree(release, copy)
    capsys.readouterr()
    assert main(["verify", str(copy / att.name), "--public-key",
                 str(published["base"] / "keys" / "audit-key.pub")]) == 0
    out = capsys.readouterr().out
    assert f"ok: entry {copy / 'entries' / H2.name} sha256 {body['entry']['sha256']}" in out


def test_a_published_table_names_notebooks_relative_and_shortens_other_paths(tmp_path,
                                                                              monkeypatch):
    """:func:`qencode_nb.readout.published.published_table`: the notebook column relative
    to the file's folder (as given or resolved), an error's path shortened to the folder
    the reader can place, numbers and their dtype as they were, the table itself kept."""
    from qencode_nb.paths import shown_path
    from qencode_nb.readout.published import published_csv, published_table

    out, db = tmp_path / MARKER / "runs", tmp_path / MARKER / "db"
    out.mkdir(parents=True)
    table = pd.DataFrame({
        "notebook": [str(out / "v4" / "a.ipynb"), str(out.resolve() / "b.ipynb"), None],
        "status": ["done", "failed", "failed"],
        "failure": [None, f"load: EntryError: {db}/cut.json: not valid JSON",
                    f"run: OSError: {Path.home()}/x/y: denied"],
        "error_mha": [1.5, float("nan"), 2.0], "blas_threads": [1, 1, 2]})
    shown = published_table(table, out, [str(db / "cut.json")])
    assert shown["notebook"].tolist() == ["v4/a.ipynb", "b.ipynb", None]
    assert shown["failure"].tolist()[1:] == [
        "load: EntryError: …/db/cut.json: not valid JSON", "run: OSError: ~/x/y: denied"]
    assert shown["blas_threads"].dtype == table["blas_threads"].dtype
    assert table["notebook"][0] == str(out / "v4" / "a.ipynb")     # the table kept
    assert MARKER not in published_csv(table, out, [str(db / "cut.json")])
    assert shown_path(Path("/elsewhere/deep/x.json"), out) == "…/deep/x.json"
    assert shown_path("relative/x.json", out) == "relative/x.json"
    # a sweep's --out given relative (`--out runs`): its notebooks are relative too
    monkeypatch.chdir(out.parent)
    assert shown_path(Path("runs/v4/a.ipynb"), Path("runs")) == "v4/a.ipynb"
    assert shown_path(Path("runs/a.ipynb"), out) == "a.ipynb"
