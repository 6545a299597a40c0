"""A QEncode v4 dissociation curve audited point by point (issue 26, item 2):
``qencode_nb.studies.curve.audit_curve``, ``qencode-nb curve`` and ``notebooks/curve.ipynb``.

Reference values are the curve file's own numbers (``vqe``, ``gap_mha``, ``n_ops``,
``casci``).  The regenerated ADAPT energy of a point agrees with the published one when
they are within :data:`qencode_nb.rules.STRICT_REPRODUCTION_HA` (1e-6 Ha, QEncode's strict
reproduction tolerance) and select the same number of operators; on H2 [2,2] (one
tapered qubit, one operator) they agree to ~1e-8 Ha.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT
from qencode_nb.errors import ParameterError
from qencode_nb.rules import STRICT_REPRODUCTION_HA

CURVES = ROOT.parent / "shared" / "qencode-history" / "releases" / "v4" / "curves"
H2_SHARED = CURVES / "h2_dissociation.json"
H2_BUNDLED = (ROOT / "data" / "qencode-history" / "releases" / "v4" / "curves"
              / "h2_dissociation.json")
#: Three points across the H2 curve: compressed, near equilibrium, stretched (Angstrom).
H2_POINTS = [0.4, 0.693, 2.6]


def _shared(path: Path) -> Path:
    if not path.is_file():
        pytest.fail(f"the shared QEncode curve is missing: {path}")
    return path


def _figure_checks():
    """``check_files`` and ``check_layout``: the journal-figure checks of
    tests/readout/test_figures.py."""
    spec = importlib.util.spec_from_file_location(
        "curve_figure_checks", ROOT / "tests" / "readout" / "test_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.check_files, module.check_layout


@pytest.fixture(scope="module")
def h2_run(tmp_path_factory):
    from qencode_nb.studies.curve import audit_curve

    out = tmp_path_factory.mktemp("h2-curve")
    return audit_curve(_shared(H2_SHARED), engine="fast", out=out, points=H2_POINTS), out


def test_h2_curve_regenerates_the_published_points(h2_run):
    """Each point rebuilt (H2 cc-pVDZ [2,2], CASSCF orbitals, JW, Z2 tapering) and re-run
    with ADAPT: energy within 1e-6 Ha of the file's ``vqe``, the same operator count,
    CASCI within 1e-6 Ha of the file's, certification unchanged."""
    from qencode_nb.studies.curve import CSV_COLUMNS

    result, out = h2_run
    published = {p["R"]: p for p in json.loads(H2_SHARED.read_text())["points"]}
    table = pd.read_csv(out / "curve.csv", float_precision="round_trip")
    assert tuple(table.columns) == CSV_COLUMNS
    assert table["R"].tolist() == H2_POINTS
    assert table["error"].isna().all()
    for _, row in table.iterrows():
        point = published[row["R"]]
        assert row["energy_published"] == point["vqe"]
        assert abs(row["energy_regenerated"] - point["vqe"]) <= STRICT_REPRODUCTION_HA
        assert abs(row["casci_regenerated"] - point["casci"]) <= 1e-6
        assert row["n_ops_regenerated"] == point["n_ops"] == 1
        assert row["gap_published_mha"] == point["gap_mha"]
        assert row["gap_regenerated_mha"] < 1e-3          # mHa
    assert table["agrees"].all() and not table["changed"].any()
    assert table["certified_published"].all() and table["certified_regenerated"].all()
    assert result.changed == []
    assert "3 agree" in result.report() and "0 certification changes" in result.report()


def test_h2_curve_records_every_assumption_per_point(h2_run):
    result, out = h2_run
    records = json.loads((out / "curve_points.json").read_text())
    assert records["active_space"] == [2, 2]
    # measured, not requested: the tests' process runs 1 BLAS thread (conftest.py)
    assert records["blas"]["threads"] == 1 and "numpy" in records["blas"]["kernels"]
    for rec in records["points"]:
        undeclared = rec["undeclared"]
        for name in ("mapping", "tapering", "adapt.gradient_threshold", "adapt.max_operators",
                     "certification_threshold_ha", "seed", "geometry", "active_space"):
            assert undeclared[name]["source"], name
        assert undeclared["mapping"]["used"] == "jordan_wigner"
        assert undeclared["adapt.max_operators"]["used"] == 40
        assert undeclared["adapt.gradient_threshold"]["used"] == 1e-3
        assert undeclared["seed"]["used"] == 42
        assert undeclared["certification_threshold_ha"]["used"] == 0.01
        assert "mapping" in rec["row"]["undeclared"].split(";")


def test_h2_curve_figure_is_a_journal_figure(h2_run, tmp_path):
    from qencode_nb.figstyle import read_caption
    from qencode_nb.readout.curve_plot import curve_plot

    result, out = h2_run
    check_files, check_layout = _figure_checks()
    assert [p.name for p in result.figure] == ["curve.png", "curve.pdf", "curve.svg"]
    assert all(p.is_file() and p.stat().st_size > 0 for p in result.figure)
    fig = curve_plot(result.table, tmp_path / "curve", result.label, "fast")
    check_files(tmp_path / "curve", fig)
    check_layout(fig)
    caption = read_caption(out / "curve")
    assert caption.startswith("**Dissociation curve H2 cc-pvdz [2,2] casscf")
    assert "3 points, 3 re-run, 3 agree" in caption and "no certification changed" in caption


def test_a_failing_point_is_a_row_and_the_run_goes_on(tmp_path, monkeypatch):
    """A point whose re-run raises (here a PennyLane-like error injected at R = 0.547)
    becomes a row holding the error; the next point is still re-run."""
    from qencode_nb.studies import curve as study

    real = study.audit_point

    def flaky(cf, point, *args, **kwargs):
        if point["R"] == 0.547:
            raise RuntimeError("PennyLane: injected failure")
        return real(cf, point, *args, **kwargs)

    monkeypatch.setattr(study, "audit_point", flaky)
    result = study.audit_curve(H2_BUNDLED, out=tmp_path, points="0.4,0.547")
    table = pd.read_csv(tmp_path / "curve.csv", float_precision="round_trip")
    assert table["R"].tolist() == [0.4, 0.547]
    assert pd.isna(table["error"][0]) and table["agrees"][0]
    assert table["error"][1] == "RuntimeError: PennyLane: injected failure"
    assert pd.isna(table["energy_regenerated"][1]) and pd.isna(table["changed"][1])
    assert "R=0.547 failed: RuntimeError" in result.report()
    records = json.loads((tmp_path / "curve_points.json").read_text())
    assert "injected failure" in records["points"][1]["traceback"]
    assert (tmp_path / "curve.png").is_file()          # the figure draws the points that ran


def test_cli_curve(tmp_path, capsys):
    from qencode_nb.cli import main

    assert main(["curve", str(H2_BUNDLED), "--points", "0.4", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "1 points, 1 re-run, 1 agree" in printed and "0 certification changes" in printed
    assert {"curve.csv", "curve_points.json", "curve.png", "curve.pdf", "curve.svg",
            "curve.caption.md"} <= {p.name for p in tmp_path.iterdir()}
    # bad arguments are refused before any point: exit status 2, nothing written
    assert main(["curve", str(H2_BUNDLED), "--points", "0.5", "--out",
                 str(tmp_path / "bad")]) == 2
    assert "not on the curve" in capsys.readouterr().err
    assert not (tmp_path / "bad" / "curve.csv").exists()
    with pytest.raises(SystemExit):
        main(["curve", str(H2_BUNDLED), "--engine", "qnode"])
    # threads are pinned before any point (a bad count is refused, exit status 2)
    assert main(["curve", str(H2_BUNDLED), "--threads", "0", "--out",
                 str(tmp_path / "bad")]) == 2


def test_points_and_engine_are_checked():
    from qencode_nb.studies.curve import audit_curve, select_points
    from qencode_nb.studies.curve_points import read_curve

    cf = read_curve(H2_BUNDLED)
    assert [p["R"] for p in select_points(cf, [2.6, 0.4])] == [0.4, 2.6]
    assert len(select_points(cf, None)) == 16
    with pytest.raises(ParameterError, match="not on the curve"):
        select_points(cf, "1.2")
    with pytest.raises(ParameterError, match="accepted: fast, sector"):
        audit_curve(H2_BUNDLED, engine="qnode")


def test_geometry_rule_is_the_catalogs():
    """Diatomics on the z axis at bond length R, chains linear with spacing R, in the
    atom order of QEncode's catalog (molecules_v4.json: HF is "H ...; F ...")."""
    from qencode_nb.studies.curve_points import geometry

    assert geometry("h2", 0.735) == "H 0.0 0.0 0.0; H 0.0 0.0 0.735"
    assert geometry("hf", 0.917) == "H 0.0 0.0 0.0; F 0.0 0.0 0.917"
    assert geometry("lih", 1.6) == "Li 0.0 0.0 0.0; H 0.0 0.0 1.6"
    assert geometry("h4", 1.0) == "H 0.0 0.0 0.0; H 0.0 0.0 1.0; H 0.0 0.0 2.0; H 0.0 0.0 3.0"
    assert geometry("h6", 0.5).count("H ") == 6


def test_the_stated_active_space_is_checked_against_the_published_casci(tmp_path):
    """LiH's file states [4,4] and its published CASCI is [4,4]'s: kept.  A copy stating
    [2,2] misses the published CASCI by ~6.7 mHa, so the catalog's [4,4] is used and the
    assumption says why."""
    from qencode_nb.studies.curve_points import read_curve, resolve_active_space

    lih = _shared(CURVES / "lih_dissociation.json")
    cf = read_curve(lih)
    assert cf.active_space == (4, 4)
    used, record = resolve_active_space(cf)
    assert used == (4, 4) and record["source"].startswith("the file's active_space")
    raw = json.loads(lih.read_text())
    raw["active_space"], raw["points"] = "[2,2]", raw["points"][:1]
    (tmp_path / "lih.json").write_text(json.dumps(raw))
    used, record = resolve_active_space(read_curve(tmp_path / "lih.json"))
    assert used == (4, 4) and record["used"] == [4, 4]
    assert "states active_space [2,2]" in record["source"] and "catalog" in record["source"]


def test_bundled_curve_is_the_shared_file_with_licence_and_notice():
    folder = ROOT / "data" / "qencode-history"
    assert H2_BUNDLED.read_bytes() == _shared(H2_SHARED).read_bytes()
    licence = (folder / "LICENSE").read_text()
    assert licence == (ROOT / "data" / "qencode-v4" / "LICENSE").read_text()
    assert licence.startswith("MIT License\n") and "Copyright (c) 2026" in licence
    notice = (folder / "NOTICE").read_text()
    assert "https://github.com/qencode-benchmark/qencode-benchmark" in notice
    assert re.search(r"branch:\s+master\b", notice)
    assert "a46b4ece504335c6e3026a35b7309772ebe96a48" in notice
    assert "releases/v4/curves/h2_dissociation.json" in notice and "MIT" in notice


def test_curve_notebook_declares_the_parameters():
    import papermill

    declared = papermill.inspect_notebook(str(ROOT / "notebooks" / "curve.ipynb"))
    assert {"curve", "engine", "out", "points", "active_space", "max_operators",
            "blas_threads"} <= set(declared)
    assert declared["curve"]["default"].strip('"') == \
        "data/qencode-history/releases/v4/curves/h2_dissociation.json"


@pytest.mark.notebook
def test_curve_notebook_with_stock_papermill(tmp_path):
    """curve.ipynb runs the same function on its default, the bundled H2 curve."""
    import papermill

    from qencode_nb.notebook.record import read_records

    out_nb = tmp_path / "curve.ipynb"
    papermill.execute_notebook(str(ROOT / "notebooks" / "curve.ipynb"), str(out_nb),
                               parameters={"points": [0.4, 2.6], "out": str(tmp_path / "out")},
                               progress_bar=False, cwd=str(ROOT / "notebooks"))
    r = read_records(out_nb)
    assert r["done"] is True and r["curve_changed"] == [] and r["curve_failed"] == []
    table = pd.read_csv(tmp_path / "out" / "curve.csv", float_precision="round_trip")
    assert table["R"].tolist() == [0.4, 2.6] and table["agrees"].all()
    assert (tmp_path / "out" / "curve.svg").is_file()
