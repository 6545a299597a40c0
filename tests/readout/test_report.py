"""``qencode-nb report``: one self-contained HTML page of a folder of executed audits
(qencode_nb/readout/report.py, report_tables.py, report_columns.py, report_header.py,
report_paths.py; issue 15, items 4 and 6; issue 25, item 4: a publishable report).

One real sweep per module (the CI subset of the shared entries, replay mode, fast
engine: about 25 s) plus one entry whose mapping was tampered with (a failed run), a
copy of notebooks/figures.ipynb beside them (not an audit: never a row), then the
report.  The page is read back with BeautifulSoup and, in the browser test, driven in
a real headless Chromium (tests/browser.py).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, SHARED_DB
from qencode_nb.readout.plots import run_labels
from qencode_nb.errors import ReportError
from qencode_nb.readout.report_tables import QPU_QUESTIONS, qpu_answers, report_table

H2_JW_HEA = SHARED_DB / "H2_ccpvdz_JW_HEA_v4_tapered__sha256_67c3022f966367ed.json"
BROKEN = "H2_broken_mapping"   # the tampered entry's file stem


def _soup(path: Path):
    from bs4 import BeautifulSoup

    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _cell(row, key: str):
    return row.select_one(f'td[data-key="{key}"]')


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """A real sweep folder: the CI subset in replay mode on the fast engine, one failed
    run (encoding.mapping tampered with) and a figures notebook beside them."""
    from qencode_nb.batch.sweep import resolve_targets, select_subset, sweep

    base = tmp_path_factory.mktemp("report")
    entry = json.loads(H2_JW_HEA.read_text())
    entry["encoding"]["mapping"] = "qubit_magic"
    broken = base / "entries" / f"{BROKEN}.json"
    broken.parent.mkdir()
    broken.write_text(json.dumps(entry))
    targets = select_subset(resolve_targets([str(SHARED_DB)]), "ci") + [str(broken)]
    out = base / "runs"
    sweep(targets, out, mode="replay", engine="fast", progress=False, plot=False)
    shutil.copy(ROOT / "notebooks" / "figures.ipynb", out / "H2_audit_figures.ipynb")
    return out


@pytest.fixture(scope="module")
def report(runs):
    """The report of ``runs``, written to another folder (its notebook pages beside it)."""
    from qencode_nb.readout.report import write_report

    return write_report(runs, runs.parent / "site" / "report.html")


@pytest.mark.notebook
def test_one_row_per_audit_notebook_with_audit_table_values(runs, report):
    import pandas as pd

    from qencode_nb.readout.collect import audit_table
    from qencode_nb.readout.manifest import audit_notebooks, notebook_kind

    audits = audit_notebooks(runs)
    assert notebook_kind(runs / "H2_audit_figures.ipynb") == "figures"
    assert len(audits) == 8 and len(list(runs.glob("*.ipynb"))) == 9
    table = audit_table(runs)
    rows = _soup(report.path).select("table#qnb-report > tbody > tr.qnb-row")
    assert [r["data-run"] for r in rows] == [p.stem for p in audits]
    assert len(report.table) == len(table) == len(rows) == 8
    for row, (_, want) in zip(rows, table.iterrows()):
        assert row["data-entry-id"] == (want["entry_id"] or Path(want["notebook"]).stem)
        for key in ("status", "tier_procedure", "tier_certification", "tier_bit_identical",
                    "replay_status", "integrity"):
            shown = _cell(row, key)["data-value"]
            assert shown == (want[key] or ""), (row["data-run"], key)
        for key in ("published_error_mha", "margin_published", "seconds", "error_mha"):
            value = _cell(row, key)["data-value"]   # the unrounded value; "" when none
            assert float(value) == want[key] if value else pd.isna(want[key]), \
                (row["data-run"], key, value, want[key])
    failed = [r for r in rows if r["data-run"] == BROKEN]
    assert len(failed) == 1 and "failed" in failed[0]["class"]
    reason = table.loc[table["status"] == "failed", "failure"].item()
    assert "qubit_magic" in reason
    # shown under the verdict, the folder of the tampered entry by its name only
    entries = runs.parent / "entries"
    assert str(entries) in reason
    assert failed[0].select_one('td[data-key="verdict"] div.failure').get_text() == \
        reason.replace(str(entries), "…/entries")
    # Errors in mHa and margins in % exactly as the verdict card writes them.
    from qencode_nb.verdict.card_text import fmt_margin, fmt_mha

    for row, (_, want) in zip(rows, table.iterrows()):
        if row["data-run"] == BROKEN:
            continue
        margin = _cell(row, "margin_published").get_text(strip=True)
        assert margin == fmt_margin(want["margin_published"]), margin
        assert re.fullmatch(r"-?\d+\.\d%", margin)
        assert abs(float(margin[:-1]) - 100 * want["margin_published"]) <= 0.05 + 1e-9
        error = _cell(row, "published_error_mha").get_text(strip=True)
        assert error == fmt_mha(want["published_error_mha"])
    # The tiers' reasons on hover, as the audit recorded them.
    from qencode_nb.notebook.record import read_records

    done = next(r for r in rows if r["data-run"] != BROKEN)
    tiers = read_records(runs / f"{done['data-run']}.ipynb")["tiers"]
    for key in ("procedure", "certification", "bit_identical"):
        badge = _cell(done, f"tier_{key}").select_one("span.badge")
        assert badge["title"] == "; ".join(tiers[key]["reasons"])
        assert badge.get_text() == tiers[key]["status"]
    for row in rows:   # every badge says why on hover
        for key in ("status", "tier_procedure", "replay_status", "integrity"):
            assert _cell(row, key).select_one("span.badge").get("title"), (row["data-run"], key)
    replay = _cell(done, "replay_status").select_one("span.badge")["title"]
    assert re.match(r"\|ΔE\| \S+ Ha against the published energy, tolerance 1e-09 Ha", replay)
    summary = _soup(report.path).select_one("#qnb-summary").get_text(" ", strip=True)
    assert "8 runs: 7 done, 1 failed" in summary
    # replay mode: early stop is neither recordable in schema 4.0.0 nor exercised
    assert "tiers (pass/incomplete/fail/n/a): procedure 0/7/0/0" in summary
    assert "replay (pass/fail/n/a): 7/0/0" in summary


@pytest.mark.notebook
def test_each_row_links_its_rendered_notebook(runs, report):
    rows = _soup(report.path).select("tr.qnb-row")
    assert report.pages_dir == report.path.parent / "report_notebooks"
    for row in rows:
        href = _cell(row, "label").select_one("a")["href"]
        assert not href.startswith(("/", "file:", "http")), href
        page = report.path.parent / href
        assert page.is_file() and page.parent == report.pages_dir
        text = page.read_text(encoding="utf-8")
        assert row["data-run"] in text
        assert not re.search(r"<script[^>]+src=", text), f"{page} loads a script"
    assert sorted(p.stem for p in report.pages_dir.glob("*.html")) == \
        sorted(r["data-run"] for r in rows)


@pytest.mark.notebook
def test_the_page_is_self_contained(report):
    text = report.path.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", text, re.I)
    assert not re.search(r"<link\b|@import|url\(\s*['\"]?https?:", text, re.I)
    soup = _soup(report.path)
    assert all(not s.get("src") for s in soup.find_all("script"))
    figure = soup.select_one("figure#qnb-margin-plot svg")
    assert figure is not None and figure.find("path") is not None
    # drawn in the figures' style (figstyle.STYLE): the labels are text, not glyph paths
    texts = [t.get_text() for t in figure.find_all("text")]
    assert any("mHa" in t for t in texts), texts
    assert soup.select_one("#qnb-robustness-plot") is None   # no robustness study here
    ids = [t["id"] for t in soup.find_all(id=True)]
    assert len(ids) == len(set(ids)), "duplicate ids on the page"
    heads = [th["data-sort"] for th in soup.select("table#qnb-report th[data-sort]")]
    assert {"margin_published", "margin_regenerated", "error_mha", "tier_procedure",
            "qpu_code"} <= set(heads)
    assert "fragile_measured" not in heads   # shown only with a robustness study


def _machine_paths(runs: Path) -> list[str]:
    """Absolute paths of this machine that a published report must not show."""
    import sys

    return [str(runs.parent), str(runs.resolve().parent), str(ROOT), str(SHARED_DB.parent),
            sys.prefix, str(Path.home()) + "/", "/tmp/", "/work/"]


def _written(report) -> dict:
    """Every file the report wrote: ``{path: text}``."""
    files = [report.path, report.csv] + sorted(report.pages_dir.glob("*.html"))
    return {p: p.read_text(encoding="utf-8") for p in files}


@pytest.mark.notebook
def test_the_header_names_the_dataset_environment_and_toolkit(runs, report):
    import qencode_nb
    from qencode_nb.entry.database import RELEASE, SOURCE
    from qencode_nb.notebook.record import read_records

    soup = _soup(report.path)
    assert soup.select_one("h1").get_text(strip=True) == f"qencode-nb report: {runs.name}"
    dataset = soup.select_one("dd.qnb-dataset").get_text(" ", strip=True)
    # 7 shared entries and the tampered copy (its own folder, never loaded: no id)
    assert "entries from the folder db/, entries/: 7 entries in 8 runs" in dataset
    assert f"QEncode {RELEASE} (schema 4.0.0)" in dataset
    assert f"{SOURCE[0].removeprefix('https://')} at commit {SOURCE[2][:7]}" in dataset
    assert "7 of 8 runs read an entry file byte-identical to the release's" in dataset
    done = [read_records(p) for p in sorted(runs.glob("*.ipynb"))
            if read_records(p).get("done")]
    assert len(done) == 7
    generator = {r["entry_provenance"]["tool_versions"]["git_commit"] for r in done}
    assert all(c in dataset for c in generator)
    environment = soup.select_one("dd.qnb-environment").get_text(" ", strip=True)
    fingerprints = {r["provenance"]["numeric"]["hash"] for r in done}
    assert all(f"numeric fingerprint {f}" in environment for f in fingerprints)
    assert ("the runs differ" in environment) == (len(fingerprints) > 1)
    toolkit = soup.select_one("dd.qnb-toolkit").get_text(" ", strip=True)
    commits = {r["provenance"]["git"]["commit"][:7] for r in done}
    assert all(f"qencode-nb {qencode_nb.__version__} at commit {c}" in toolkit for c in commits)
    assert f"report written by qencode-nb {qencode_nb.__version__} at commit" in toolkit


@pytest.mark.notebook
def test_no_absolute_path_in_the_page_its_csv_or_the_notebook_pages(runs, report):
    written = _written(report)
    assert len(written) == 2 + 8
    for path, text in written.items():
        found = [p for p in _machine_paths(runs) if p in text]
        assert not found, f"{path.name} shows {found}"
    # a notebook page shows the entry it audited from its folder's name
    page = written[report.pages_dir / f"{H2_JW_HEA.stem}.html"]
    assert f"…/db/{H2_JW_HEA.name}" in page
    # ... and the page's table the notebooks by the runs folder's name
    label = _soup(report.path).select_one(f'tr[data-run="{H2_JW_HEA.stem}"] td[data-key="label"]')
    assert f"notebook …/{runs.name}/{H2_JW_HEA.stem}.ipynb" in label["title"]


@pytest.mark.notebook
def test_each_notebook_page_links_back_to_its_row(report):
    soup = _soup(report.path)
    for row in soup.select("tr.qnb-row"):
        assert row["id"] == f"run-{row['data-run']}"
        page = report.pages_dir / f"{row['data-run']}.html"
        back = _soup(page).select("nav.qnb-back a")
        assert [a["href"] for a in back] == [f"../report.html#run-{row['data-run']}"]
        assert (page.parent / back[0]["href"].split("#")[0]).resolve() == report.path.resolve()


@pytest.mark.notebook
def test_the_csv_holds_every_column_of_every_row(report):
    import pandas as pd
    from urllib.parse import unquote

    csv = pd.read_csv(report.csv, dtype=str, keep_default_na=False)
    assert list(csv.columns) == list(report.table.columns)
    assert list(csv["run"]) == list(report.table["run"])
    link = _soup(report.path).select_one("a#qnb-csv")
    assert link["download"] == "report.csv"
    prefix = "data:text/csv;charset=utf-8,"
    assert link["href"].startswith(prefix)
    assert unquote(link["href"][len(prefix):]) == report.csv.read_text(encoding="utf-8")
    floats = pd.read_csv(report.csv, float_precision="round_trip")   # fractions, unrounded
    assert list(floats["margin_published"].dropna()) == \
        list(report.table["margin_published"].dropna().astype(float))


@pytest.mark.notebook
def test_columns_that_read_the_same_on_every_row_are_named_once(report):
    soup = _soup(report.path)
    heads = soup.select("table#qnb-report tr.heads th")
    rows = soup.select("tr.qnb-row")
    named = {s["data-key"] for s in soup.select("#qnb-constants .const")}
    compact = {"label", "molecule", "basis", "mapping_ansatz", "optimizer",
               "published_error_mha", "error_mha", "movement_mha", "margin_published",
               "margin_regenerated", "tier_procedure", "tier_certification",
               "tier_bit_identical", "certification_change", "verdict"}
    for th in heads:
        key = th["data-sort"]
        texts = {_cell(r, key).get_text(" ", strip=True) for r in rows}
        constant = "qnb-constant" in (th.get("class") or [])
        assert constant == (len(texts) == 1 and key != "label"), (key, texts)
        assert (key in named) == constant, key
        # the compact set is shown unless it is the same everywhere; the rest is extra
        assert ("qnb-extra" in (th.get("class") or [])) == (constant or key not in compact)
        for r in rows:
            assert ("qnb-extra" in (_cell(r, key).get("class") or [])) == \
                ("qnb-extra" in (th.get("class") or [])), key
    # a constant's hover text: the one its cells share, else a pointer to them
    for span in soup.select("#qnb-constants .const"):
        key = span["data-key"]
        cells = [_cell(r, key) for r in rows]
        titles = {(c if c.get("title") else c.select_one("[title]") or c).get("title")
                  for c in cells}
        shown = span.select_one("span.badge, b").get("title")
        assert shown == (titles.pop() if len(titles) == 1 else "the same on every row, "
                         "for reasons that differ: hover the cells under all columns"), key
    # the group header's spans add up to the columns of each view
    groups = soup.select("table#qnb-report tr.groups th")
    assert sum(int(g["data-span-all"]) for g in groups) == len(heads)
    assert sum(int(g["data-span-compact"]) for g in groups) == \
        len([th for th in heads if "qnb-extra" not in (th.get("class") or [])])
    legend = soup.select_one("#qnb-legend").get_text(" ", strip=True)
    assert all(word in legend for word in ("pass", "fail", "incomplete", "n/a", "failed run"))


@pytest.mark.notebook
def test_works_on_my_qpu_answers_with_their_reasons(runs, report):
    from qencode_nb.notebook.record import read_records
    from qencode_nb.verdict.qpu_questions import ANSWERS, answers

    for row in _soup(report.path).select("tr.qnb-row"):
        records = read_records(runs / f"{row['data-run']}.ipynb")
        want = {a["question"]: a for a in records.get("works_on_my_qpu") or answers(records)}
        assert qpu_answers(records) == {q: (a["answer"], a["reason"]) for q, a in want.items()}
        for q in QPU_QUESTIONS:
            badge = _cell(row, f"qpu_{q}").select_one("span.badge")
            assert badge.get_text() == want[q]["answer"] and badge.get_text() in ANSWERS
            # as recorded, the folder of the tampered entry by its name only
            assert badge["title"] == want[q]["reason"].replace(
                str(runs.parent / "entries"), "…/entries")
    broken = _soup(report.path).select_one(f'tr[data-run="{BROKEN}"]')
    # its entry never loaded (EntryError at load): nothing is known of it (issue 23)
    assert _cell(broken, "qpu_executability").get_text(strip=True) == "unknown"


@pytest.mark.notebook
def test_the_cli_writes_the_report(runs, capsys):
    from qencode_nb.cli import main

    out = runs.parent / "cli" / "audits.html"
    assert main(["report", str(runs), "--out", str(out), "--no-notebooks"]) == 0
    assert capsys.readouterr().out.strip() == f"report: {out} (8 runs, 1 failed)"
    assert len(_soup(out).select("tr.qnb-row")) == 8
    assert not (out.parent / "audits_notebooks").exists()


@pytest.mark.notebook
def test_a_robustness_study_adds_measured_fragility_and_its_figure(tmp_path):
    """Two runs of one entry (1 and 2 BLAS threads) are told apart; fragile_measured
    comes from robustness_summary.csv, the robustness figure is inline."""
    import pandas as pd

    from qencode_nb.readout.report import write_report
    from qencode_nb.studies.robustness import robustness

    out = tmp_path / "robustness"
    robustness([str(H2_JW_HEA)], out, threads=[1, 2], mode="rerun", engine="fast",
               progress=False)
    summary = pd.read_csv(out / "robustness_summary.csv")
    report = write_report(out, notebooks=False)
    soup = _soup(report.path)
    rows = soup.select("tr.qnb-row")
    labels = [_cell(r, "label").get_text(strip=True) for r in rows]
    assert labels == ["H2 JW HEA 67c3 [t1__default__python3]",
                      "H2 JW HEA 67c3 [t2__default__python3]"]
    assert {r["data-entry-id"] for r in rows} == {H2_JW_HEA.stem}
    measured = str(bool(summary["fragile_measured"].item())).lower()
    assert [_cell(r, "fragile_measured")["data-value"] for r in rows] == [measured] * 2
    assert [_cell(r, "certified")["data-value"] for r in rows] == ["true", "true"]
    summary = soup.select_one("#qnb-summary").get_text(" ", strip=True)
    assert "certified by the re-run: 2 of 2 re-run (published certified: 2 of 2)" in summary
    assert soup.select_one("figure#qnb-robustness-plot svg") is not None
    assert soup.select_one("figure#qnb-margin-plot svg") is not None
    assert "<a href" not in str(soup.select_one("table#qnb-report"))   # --no-notebooks


def test_a_folder_without_audit_notebooks_is_refused(tmp_path, capsys):
    from qencode_nb.cli import main
    from qencode_nb.errors import QencodeNbError

    shutil.copy(ROOT / "notebooks" / "figures.ipynb", tmp_path / "audit_of_h2.ipynb")
    with pytest.raises(ReportError, match="holds no audit notebook") as err:
        report_table(tmp_path)
    assert isinstance(err.value, QencodeNbError) and err.value.folder == tmp_path
    assert str(tmp_path) in str(err.value) and "metadata.qencode_nb.kind" in str(err.value)
    missing = tmp_path / "no-such-runs"
    with pytest.raises(ReportError, match="is not a folder"):
        report_table(missing)
    assert main(["report", str(missing)]) == 2
    assert str(missing) in capsys.readouterr().err


def test_run_labels_tell_two_runs_of_one_entry_apart():
    entry = H2_JW_HEA.stem
    labels = run_labels([entry, entry, None, "H4_ccpvdz_JW_ADAPT_v4_tapered__sha256_39f9aa"],
                        [f"r/{entry}__t1.ipynb", f"r/{entry}__t2.ipynb", f"r/{BROKEN}.ipynb",
                         "r/H4_ccpvdz_JW_ADAPT_v4_tapered__sha256_39f9aa.ipynb"])
    assert labels == ["H2 JW HEA 67c3 [t1]", "H2 JW HEA 67c3 [t2]", "H2 broken mapping",
                      "H4 JW ADAPT 39f9"]


@pytest.mark.browser
@pytest.mark.notebook
def test_the_page_sorts_filters_and_draws_in_chromium(report, chromium, tmp_path):
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    problems, remote = _watch(page)
    try:
        page.goto(report.path.resolve().as_uri())
        assert page.locator("table#qnb-report tr.qnb-row").count() == len(report.table) == 8

        def column(key):
            return page.eval_on_selector_all(
                f'tr.qnb-row td[data-key="{key}"]', "tds => tds.map(td => td.dataset.value)")

        page.click('th[data-sort="margin_published"]')
        values = column("margin_published")
        numbers = [float(v) for v in values if v]
        assert numbers == sorted(numbers) and len(numbers) == 7
        assert values[-1] == "", "the failed run (no margin) sorts last"
        page.click('th[data-sort="margin_published"]')
        numbers = [float(v) for v in column("margin_published") if v]
        assert numbers == sorted(numbers, reverse=True)

        page.fill("#qnb-filter", "adapt")
        visible = page.locator("tr.qnb-row:visible")
        assert visible.count() == 2
        shown = page.eval_on_selector_all("tr.qnb-row:not([hidden])",
                                          "rs => rs.map(r => r.dataset.run)")
        assert sorted(r.split("_")[0] for r in shown) == ["H2CO", "H4"]
        assert page.inner_text("#qnb-shown") == "2 of 8 rows shown"
        page.fill("#qnb-filter", "qubit_magic")
        assert visible.count() == 1
        assert page.locator("tr.qnb-row:visible").get_attribute("data-run") == BROKEN
        page.fill("#qnb-filter", "")
        assert visible.count() == 8

        png = page.screenshot(path=str(tmp_path / "report.png"))
        from browser import is_blank

        assert not is_blank(png)
        page.click(f'tr.qnb-row[data-run="{BROKEN}"] td[data-key="label"] a')
        page.wait_for_load_state()
        assert page.url.endswith(f"report_notebooks/{BROKEN}.html")
        assert page.locator(".jp-Cell").count() > 0
    finally:
        page.close()
    assert not problems, problems
    assert not remote, f"the page loaded from the network: {remote}"


def test_qpu_answers_are_the_record_else_the_five_questions():
    from qencode_nb.verdict.qpu_questions import answers

    records = {"mode": "replay", "error": {"stage": "load", "type": "EntryError",
                                           "message": "field encoding.mapping"}}
    got = qpu_answers(records)
    assert list(got) == list(QPU_QUESTIONS)
    assert got == {a["question"]: (a["answer"], a["reason"]) for a in answers(records)}
    recorded = [{"question": "code", "answer": "partly", "reason": "as recorded"}]
    assert qpu_answers({**records, "works_on_my_qpu": recorded}) == {
        "code": ("partly", "as recorded")}


def _watch(page) -> tuple[list, list]:
    """Console errors, page errors and requests off the machine of ``page``."""
    problems, remote = [], []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: remote.append(r.url)
            if not r.url.startswith(("file:", "data:", "about:")) else None)
    return problems, remote


@pytest.mark.browser
@pytest.mark.notebook
def test_the_table_box_keeps_its_header_and_first_column_in_chromium(report, chromium):
    """A small window: the table's box scrolls both ways; the first column and the
    header rows stay where they were (bounding boxes before and after)."""
    page = chromium.new_page(viewport={"width": 900, "height": 380})
    problems, remote = _watch(page)
    try:
        page.goto(report.path.resolve().as_uri())
        box = page.locator("#qnb-table-box")
        box.scroll_into_view_if_needed()
        size = box.evaluate("b => [b.scrollWidth, b.clientWidth, b.scrollHeight, b.clientHeight]")
        assert size[0] > size[1] + 200 and size[2] > size[3] + 40, size
        first = page.locator("tr.qnb-row").first
        label, molecule = first.locator('td[data-key="label"]'), first.locator('td[data-key="molecule"]')
        head = page.locator('tr.heads th[data-sort="molecule"]')
        before = [label.bounding_box(), molecule.bounding_box(), head.bounding_box()]
        box.evaluate("b => b.scrollTo(200, 0)")
        after = [label.bounding_box(), molecule.bounding_box(), head.bounding_box()]
        assert after[0]["x"] == pytest.approx(before[0]["x"], abs=0.5), "first column scrolled away"
        assert after[1]["x"] == pytest.approx(before[1]["x"] - 200, abs=0.5)
        # the first column is drawn over what scrolls under it
        hit = page.evaluate("([x, y]) => document.elementFromPoint(x, y).closest('td').dataset.key",
                            [after[0]["x"] + after[0]["width"] - 3, after[0]["y"] + 5])
        assert hit == "label"
        box.evaluate("b => b.scrollTo(0, 40)")
        scrolled = [label.bounding_box(), head.bounding_box()]
        assert scrolled[1]["y"] == pytest.approx(before[2]["y"], abs=0.5), "header scrolled away"
        assert scrolled[0]["y"] == pytest.approx(before[0]["y"] - 40, abs=0.5)
        top = page.evaluate("([x, y]) => document.elementFromPoint(x, y).closest('tr').className",
                            [before[2]["x"] + 5, before[2]["y"] + 5])
        assert top == "heads", "a row is drawn over the header"
    finally:
        page.close()
    assert not problems, problems
    assert not remote, f"the page loaded from the network: {remote}"


@pytest.mark.browser
@pytest.mark.notebook
def test_columns_csv_and_plot_follow_the_reader_in_chromium(report, chromium, tmp_path):
    """The column toggle, the CSV download and the margin plot following the filter."""
    import pandas as pd

    page = chromium.new_page(viewport={"width": 1400, "height": 900}, accept_downloads=True)
    problems, remote = _watch(page)
    try:
        page.goto(report.path.resolve().as_uri())

        def shown_heads():
            return [th.get_attribute("data-sort") for th in page.locator("tr.heads th").all()
                    if th.is_visible()]

        def spans():
            return sum(int(th.get_attribute("colspan")) for th in
                       page.locator("tr.groups th").all() if th.is_visible())

        extra = page.locator("tr.heads th.qnb-extra")
        assert extra.count() > 5 and not any(th.is_visible() for th in extra.all())
        compact = shown_heads()
        assert compact[0] == "label" and "qpu_code" not in compact and spans() == len(compact)
        page.click("#qnb-columns")
        every = shown_heads()
        assert len(every) == page.locator("tr.heads th").count() > len(compact)
        assert "qpu_code" in every and spans() == len(every)
        assert page.locator('tr.qnb-row td[data-key="qpu_code"]').first.is_visible()
        assert page.get_attribute("#qnb-columns", "aria-pressed") == "true"
        page.click("#qnb-columns")
        assert shown_heads() == compact and spans() == len(compact)

        # The CSV: one row per table row, its values those of the cells.
        with page.expect_download() as download:
            page.click("#qnb-csv")
        assert download.value.suggested_filename == "report.csv"
        path = tmp_path / "report.csv"
        download.value.save_as(path)
        csv = pd.read_csv(path, dtype=str, keep_default_na=False)
        cells = page.eval_on_selector_all("tr.qnb-row", """rs => rs.map(r => Object.fromEntries(
            Array.from(r.cells).map(td => [td.dataset.key, td.dataset.value])))""")
        assert list(csv["run"]) == page.eval_on_selector_all(
            "tr.qnb-row", "rs => rs.map(r => r.dataset.run)")

        def same(cell, field):   # numbers as numbers, flags true/True, text as text
            try:
                return float(cell) == float(field)
            except ValueError:
                return cell.lower() == field.lower()

        compared = 0
        for (_, want), got in zip(csv.iterrows(), cells):
            for key, value in got.items():
                if key == "verdict":   # the cell drops the entry id the CSV's verdict has
                    assert want[key].endswith(value) or want["status"] != "done"
                    continue
                assert same(value, want[key]), (got["label"], key, value, want[key])
                compared += 1
        assert compared == 8 * (len(compact) + len(extra.all())) - 8

        # The margin plot: every run's points and label link to its row; filtering the
        # table hides those of the rows it hides, and only those.
        def drawn():
            return page.eval_on_selector_all("#qnb-margin-plot svg a", """as => as.map(a => [
                a.getAttributeNS('http://www.w3.org/1999/xlink', 'href'),
                a.getBoundingClientRect().width > 0])""")

        runs = [r for r in report.table["run"]]
        links = drawn()
        done = [r for r, s in zip(runs, report.table["status"]) if s == "done"]
        assert {h[len("#run-"):] for h, _ in links} >= set(done)
        assert all(shown for _, shown in links)
        page.fill("#qnb-filter", "adapt")
        kept = set(page.eval_on_selector_all("tr.qnb-row:not([hidden])",
                                             "rs => rs.map(r => r.dataset.run)"))
        assert len(kept) == 2
        for href, shown in drawn():
            assert shown == (href[len("#run-"):] in kept), href
        page.fill("#qnb-filter", "")
        assert all(shown for _, shown in drawn())
    finally:
        page.close()
    assert not problems, problems
    assert not remote, f"the page loaded from the network: {remote}"


def test_the_header_says_when_the_runs_differ():
    """Two environments and two toolkit commits among the runs: each named with its
    run count, and a warning line; a run that recorded none is counted apart."""
    import pandas as pd

    from qencode_nb.readout.report_header import environments, toolkit

    table = pd.DataFrame({
        "numeric_fingerprint": ["da1c3e3814f8", "da1c3e3814f8", "647bb3867ac3", None],
        "blas_profile": ["portable", "portable", "reference", None],
        "cpu": ["AMD EPYC", "AMD EPYC", "Intel Xeon", None],
        "toolkit_version": ["0.1.0", "0.1.0", "0.1.0", None],
        "toolkit_commit": ["7a9c4fc4bbc2", "7a9c4fc4bbc2", "000d50f1+dirty", None]})
    env = [(line["text"], line["warn"]) for line in environments(table)]
    assert env == [("numeric fingerprint da1c3e3814f8 (portable kernels, AMD EPYC; 2 runs)", False),
                   ("numeric fingerprint 647bb3867ac3 (reference kernels, Intel Xeon; 1 run)", False),
                   ("no numeric fingerprint recorded by 1 run", False),
                   ("the runs differ: 2 numeric fingerprints (kernels, CPU or libraries); "
                    "compare energies bit for bit only within one", True)]
    same = environments(table.iloc[:2])
    assert [line["warn"] for line in same] == [False] and "differ" not in same[0]["text"]
    tool = toolkit(table, written_by=("0.1.0", None))
    assert tool[0] == {"text": "audits run by qencode-nb 0.1.0 at commit 7a9c4fc (2 runs); "
                       "qencode-nb 0.1.0 at commit 000d50f (+dirty: uncommitted changes) "
                       "(1 run); not recorded by 1 run", "warn": True}
    assert tool[1]["text"] == "report written by qencode-nb 0.1.0 at commit unknown"


def test_paths_are_shortened_to_a_folder_the_reader_can_place(tmp_path):
    from qencode_nb.paths import known_folders, scrub

    runs, db = tmp_path / "runs", tmp_path / "shared" / "db"
    folders = known_folders(runs, [str(db / "H2.json")])
    text = (f'entry = "{db}/H2.json"; notebook {runs}/H2.ipynb; stack {Path.home()}/.cache/x; '
            f"other /usr/lib/python3/os.py; kept: 1/2 pass/fail https://example.org/a/b </div> "
            "data:image/png;base64,AAA+/bcd/ef== ./relative/path")
    assert scrub(text, folders) == (
        'entry = "…/db/H2.json"; notebook …/runs/H2.ipynb; stack ~/.cache/x; '
        "other …/python3/os.py; kept: 1/2 pass/fail https://example.org/a/b </div> "
        "data:image/png;base64,AAA+/bcd/ef== ./relative/path")


def test_an_entry_file_is_the_release_s_only_byte_for_byte():
    """release_of: the registry's SHA-256 of ``db/<name>`` (data/qencode-v4/registry.txt)."""
    import hashlib

    from qencode_nb.entry.database import RELEASE, release_of

    digest = hashlib.sha256(H2_JW_HEA.read_bytes()).hexdigest()
    assert release_of(H2_JW_HEA.name, digest) == RELEASE
    assert release_of(H2_JW_HEA.name, "0" * 64) is None          # changed bytes
    assert release_of(f"{BROKEN}.json", digest) is None           # not a release file
    assert release_of(H2_JW_HEA.name, None) is None               # no hash recorded
