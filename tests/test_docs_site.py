"""The documentation site (docs/), built with Sphinx and myst-nb, in a real Chromium.

Where the site comes from: ``$QNB_DOCS_HTML`` names a built site folder (``.ci/run``
builds it in the background while the other tests run, then sets it); without it this
module builds the site itself into a temporary folder with the command of
CONTRIBUTING.md (warnings are errors, the tutorials executed), so it never skips.

Checked: the build's pages exist; the index and every tutorial page load with no console
error; every tutorial page shows executed outputs; the search page finds "margin"; the
generated reference pages list exactly the notebook's parameters and the audit records.
"""

from __future__ import annotations

import re

import functools
import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.notebook]

#: The tutorials, executed at build time (docs/tutorials/*.ipynb).
TUTORIALS = ("audit-one-entry", "audit-a-database", "threading-study",
             "figures-for-a-paper", "audit-your-own-result")


def build_site(out: Path) -> Path:
    """Build the site into ``out/html`` (CONTRIBUTING.md's command, doctrees beside it)."""
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
           "-d", str(out / "doctrees"), str(ROOT / "docs"), str(out / "html")]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, f"the site build failed:\n{done.stdout[-6000:]}\n{done.stderr[-6000:]}"
    return out / "html"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    given = os.environ.get("QNB_DOCS_HTML")
    html = Path(given) if given else build_site(tmp_path_factory.mktemp("docs-site"))
    assert (html / "index.html").is_file(), f"no built site in {html} (index.html missing)"
    return html


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def base_url(site):
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _open(chromium, url):
    """The page at ``url`` and the console errors and page errors it logged."""
    page = chromium.new_page()
    errors = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    response = page.goto(url, wait_until="load")
    assert response is not None and response.ok, f"{url}: HTTP {response and response.status}"
    page.wait_for_load_state("networkidle")
    return page, errors


def test_the_site_has_its_pages(site):
    pages = ["index", "quickstart", "changelog", "contributing",
             *(f"tutorials/{t}" for t in TUTORIALS),
             *(f"howto/{h}" for h in ("binder", "dask", "resume", "compare-hosts", "robustness")),
             *(f"explanations/{e}" for e in ("tiers", "margin", "replay",
                                             "threads-and-kernels", "engines")),
             *(f"reference/{r}" for r in ("api", "cli", "notebook-parameters", "records",
                                          "glossary", "layout"))]
    missing = [p for p in pages if not (site / f"{p}.html").is_file()]
    assert not missing
    assert (site / "_images").is_dir() or (site / "_static" / "card-lih.png").is_file()


@pytest.mark.parametrize("page_name", ["index", *(f"tutorials/{t}" for t in TUTORIALS)])
def test_page_loads_without_console_errors(chromium, base_url, page_name):
    page, errors = _open(chromium, f"{base_url}/{page_name}.html")
    try:
        assert page.locator("article").count() >= 1
        assert not errors, f"{page_name}: console errors {errors}"
    finally:
        page.close()


@pytest.mark.parametrize("tutorial", TUTORIALS)
def test_tutorial_shows_executed_outputs(chromium, base_url, tutorial):
    page, _ = _open(chromium, f"{base_url}/tutorials/{tutorial}.html")
    try:
        code_cells = page.locator("div.cell").count()
        outputs = page.locator("div.cell_output")
        assert code_cells >= 3, f"{tutorial}: {code_cells} code cells"
        assert outputs.count() >= 2, f"{tutorial}: {outputs.count()} output cells"
        for i in range(outputs.count()):
            out = outputs.nth(i)
            text = out.inner_text().strip()
            assert text or out.locator("img, svg, table").count(), \
                f"{tutorial}: output {i} is empty"
        body = page.locator("article").inner_text()
        assert "Traceback (most recent call last)" not in body, f"{tutorial}: a traceback"
    finally:
        page.close()


def test_audit_tutorial_draws_a_finished_card(chromium, base_url):
    page, _ = _open(chromium, f"{base_url}/tutorials/audit-one-entry.html")
    try:
        card = page.locator(".cell_output .qnb-card")
        assert card.count() == 1
        assert card.get_attribute("data-state") == "done"
        assert card.get_attribute("data-entry-id").startswith("LiH_ccpvdz_PAR_HEA_v4")
    finally:
        page.close()


def test_figures_tutorial_shows_its_figures(chromium, base_url):
    page, _ = _open(chromium, f"{base_url}/tutorials/figures-for-a-paper.html")
    try:
        images = page.locator(".cell_output img")
        assert images.count() >= 2        # the margin plot and the ADAPT plot (H4, H6 bundled)
        for i in range(images.count()):
            assert images.nth(i).evaluate("img => img.complete && img.naturalWidth > 100")
        text = page.locator("article").inner_text()
        # the three files a journal takes, checked in the tutorial's own output
        assert re.search(r"margins\.png: \d+ x \d+ px at 300 dpi", text), text[-2000:]
        assert "margins.pdf: b'%PDF-" in text
        assert re.search(r"margins\.svg: \d+ text elements", text)
        assert "Margins." in text                          # the caption under the figure
        assert "ADAPT operators against system size. Operators selected" in text  # its caption
        assert "Not drawn: ADAPT operators against system size need at least 2" in text
    finally:
        page.close()


def test_search_finds_margin(chromium, base_url):
    page, errors = _open(chromium, f"{base_url}/search.html?q=margin")
    try:
        results = page.locator("#search-results ul.search li")
        results.first.wait_for(timeout=30_000)
        links = [results.nth(i).locator("a").first.get_attribute("href")
                 for i in range(results.count())]
        assert any(href and href.startswith("explanations/margin.html") for href in links), links
        assert not errors, f"search page: console errors {errors}"
    finally:
        page.close()


def _table_column(page, selector) -> list[str]:
    return [t.strip() for t in page.locator(f"{selector} tbody tr td:first-child").all_inner_texts()]


def test_parameters_page_lists_exactly_the_notebooks_parameters(chromium, base_url):
    import papermill

    declared = list(papermill.inspect_notebook(str(ROOT / "notebooks" / "audit.ipynb")))
    page, _ = _open(chromium, f"{base_url}/reference/notebook-parameters.html")
    try:
        assert _table_column(page, "table.qnb-parameters") == declared
    finally:
        page.close()


def test_records_page_lists_exactly_the_audit_records(chromium, base_url):
    from qencode_nb.verdict.records import AUDIT_RECORDS, ERROR_RECORD

    page, _ = _open(chromium, f"{base_url}/reference/records.html")
    try:
        assert _table_column(page, "table.qnb-records") == [*AUDIT_RECORDS, ERROR_RECORD]
    finally:
        page.close()


def test_cli_page_lists_every_subcommand(chromium, base_url):
    from qencode_nb.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    page, _ = _open(chromium, f"{base_url}/reference/cli.html")
    try:
        text = page.locator("article").inner_text()
        missing = [name for name in sub.choices if f"qencode-nb {name}" not in text]
        assert not missing, missing
    finally:
        page.close()


def test_no_page_names_this_machines_paths(site):
    """The built pages quote no absolute path of the machine that built them."""
    leaks = {}
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8", errors="replace")
        for needle in (str(ROOT), "/tmp/qnb-tutorial-", str(Path.home()) + "/"):
            if needle in text:
                leaks.setdefault(str(html.relative_to(site)), []).append(needle)
    assert not leaks, json.dumps(leaks, indent=1)


def test_tutorials_are_committed_without_outputs():
    """The tutorials are executed when the site is built, never shipped executed."""
    notebooks = sorted((ROOT / "docs" / "tutorials").glob("*.ipynb"))
    assert [p.stem for p in notebooks] == sorted(TUTORIALS)
    for path in notebooks:
        nb = json.loads(path.read_text(encoding="utf-8"))
        executed = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
                    and (c.get("outputs") or c.get("execution_count") is not None)]
        assert not executed, f"{path.name}: cells {executed} carry outputs"
