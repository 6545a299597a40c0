"""``qencode-nb report``: one self-contained HTML page of a folder of executed audits
(qencode_nb/readout/report.py, report_tables.py; issue 15, items 4 and 6).

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

    from qencode_nb.readout.collect import audit_notebooks, audit_table, notebook_kind

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
    assert failed[0].select_one("div.failure").get_text() == reason
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
    assert soup.select_one("#qnb-robustness-plot") is None   # no robustness study here
    ids = [t["id"] for t in soup.find_all(id=True)]
    assert len(ids) == len(set(ids)), "duplicate ids on the page"
    heads = [th["data-sort"] for th in soup.select("table#qnb-report th[data-sort]")]
    assert {"margin_published", "margin_regenerated", "error_mha", "tier_procedure",
            "qpu_code"} <= set(heads)
    assert "fragile_measured" not in heads   # shown only with a robustness study


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
            assert badge["title"] == want[q]["reason"]
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
    problems, remote = [], []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: remote.append(r.url)
            if not r.url.startswith(("file:", "data:", "about:")) else None)
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
