"""Optimiser study, the notebook collector, the ADAPT operator table and figures.ipynb.

Real runs: the shared H2 JW/UCCSD entry (one parameter; recorded COBYLA, 20 evaluations)
re-run with COBYLA and L-BFGS-B, two repeats each at 1 BLAS thread (~5-10 s per run),
plus one audit that fails (its entry file does not exist).  Measured here: COBYLA
-1.131286510226469 Ha (1.05e-06 mHa, nfev 20), L-BFGS-B -1.1312865112742871 Ha
(0 mHa, nfev 15 = 5 steps x (1 + 2 x 1 parameter)), Adam(lr=0.05) -1.1306758343548837 Ha
(0.611 mHa, nfev 1: early stop after its first step); repeats bit for bit identical.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
import yaml

from conftest import (ERROR_LABEL_GLYPHS, H2_JW_UCCSD, ROOT, SHARED_DB,
                      check_summary_against_table, svg_has_text, svg_texts)
from qencode_nb.readout.collect import (COLLECT_COLUMNS, adapt_operator_table, audit_table, collect,
                                resolve_path)
from qencode_nb.errors import EntryError, ParameterError
from qencode_nb.readout.plots import adapt_operator_plot, adapt_plot_refusal
from qencode_nb.notebook.record import read_records
from qencode_nb.studies.optimizers import optimizers_study
from qencode_nb.readout.summaries import finding, summarise

QENCODE_NB = Path(sys.executable).parent / "qencode-nb"
H4_ADAPT = SHARED_DB / "H4_ccpvdz_JW_ADAPT_v4_tapered__sha256_39f9134a722ad612.json"
MISSING = "/nonexistent/qencode-nb-test/no_such_entry.json"


@pytest.fixture(scope="module")
def opt_run(tmp_path_factory):
    """The optimiser study's folder: 4 done runs, then one failed audit beside them."""
    import papermill

    out = tmp_path_factory.mktemp("optimizers")
    table = optimizers_study(str(H2_JW_UCCSD), ("COBYLA", "L-BFGS-B"), repeats=2,
                             out_dir=out, progress=False)
    with pytest.raises(papermill.PapermillExecutionError):
        papermill.execute_notebook(str(ROOT / "notebooks" / "audit.ipynb"),
                                   str(out / "missing_entry.ipynb"),
                                   parameters={"entry": MISSING, "mode": "rerun"},
                                   progress_bar=False, cwd=str(ROOT))
    return out, table


@pytest.mark.notebook
def test_optimizers_study_measures_each_optimiser(opt_run):
    out, table = opt_run
    assert list(table.columns) == ["optimizer", "repeat", "measured_threads", "engine",
                                   "energy", "energy_hex", "error_mha", "nfev", "seconds",
                                   "status", "failure", "notebook", "threshold_mha"]
    assert (table["engine"] == "default.qubit").all()
    assert list(table["optimizer"]) == ["COBYLA", "COBYLA", "L-BFGS-B", "L-BFGS-B"]
    assert list(table["repeat"]) == [0, 1, 0, 1]
    assert (table["status"] == "done").all(), table["failure"].tolist()
    assert (table["measured_threads"] == 1).all() and (table["seconds"] > 0).all()
    assert [Path(p).stem for p in table["notebook"]] == [
        f"{H2_JW_UCCSD.stem}__{slug}__r{r}" for slug in ("cobyla", "l-bfgs-b") for r in (0, 1)]
    published_nfev = json.loads(H2_JW_UCCSD.read_text())["results"]["vqe"]["nfev"]
    for _, row in table.iterrows():
        r = read_records(row["notebook"])
        # Every value comes from the run's records; the run used the optimiser asked for
        # and tier 1 says so.
        assert row["nfev"] == r["rerun"]["nfev"] and row["energy"] == r["rerun_energy"]
        assert row["error_mha"] == r["error_mha"] and row["threshold_mha"] == r["threshold_mha"]
        assert float.fromhex(row["energy_hex"]) == row["energy"]
        used = {"COBYLA": "cobyla", "L-BFGS-B": "l-bfgs-b"}[row["optimizer"]]
        assert r["rerun"]["config"]["optimizer"] == used
        field = next(f for f in r["fields"] if f["field"] == "optimizer")
        assert field["status"] == ("equal" if used == "cobyla" else "differs")
        if used == "cobyla":
            assert row["nfev"] == published_nfev == 20
        else:   # QEncode's count: steps x (1 + 2 x parameters)
            assert row["nfev"] % (1 + 2 * r["rerun"]["config"]["num_params"]) == 0
            assert "optimizer: declared 'cobyla', re-run used 'l-bfgs-b'" in \
                r["tiers"]["procedure"]["reasons"]
        assert row["error_mha"] < row["threshold_mha"]
    for name, g in table.groupby("optimizer"):
        assert g["energy_hex"].nunique() == 1, f"{name}: 1-thread repeats must be bit-identical"
    assert table.loc[table["optimizer"] == "L-BFGS-B", "error_mha"].max() < 1e-3
    csv = pd.read_csv(out / "optimizers.csv")
    assert list(csv["energy_hex"]) == list(table["energy_hex"])
    assert list(csv["nfev"]) == list(table["nfev"])


@pytest.mark.notebook
def test_optimizers_summary_finding_and_figure(opt_run):
    out, table = opt_run
    summary = summarise(table, "optimizer")
    check_summary_against_table(table, summary, "optimizer")
    for _, s in summary.iterrows():
        g = table[table["optimizer"] == s["optimizer"]]
        assert s["median_nfev"] == g["nfev"].median()
        assert s["median_seconds"] == g["seconds"].median()
        assert s["spread_mha"] == 0.0 and s["n_distinct_energies"] == 1
    text = finding(summary, "optimizer")
    for _, s in summary.iterrows():   # error, nfev and time side by side, from the summary
        assert (f"{s['optimizer']}: error {s['median_error_mha']:.3g} mHa, "
                f"nfev {s['median_nfev']:.4g}, {s['median_seconds']:.3g} s "
                "(2/2 runs bit-identical)") in text
    fewest = summary.loc[summary["median_nfev"].idxmin(), "optimizer"]
    assert f"fewest evaluations {fewest}" in text
    for suffix in (".png", ".pdf", ".svg"):
        assert (out / f"optimizers{suffix}").stat().st_size > 5_000
    texts = svg_texts(out / "optimizers.svg")
    for label in ("nfev (QEncode count, evaluations)", "wall time per run (s)", "optimiser",
                  "threshold 10 mHa"):
        assert label in texts, label
    assert svg_has_text(out / "optimizers.svg", *ERROR_LABEL_GLYPHS)


def test_optimizers_study_refuses_bad_input_before_any_run(tmp_path):
    with pytest.raises(EntryError, match="ADAPT entry"):
        optimizers_study(str(H4_ADAPT), ("COBYLA",), out_dir=tmp_path, progress=False)
    with pytest.raises(ParameterError, match="^optimizer 'Nelder-Mead' is not accepted; "
                                             "accepted: COBYLA"):
        optimizers_study(str(H2_JW_UCCSD), ("Nelder-Mead",), out_dir=tmp_path,
                         progress=False)
    with pytest.raises(ParameterError, match="optimizers is empty"):
        optimizers_study(str(H2_JW_UCCSD), (), out_dir=tmp_path, progress=False)
    with pytest.raises(ParameterError, match="accepted: an integer >= 1"):
        optimizers_study(str(H2_JW_UCCSD), repeats=0, out_dir=tmp_path, progress=False)
    assert not list(tmp_path.glob("*.ipynb")), "bad input is refused before any run"
    proc = subprocess.run([str(QENCODE_NB), "study", "optimizers", str(H4_ADAPT),
                           "--optimizers", "COBYLA", "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=str(ROOT))
    assert proc.returncode == 2 and "ADAPT entry" in proc.stderr


@pytest.mark.notebook
def test_collect_keeps_done_failed_and_partial_runs(opt_run, tmp_path):
    out, table = opt_run
    for nb in out.glob("*.ipynb"):
        shutil.copy(nb, tmp_path / nb.name)
    # A partial run: a done notebook cut before its last cell (no done record, no error).
    cut = nbformat.read(table["notebook"][0], as_version=4)
    cut.cells = cut.cells[:-1]
    nbformat.write(cut, str(tmp_path / "cut_short.ipynb"))
    got = collect(tmp_path)
    assert len(got) == 6 and list(got.columns[:len(COLLECT_COLUMNS)]) == list(COLLECT_COLUMNS)
    rows = got.set_index(got["notebook"].map(lambda p: Path(p).stem))

    failed = rows.loc["missing_entry"]
    assert failed["status"] == "failed" and failed["done"] == False  # noqa: E712
    assert failed["exception"] == True  # noqa: E712  papermill's flag
    assert failed["parameters.entry"] == MISSING
    assert failed["error.type"] == "EntryError" and MISSING in failed["error.message"]
    assert failed["failure"] == (f"{failed['error.stage']}: {failed['error.type']}: "
                                 f"{failed['error.message']}")
    partial = rows.loc["cut_short"]
    assert partial["status"] == "partial" and partial["failure"] == \
        "the notebook has no done record"

    for _, row in table.iterrows():
        c = rows.loc[Path(row["notebook"]).stem]
        r = read_records(row["notebook"])
        assert c["status"] == "done" and c["done"] == True and pd.isna(c["failure"])  # noqa: E712
        assert c["parameters.optimizer"] == row["optimizer"]
        assert c["parameters.blas_threads"] == 1 and c["parameters.mode"] == "rerun"
        # Records flattened one level: a dict becomes name.key, other values stay.
        assert c["rerun.nfev"] == row["nfev"] and c["rerun_energy"] == row["energy"]
        assert c["rerun.config"] == r["rerun"]["config"] and c["verdict"] == r["verdict"]
        assert c["duration"] == nbformat.read(row["notebook"], as_version=4) \
            .metadata.papermill.duration > 0
    # audit_table still reads the same folder, the failed run included.
    audit = audit_table(tmp_path)
    assert sorted(audit["status"]) == sorted(["done"] * 4 + ["failed"] * 2)
    with pytest.raises(FileNotFoundError):
        collect(tmp_path / "absent")


def _adapt_counts_from_files() -> dict:
    counts = {}
    for path in sorted(SHARED_DB.glob("*.json")):
        raw = json.loads(path.read_text())
        meta = raw["encoding"].get("adapt_metadata")
        if raw["encoding"]["ansatz_type"].lower() == "adapt":
            counts[raw["problem"]["name"]] = len(meta["selected_operator_indices"])
    return counts


def test_adapt_operator_table_and_plot(tmp_path, monkeypatch):
    table = adapt_operator_table(SHARED_DB)
    expected = _adapt_counts_from_files()
    assert dict(zip(table["system"], table["n_operators"])) == expected
    assert set(expected) == {"H4", "H6", "H8", "H10", "N2", "benzene", "H2CO"}
    # Read by hand from the JSON files: H10 selected 300 operators, its cap (max_operators).
    assert expected["H10"] == 300 and expected["H4"] == 1
    chains = table[table["hydrogen_chain"]]
    assert list(chains["system"]) == ["H4", "H6", "H8", "H10"]
    assert list(chains["n_h_atoms"]) == list(chains["active_orbitals"]) == [4, 6, 8, 10]
    assert list(chains["n_operators"]) == [expected[s] for s in ("H4", "H6", "H8", "H10")]
    assert list(table.loc[table["capped"], "system"]) == ["H10"]
    assert not table.loc[~table["hydrogen_chain"], "system"].isin(["H4", "H6"]).any()
    adapt_operator_plot(table, tmp_path / "adapt")
    texts = svg_texts(tmp_path / "adapt.svg")
    for label in ("selected ADAPT operators", "system size: H atoms = active spatial orbitals",
                  "H10: 300", "benzene"):
        assert label in texts, label
    assert (tmp_path / "adapt.png").stat().st_size > 5_000
    # One hydrogen chain is a point, not a trend: refused, saying what to fetch.
    one_chain = table[table["system"].isin(["H6", "N2"])]
    assert "qencode-nb data fetch" in adapt_plot_refusal(one_chain)
    with pytest.raises(ValueError, match="at least 2 hydrogen chains; this folder holds 1"):
        adapt_operator_plot(one_chain, tmp_path / "one")
    assert not (tmp_path / "one.png").exists()
    # The default db of figures.ipynb is meant from the repository root; found from anywhere.
    monkeypatch.chdir(tmp_path)
    assert resolve_path("../shared/qencode-v4/db") == SHARED_DB.resolve()
    with pytest.raises(FileNotFoundError, match="neither"):
        resolve_path("no/such/folder")


@pytest.mark.notebook
def test_figures_notebook_with_stock_papermill(opt_run, tmp_path):
    import papermill

    out, table = opt_run
    figs = tmp_path / "figures"
    no_csv = tmp_path / "empty-study"
    no_csv.mkdir()
    out_nb = tmp_path / "figures.ipynb"
    papermill.execute_notebook(str(ROOT / "notebooks" / "figures.ipynb"), str(out_nb),
                               parameters={"sweep_dir": str(out), "optimizers_dir": str(out),
                                           "kernels_dir": str(no_csv), "out": str(figs),
                                           "db": str(SHARED_DB), "threads_dir": None,
                                           "environments_dir": None},
                               progress_bar=False, cwd=str(ROOT))
    r = read_records(out_nb)
    assert r["done"] is True
    assert set(r["figures"]) == {"margins", "optimizers", "adapt_operators"}
    assert r["examples"] == [], "every folder given: nothing from the bundled examples"
    for name, paths in r["figures"].items():
        assert paths == [str(figs / f"{name}.{s}") for s in ("png", "pdf", "svg")]
        assert r[f"figure.{name}"] == paths and all(Path(p).stat().st_size > 5_000
                                                    for p in paths)
        check_files(figs / name)
    # Each figure is shown with its caption below it (Markdown), never a title.
    shown = _displayed(out_nb)
    for name in r["figures"]:
        caption = (figs / f"{name}.caption.md").read_text().strip()
        assert ("image/png", None) in shown and ("text/markdown", caption) in shown, name
        i = shown.index(("text/markdown", caption))
        assert shown[i - 1] == ("image/png", None), f"{name}: the caption is not under its figure"
    assert r["skipped"] == {"threads": "threads_dir is None",
                            "kernels": f"no {no_csv / 'kernels.csv'}",
                            "environments": "environments_dir is None"}
    assert r["margins_entries"] == len(audit_table(out)) == 5
    assert svg_has_text(figs / "margins.svg", *ERROR_LABEL_GLYPHS)
    assert "wall time per run (s)" in svg_texts(figs / "optimizers.svg")
    adapt = pd.DataFrame(r["adapt_operators"])
    assert dict(zip(adapt["system"], adapt["n_operators"])) == _adapt_counts_from_files()


@pytest.mark.notebook
def test_figures_notebook_runs_on_its_defaults_with_only_the_repository(tmp_path):
    """What a Binder user gets: figures.ipynb with its defaults, started where
    JupyterLab starts it (notebooks/); only the output folder is redirected here."""
    import papermill

    out_nb = tmp_path / "figures.ipynb"
    papermill.execute_notebook(str(ROOT / "notebooks" / "figures.ipynb"), str(out_nb),
                               parameters={"out": str(tmp_path / "figs")},
                               progress_bar=False, cwd=str(ROOT / "notebooks"))
    r = read_records(out_nb)
    # Every figure is drawn (issue 51, item 5): the study and margin figures from the
    # bundled example runs (data/example-runs), said above the figures; the ADAPT figure
    # from the bundled entries' two hydrogen chains, H4 and H6.
    assert r["done"] is True and r["skipped"] == {}
    assert set(r["figures"]) == {"margins", "threads", "kernels", "optimizers",
                                 "environments", "adapt_operators"}
    assert r["examples"] == ["margins", "threads", "kernels", "optimizers", "environments"]
    adapt = pd.DataFrame(r["adapt_operators"])
    assert list(adapt["system"]) == ["H4", "H6"] and adapt["hydrogen_chain"].all()
    assert dict(zip(adapt["system"], adapt["n_operators"])) == {
        s: n for s, n in _adapt_counts_from_files().items() if s in ("H4", "H6")}
    notes = [text for kind, text in _displayed(out_nb) if kind == "text/markdown"]
    assert any("**Drawn from the bundled example runs**" in t and "not results" in t
               for t in notes), notes
    assert not any("**Not drawn:**" in t for t in notes), notes


@pytest.mark.notebook
def test_threading_notebook_runs_an_optimizers_study(tmp_path):
    import papermill

    out_nb = tmp_path / "threading.ipynb"
    papermill.execute_notebook(str(ROOT / "notebooks" / "threading.ipynb"), str(out_nb),
                               parameters={"entry": str(H2_JW_UCCSD), "study": "optimizers",
                                           "optimizers": ["L-BFGS-B"], "repeats": 1,
                                           "out": str(tmp_path / "runs")},
                               progress_bar=False, cwd=str(ROOT))
    r = read_records(out_nb)
    assert r["done"] is True and r["by"] == "optimizer" and r["failed"] == {}
    table = pd.DataFrame(r["table"])
    assert list(table["optimizer"]) == ["L-BFGS-B"] and list(table["measured_threads"]) == [1]
    assert table["nfev"][0] == read_records(table["notebook"][0])["rerun"]["nfev"]
    assert r["finding"] == finding(summarise(table, "optimizer"), "optimizer")
    assert r["table_csv"].endswith("optimizers.csv") and all(Path(p).is_file()
                                                             for p in r["figure"])


@pytest.mark.notebook
def test_cli_study_optimizers_adam(tmp_path):
    out = tmp_path / "cli"
    proc = subprocess.run([str(QENCODE_NB), "study", "optimizers", str(H2_JW_UCCSD),
                           "--optimizers", "Adam(lr=0.05)", "--repeats", "1",
                           "--out", str(out)],
                          capture_output=True, text=True, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(out / "optimizers.csv")
    assert list(table["optimizer"]) == ["Adam(lr=0.05)"] and table["status"][0] == "done"
    r = read_records(out / table["notebook"][0])          # relative to the study's folder
    assert r["rerun"]["config"]["optimizer"] == "adam" and table["nfev"][0] == r["rerun"]["nfev"]
    assert finding(summarise(table, "optimizer"), "optimizer") in proc.stdout
    assert "median_nfev" in proc.stdout and "median_seconds" in proc.stdout
    assert (out / "optimizers.png").is_file() and (out / "optimizers.svg").is_file()


def test_optimizers_parameter_file_names_notebook_parameters():
    import papermill

    from qencode_nb.entry import vocabulary

    declared = set(papermill.inspect_notebook(str(ROOT / "notebooks" / "threading.ipynb")))
    params = yaml.safe_load((ROOT / "params" / "studies" / "optimizers_lih.yaml").read_text())
    assert set(params) <= declared, set(params) - declared
    assert params["entry"] == "lih" and params["study"] == "optimizers"
    assert [vocabulary.optimizer(o).name for o in params["optimizers"]] == \
        ["cobyla", "l-bfgs-b", "adam"]


def test_collect_reads_only_audit_record_names_and_keeps_its_columns():
    """The records audit_table reads are names of verdict.records.AUDIT_RECORDS (the one
    list); summary.csv's columns stay as they are (tools outside read them)."""
    from qencode_nb.readout.collect import AUDIT_COLUMNS, COPIED_RECORDS, READ_RECORDS
    from qencode_nb.verdict.records import AUDIT_RECORDS, ERROR_RECORD

    assert set(READ_RECORDS + COPIED_RECORDS) - {ERROR_RECORD} <= set(AUDIT_RECORDS)
    assert COPIED_RECORDS == (
        "entry_id", "mode", "blas_threads", "rerun_energy", "error_mha", "published_error_mha",
        "movement_mha", "threshold_mha", "margin_regenerated", "margin_published",
        "certified", "certification_change", "fragile", "bit_identical", "verdict")
    assert AUDIT_COLUMNS == (
        "notebook", "entry_id", "status", "failure", "seconds", "mode", "blas_threads",
        "kernel", "tier_procedure", "tier_certification", "tier_bit_identical",
        "undeclared", "fields_differ", "integrity", "replay_status", "replay_abs_delta_ha",
        "replay_identical", "terms_match", "n_terms", "n_terms_stored", "max_abs_dcoeff",
        "ground_energy_diff", "fingerprint_ha", "hamiltonian_source_inferred",
        "hamiltonian_source_recorded", "cache_hit", "rerun_energy", "rerun_nfev",
        "published_nfev", "rerun_restarts_run", "error_mha", "published_error_mha",
        "movement_mha", "threshold_mha", "margin_regenerated", "margin_published",
        "certified", "published_certified", "certification_change", "fragile",
        "bit_identical", "delta_ha", "ulps", "findings", "verdict", "engine_used",
        "replay_engine", "active_space_warning", "blas_profile",
        "numeric_fingerprint", "hamiltonian_status",
        "hamiltonian_source", "stack", "stack_key",
        "stack_not_used", "stack_lock", "stack_resolved_at")   # new columns are appended


# ------------------------------------------------------------------ figures a journal takes
def _displayed(notebook) -> list[tuple[str, str | None]]:
    """What an executed notebook displayed, in order: ``("image/png", None)`` per image,
    ``("text/markdown", text)`` per Markdown output."""
    shown = []
    for cell in nbformat.read(str(notebook), as_version=4).cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                shown.append(("image/png", None))
            if "text/markdown" in data:
                shown.append(("text/markdown", "".join(data["text/markdown"]).strip()))
    return shown


# Issue 25, item 5: every figure in one style (qencode_nb.figstyle), written as PNG at
# 300 dpi, PDF and SVG with real text, no status line as a title (the caption says it),
# legends inside the axes or below them, labels readable (>= 8 pt, at most 45 degrees).

PANEL_TITLE = re.compile(r"(\([a-z]\))?")   # a panel letter is the only title allowed


def check_files(stem, fig=None) -> None:
    """The three files of ``save_figure``: PNG 300 dpi, PDF with its page and embedded
    TrueType fonts, SVG with real text; with ``fig``, the PNG is the figure's size and
    its axis labels are <text> in the SVG (not glyph paths)."""
    from PIL import Image

    png, pdf, svg = (Path(f"{stem}.{s}") for s in ("png", "pdf", "svg"))
    with Image.open(png) as im:
        assert im.info["dpi"] == pytest.approx((300, 300), abs=0.5), (png, im.info.get("dpi"))
        if fig is not None:
            assert im.width == pytest.approx(fig.get_figwidth() * 300, rel=0.25)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page\b(?!s)", data)) == 1
    assert b"/FontFile2" in data and b"/Type3" not in data, "fonts: TrueType, not Type 3"
    text = svg.read_text()
    assert 'id="DejaVuSans-' not in text, "glyphs drawn as paths"
    texts = svg_texts(svg)
    assert texts, "an SVG without <text>"
    for ax in fig.axes if fig is not None else ():
        for label in (ax.get_xlabel(), ax.get_ylabel()):
            if "$" in label:   # the one math label: |E - E_exact| (mHa)
                assert svg_has_text(svg, *ERROR_LABEL_GLYPHS), (svg, label)
            elif label:
                assert label in texts, (svg, label)


def check_layout(fig) -> None:
    """No title but a panel letter; every text >= 8 pt and at most 45 degrees; no two
    tick labels of an axis overlap; each legend inside its axes or below all axes."""
    from matplotlib.text import Text

    assert fig.get_suptitle() == ""
    for ax in fig.axes:
        for loc in ("left", "center", "right"):
            assert PANEL_TITLE.fullmatch(ax.get_title(loc=loc)), ax.get_title(loc=loc)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)   # a closed pyplot figure keeps no drawing canvas
    canvas.draw()
    renderer = canvas.get_renderer()
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip():
            assert t.get_fontsize() >= 8, (t.get_text(), t.get_fontsize())
            assert min(t.get_rotation() % 180, 180 - t.get_rotation() % 180) <= 45 or \
                t in {ax.yaxis.label for ax in fig.axes}, (t.get_text(), t.get_rotation())
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            boxes = [t.get_window_extent(renderer) for t in axis.get_ticklabels()
                     if t.get_visible() and t.get_text()]
            for a, b in zip(boxes, boxes[1:]):
                assert not a.overlaps(b.shrunk(0.98, 0.98)), (axis, a, b)
    axes_boxes = [ax.get_window_extent(renderer) for ax in fig.axes]
    legends = [(ax.get_legend(), ax.get_window_extent(renderer)) for ax in fig.axes
               if ax.get_legend()] + [(leg, None) for leg in fig.legends]
    assert legends, "a figure without a legend"
    fig_box = fig.get_window_extent(renderer)
    for leg, own in legends:
        box = leg.get_window_extent(renderer)
        inside = own is not None and (box.x0 >= own.x0 - 1 and box.x1 <= own.x1 + 1
                                      and box.y0 >= own.y0 - 1 and box.y1 <= own.y1 + 1)
        below = (box.y1 <= min(a.y0 for a in axes_boxes) + 1
                 and box.x0 >= fig_box.x0 and box.x1 <= fig_box.x1)
        assert inside or below, f"legend at {box} beside the axes {axes_boxes}"


def test_every_figure_is_a_journal_figure(opt_run, tmp_path):
    """Real figures of real executed audits (the optimiser study's runs: the margin
    plot, the study figure, a robustness figure of its runs, the audit's own figure)
    and of the shared database (the ADAPT figure)."""
    from qencode_nb.figstyle import read_caption, save_figure
    from qencode_nb.readout.plots import margin_plot, study_plot
    from qencode_nb.readout.robustness_plot import robustness_plot
    from qencode_nb.readout.robustness_tables import summarise_robustness
    from qencode_nb.verdict.figure import error_trace_caption, error_trace_plot

    out, table = opt_run
    audits = audit_table(out)
    done = audits[audits["status"] == "done"]
    runs = pd.DataFrame({"entry": done["entry_id"], "status": "ok",
                         "perturbation": [Path(n).stem for n in done["notebook"]],
                         **{c: done[c] for c in ("error_mha", "certified", "published_error_mha",
                                                 "published_certified", "margin_published",
                                                 "threshold_mha")}})
    records = read_records(table["notebook"][0])
    figures = {
        "margins": margin_plot(audits, tmp_path / "margins"),
        "optimizers": study_plot(table, "optimizers", tmp_path / "optimizers"),
        "threads": study_plot(table.assign(threads=table["repeat"] + 1), "threads",
                              tmp_path / "threads"),
        "robustness": robustness_plot(runs, summarise_robustness(runs), tmp_path / "robustness"),
        "adapt": adapt_operator_plot(adapt_operator_table(SHARED_DB), tmp_path / "adapt"),
        "audit": error_trace_plot(records),
    }
    save_figure(figures["audit"], tmp_path / "audit", error_trace_caption(records))
    for name, fig in figures.items():
        check_files(tmp_path / name, fig)
        check_layout(fig)
        caption = read_caption(tmp_path / name)
        assert caption.startswith("**") and len(caption) > 80, (name, caption)
    # What the titles used to say is the caption's, from the same tables.
    assert read_caption(tmp_path / "margins").endswith(
        f"{len(audits)} entries, {len(done)} re-run; fragile: 0 by published margin, 0 by "
        "the re-run.")
    assert f"{len(table)} runs, 2 optimisers." in read_caption(tmp_path / "optimizers")
    assert "1 entry, 4/4 runs ok, 0 with certification changed" in \
        read_caption(tmp_path / "robustness")
    assert "20 energy evaluations" in read_caption(tmp_path / "audit")
    assert "H2 JW UCCSD 93a0" in read_caption(tmp_path / "audit")
