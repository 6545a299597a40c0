"""Other people's notebooks cannot reach outside their row (issue 23 item 9).

A runs folder may hold notebooks someone else produced.  From one real executed audit
(``papermill notebooks/audit.ipynb -p entry h2 -p mode replay``, about 20 s) the tests
craft notebooks with nbformat:

- ``qencode-nb crate`` copies an entry file only when its SHA-256 is the one the audit
  recorded: a crafted ``entry_source`` naming a private file leaves that file out, and
  the crate says which file and why (printed, and in ro-crate-metadata.json);
- ``qencode-nb report`` renders notebook pages as JupyterLab shows an untrusted
  notebook (HTML sanitized, no script, a Content-Security-Policy that runs none), and
  the report page runs only its own script (its CSP carries that script's SHA-256) and
  escapes every value a notebook gives it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path

import nbformat
import papermill
import pytest

from conftest import AUDIT_NB, ROOT, SHARED_DB
from qencode_nb.cli import main
from qencode_nb.notebook.record import RECORD_MIMETYPE

SECRET = "PRIVATE-KEY-MATERIAL-0f3c9a"
SCRIPT_MARK = "window.__qnb_pwned"
LIH_JSON = SHARED_DB / "LiH_ccpvdz_PAR_HEA_v4_tapered__sha256_e94da71e7eb3b98e.json"

pytestmark = pytest.mark.notebook


@pytest.fixture(scope="module")
def audit(tmp_path_factory) -> Path:
    """One real executed audit of the bundled h2 entry (replay mode)."""
    out = tmp_path_factory.mktemp("untrusted") / "h2.ipynb"
    papermill.execute_notebook(str(AUDIT_NB), str(out), parameters={
        "entry": "h2", "mode": "replay"}, progress_bar=False, cwd=str(ROOT))
    return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _craft(src: Path, dest: Path, records: dict | None = None, drop=(), extra_outputs=(),
           extra_cells=()) -> Path:
    """A copy of ``src`` with some records replaced (``{name: value}``), some record
    keys dropped (``(record, key)``), outputs added to the last code cell and cells
    appended."""
    nb = nbformat.read(src, as_version=4)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            payload = (output.get("data") or {}).get(RECORD_MIMETYPE)
            if not payload:
                continue
            if payload["name"] in (records or {}):
                payload["value"] = records[payload["name"]]
            for name, key in drop:
                if payload["name"] == name and isinstance(payload["value"], dict):
                    payload["value"].pop(key, None)
    code = [c for c in nb.cells if c.cell_type == "code"]
    code[-1].outputs.extend(nbformat.from_dict(o) for o in extra_outputs)
    nb.cells.extend(extra_cells)
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest)
    return dest


# -- the crate ---------------------------------------------------------------------------
def test_the_crate_copies_the_entry_the_audit_recorded(audit, tmp_path, capsys):
    from qencode_nb import read_records

    folder = tmp_path / "runs"
    nb = _craft(audit, folder / "h2.ipynb")
    r = read_records(nb)
    source = Path(r["entry_source"])
    assert r["integrity"]["file_sha256"] == _sha256(source)
    assert main(["crate", str(folder)]) == 0
    assert "warning" not in capsys.readouterr().out
    assert _sha256(folder / "entries" / source.name) == _sha256(source)


def test_a_crafted_entry_source_does_not_publish_a_private_file(audit, tmp_path, capsys):
    from rocrate.rocrate import ROCrate

    private = tmp_path / "home" / "id_ed25519.json"
    private.parent.mkdir()
    private.write_text(json.dumps({"key": SECRET}))
    folder = tmp_path / "runs"
    _craft(audit, folder / "theirs.ipynb", records={"entry_source": str(private)})
    assert main(["crate", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"crate: warning: {private}: left out of the crate, named by theirs.ipynb" in out
    assert "integrity.file_sha256" in out and _sha256(private) in out
    # nothing of the private file is in the crate's folder
    for path in folder.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
    assert not (folder / "entries").exists()
    crate = ROCrate(folder)
    (entry,) = crate.get("#audit-theirs")["object"]
    assert entry.type == "CreativeWork" and entry["alternateName"] == "…/home/id_ed25519.json"
    assert entry["description"].startswith("the entry file the audit names, not copied: its "
                                           "SHA-256")


def test_an_audit_without_a_file_hash_copies_only_its_qencode_entry(audit, tmp_path, capsys):
    """A notebook without ``integrity.file_sha256`` (an older audit): a QEncode JSON is
    copied when its SHA-256 by QEncode's rule is the one the audit recomputed, and
    left out otherwise (here: the LiH entry named by an audit of H2)."""
    from qencode_nb.entry import load

    folder = tmp_path / "runs"
    _craft(audit, folder / "old.ipynb", drop=[("integrity", "file_sha256")])
    _craft(audit, folder / "swapped.ipynb", drop=[("integrity", "file_sha256")],
           records={"entry_source": str(LIH_JSON)})
    assert main(["crate", str(folder)]) == 0
    out = capsys.readouterr().out
    h2 = load("h2").source
    assert (folder / "entries" / h2.name).is_file()
    assert not (folder / "entries" / LIH_JSON.name).exists()
    assert f"{LIH_JSON}: left out of the crate, named by swapped.ipynb: it is not the " \
           "QEncode entry" in out


# -- the report --------------------------------------------------------------------------
XSS_HTML = (f"<b>hello</b><script>{SCRIPT_MARK} = 1</script>"
            f"<img src=x onerror=\"{SCRIPT_MARK} = 2\"><a href=\"javascript:{SCRIPT_MARK}=3\">x</a>")


@pytest.fixture(scope="module")
def crafted_report(audit, tmp_path_factory):
    """A runs folder with a crafted notebook (script in a text/html output, a javascript
    output, a markdown cell, a mermaid output; an entry id holding markup) beside the
    real one, a crafted robustness.svg, and the report of it."""
    from qencode_nb.readout.report import write_report

    base = tmp_path_factory.mktemp("report")
    folder = base / "runs"
    shutil.copy(audit, folder.mkdir() or folder / "h2.ipynb")
    _craft(audit, folder / "evil.ipynb",
           records={"entry_id": f"\"><script>{SCRIPT_MARK}=4</script>",
                    "verdict": f"<script>{SCRIPT_MARK}=5</script>"},
           extra_outputs=[
               {"output_type": "display_data", "metadata": {},
                "data": {"text/html": XSS_HTML, "text/plain": "x"}},
               {"output_type": "display_data", "metadata": {},
                "data": {"application/javascript": f"{SCRIPT_MARK} = 6"}},
               {"output_type": "display_data", "metadata": {},
                "data": {"text/vnd.mermaid": f"</pre><script>{SCRIPT_MARK}=7</script>"}}],
           extra_cells=[nbformat.v4.new_markdown_cell(
               f"# note\n<script>{SCRIPT_MARK}=8</script><iframe src=\"javascript:1\">")])
    (folder / "robustness.svg").write_text(
        f'<svg xmlns="http://www.w3.org/2000/svg"><script>{SCRIPT_MARK}=9</script></svg>')
    return write_report(folder, base / "site" / "report.html")


def _soup(path: Path):
    from bs4 import BeautifulSoup

    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def test_notebook_pages_are_rendered_as_untrusted(crafted_report):
    from qencode_nb.readout.report import NOTEBOOK_PAGE_CSP

    page = crafted_report.pages_dir / "evil.html"
    text = page.read_text(encoding="utf-8")
    soup = _soup(page)
    assert soup.find_all("script") == [], [str(s)[:80] for s in soup.find_all("script")]
    assert soup.find_all("iframe") == []
    assert SCRIPT_MARK not in " ".join(str(t) for t in soup.find_all(True, attrs={
        "onerror": True}))
    assert "javascript:" not in " ".join(a.get("href", "") for a in soup.find_all("a"))
    # sanitized, not dropped: the harmless markup of the output stays
    assert soup.find("b", string="hello") is not None
    # the mermaid text is shown as text
    assert f"&lt;script&gt;{SCRIPT_MARK}=7" in text
    # the page's first element in <head> is a CSP that runs no script at all
    meta = soup.head.find("meta")
    assert meta.get("http-equiv") == "Content-Security-Policy"
    assert meta["content"] == NOTEBOOK_PAGE_CSP and "script-src 'none'" in meta["content"]
    # the real audit's page keeps its verdict card and records as text
    own = _soup(crafted_report.pages_dir / "h2.html")
    assert own.find_all("script") == [] and own.select(".jp-Cell")


def test_the_report_page_runs_only_its_own_script(crafted_report):
    text = crafted_report.path.read_text(encoding="utf-8")
    soup = _soup(crafted_report.path)
    scripts = soup.find_all("script")
    assert len(scripts) == 1
    csp = soup.head.find("meta", attrs={"http-equiv": "Content-Security-Policy"})["content"]
    digest = base64.b64encode(hashlib.sha256(scripts[0].string.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp and "default-src 'none'" in csp
    assert "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    assert SCRIPT_MARK not in scripts[0].string
    # the crafted entry id is escaped text in the row, not markup
    assert f'data-entry-id="&#34;&gt;&lt;script&gt;{SCRIPT_MARK}=4' in text
    row = soup.select_one('tr.qnb-row[data-run="evil"]')
    assert row["data-entry-id"] == f"\"><script>{SCRIPT_MARK}=4</script>"
    # the folder's robustness.svg is an image (no script runs in one), never inlined
    figure = soup.select_one("figure#qnb-robustness-plot")
    assert figure.find("svg") is None and figure.find("script") is None
    img = figure.find("img")
    assert img["src"].startswith("data:image/svg+xml;base64,")
