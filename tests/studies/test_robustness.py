"""qencode-nb robustness: every entry under every perturbation, measured fragility.

The real runs use the two smallest H2 entries of the shared database (1 qubit
after tapering, full mode, about 13 s a run); one study of them at 1 and 2 BLAS
threads is shared by the tests (a module fixture), and the tests that need
more runs start from a copy of its folder, so that only the new runs execute.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import AVX512_CPU, ROOT, SHARED_DB, ZEN3_CPU
from qencode_nb.errors import EntryError, ParameterError
from qencode_nb.rules import FRAGILE_MARGIN
from qencode_nb.studies.robustness import BASELINE, Perturbation, check_axes, robustness
from qencode_nb.readout.robustness_tables import (READ_RECORDS, ROBUSTNESS_COLUMNS,
                                                  SUMMARY_COLUMNS, drift_table,
                                                  summarise_robustness)

H2_JW_HEA = SHARED_DB / "H2_ccpvdz_JW_HEA_v4_tapered__sha256_67c3022f966367ed.json"
H2_JW_UCCSD = SHARED_DB / "H2_ccpvdz_JW_UCCSD_v4_tapered__sha256_93a0f8a8604d9aed.json"
QENCODE_NB = Path(sys.executable).parent / "qencode-nb"


def _row(entry, label, certified, error, *, status="ok", pub_cert=True, pub_err=9.5,
         margin=0.05, delta=None):
    return {"entry": entry, "perturbation": label, "status": status, "error_mha": error,
            "delta_ha": delta,
            "certified": certified, "published_error_mha": pub_err,
            "published_certified": pub_cert, "margin_published": margin,
            "threshold_mha": 10.0, "reason": None if status == "ok" else "RunTimeout: killed",
            "notebook": f"{entry}__{label}.ipynb"}


def test_summary_names_the_perturbation_that_lost_certification(tmp_path):
    t1, t2, t4 = (Perturbation(t, None, "python3").label for t in (1, 2, 4))
    rows = [_row("near", t1, True, 9.6), _row("near", t2, False, 10.4),
            _row("near", t4, None, None, status="failed"),
            _row("safe", t1, True, 1.0, pub_err=1.0, margin=0.9),
            _row("safe", t2, True, 3.0, pub_err=1.0, margin=0.9),
            _row("gain", t1, True, 9.0, pub_cert=False, pub_err=11.0, margin=-0.1),
            _row("gain", t2, False, 11.0, pub_cert=False, pub_err=11.0, margin=-0.1),
            _row("dead", t1, None, None, status="failed", pub_cert=None, pub_err=None,
                 margin=None)]
    table = pd.DataFrame(rows, columns=list(ROBUSTNESS_COLUMNS))
    s = summarise_robustness(table).set_index("entry")
    assert list(s.index) == ["near", "safe", "gain", "dead"]
    near, safe, gain, dead = (s.loc[e] for e in ("near", "safe", "gain", "dead"))
    assert (near["runs"], near["runs_ok"], near["runs_failed"]) == (3, 2, 1)
    assert near["certified_fraction"] == 0.5
    assert (near["error_min_mha"], near["error_median_mha"], near["error_max_mha"]) == \
        pytest.approx((9.6, 10.0, 10.4))
    assert near["fragile_measured"] is True and near["fragile"] is True
    assert near["lost_certification_in"] == "threads=2 coretype=default kernelspec=python3"
    assert near["gained_certification_in"] == ""
    # The margin calls "safe" healthy and the runs agree: neither flag.
    assert safe["fragile"] is False and safe["fragile_measured"] is False
    assert safe["certified_fraction"] == 1.0 and safe["lost_certification_in"] == ""
    assert 0.9 >= FRAGILE_MARGIN
    # Gaining certification under a perturbation is a change too; not certified, not fragile.
    assert gain["fragile_measured"] is True and gain["fragile"] is False
    assert gain["gained_certification_in"] == t1 and gain["lost_certification_in"] == ""
    # No run completed: nothing measured, nothing published recorded.
    assert dead["runs_ok"] == 0 and dead["fragile_measured"] is None
    assert pd.isna(dead["certified_fraction"]) and pd.isna(dead["error_median_mha"])
    # The summary of robustness.csv read back is the one written.
    table.to_csv(tmp_path / "robustness.csv", index=False)
    again = summarise_robustness(pd.read_csv(tmp_path / "robustness.csv"))
    pd.testing.assert_frame_equal(again.set_index("entry")[["runs_ok", "fragile_measured",
                                                            "lost_certification_in"]].fillna(""),
                                  s[["runs_ok", "fragile_measured",
                                     "lost_certification_in"]].fillna(""),
                                  check_dtype=False)


def test_the_report_names_every_entry_whose_certification_changes(tmp_path):
    """The closing lines name each entry that lost certification, each that gained it and
    each without a published certification whose runs disagree, with where."""
    from qencode_nb.studies.robustness import RobustnessResult

    on, off = (Perturbation(1, "reference", "python3", d).label for d in ("on", "off"))
    rows = [_row("lost", on, True, 9.6), _row("lost", off, False, 10.4),
            _row("gain", on, False, 11.0, pub_cert=False, pub_err=11.0, margin=-0.1),
            _row("gain", off, True, 9.0, pub_cert=False, pub_err=11.0, margin=-0.1),
            _row("open", on, True, 9.0, pub_cert=None), _row("open", off, False, 11.0,
                                                             pub_cert=None),
            _row("same", on, True, 1.0, margin=0.9), _row("same", off, True, 1.2, margin=0.9)]
    table = pd.DataFrame(rows, columns=list(ROBUSTNESS_COLUMNS))
    result = RobustnessResult(tmp_path, [Perturbation(1, "reference", "python3", d)
                                         for d in ("on", "off")], table,
                              summarise_robustness(table), drift=drift_table(table))
    text = result.report()
    assert f"entries losing certification in at least one perturbation: 1: lost ({off})" in text
    assert f"entries gaining certification in at least one perturbation: 1: gain ({off})" in text
    assert "entries without a published certification whose runs disagree on it: 1: open" \
        in text
    assert "same" not in text.split("drift counts")[0]
    assert result.to_record()["gained_certification"] == {"gain": off}


def test_drift_table_counts_as_qencode_did():
    """The four numbers of QEncode's drift report, per perturbation and overall, on rows
    whose answers are worked out by hand (threshold 10 mHa, strict tolerance 1e-6 Ha)."""
    t1, t2 = (Perturbation(t, None, "python3").label for t in (1, 2))
    rows = [
        # moves 1.5 mHa at 1 thread (8.0 + 1.5 < 10: no candidate) and 2.1 mHa at 2
        # (8.0 + 2.1 >= 10: a candidate); the error falls, it stays certified: passed.
        _row("down", t1, True, 6.5, pub_err=8.0, delta=-1.5e-3),
        _row("down", t2, True, 5.9, pub_err=8.0, delta=-2.1e-3),
        # crosses the threshold at 2 threads: lost, and a candidate (9.5 + 0.9 >= 10).
        _row("lost", t1, True, 9.5, delta=2e-10),
        _row("lost", t2, False, 10.4, delta=0.9e-3),
        # moves 3e-6 Ha at 1 thread, far from the threshold: strict exceeded, valid.
        _row("strict", t1, True, 1.003, pub_err=1.0, margin=0.9, delta=3e-6),
        _row("strict", t2, True, 1.0, pub_err=1.0, margin=0.9, delta=0.0),
        # published not certified and stays so: strict only; never a candidate.
        _row("never", t1, False, 12.0, pub_cert=False, pub_err=11.0, margin=-0.1, delta=1e-3),
        # published not certified, certified at 1 thread: gained (and not strict: it changed).
        _row("gain", t1, True, 9.0, pub_cert=False, pub_err=11.0, margin=-0.1, delta=-2e-3),
        # a failed run counts nowhere.
        _row("dead", t1, None, None, status="failed", pub_cert=None, pub_err=None,
             margin=None),
    ]
    d = drift_table(pd.DataFrame(rows, columns=list(ROBUSTNESS_COLUMNS))).set_index("scope")
    assert list(d.index) == [t1, t2, "all perturbations"]
    counts = ["entries", "strict_exceeded", "lost_certification", "arithmetic_candidates",
              "candidates_passed"]
    counts.append("gained_certification")
    assert d.loc[t1, counts].tolist() == [5, 3, 0, 0, 0, 1]  # down 1.5 mHa, strict, never; gain
    assert d.loc[t2, counts].tolist() == [3, 1, 1, 2, 1, 0]  # down; lost; down + lost
    assert d.loc["all perturbations", counts].tolist() == [5, 3, 1, 2, 1, 1]
    overall = d.loc["all perturbations"]
    assert overall["gained_certification_entries"] == "gain (11.000 -> 9.000 mHa)"
    assert overall["lost_certification_entries"] == "lost (9.500 -> 10.400 mHa)"
    assert overall["candidates_passed_entries"] == \
        "down (8.000 + 2.100 >= 10 mHa; re-run 6.500 mHa)"
    assert overall["strict_exceeded_entries"].split("; ") == \
        ["down (2.1e-03 Ha)", "strict (3.0e-06 Ha)", "never (1.0e-03 Ha)"]


def test_axes_are_the_cartesian_product_with_baselines():
    assert check_axes() == [BASELINE] == [Perturbation(1, None, "python3")]
    got = check_axes(threads=[1, 2], coretypes=["default", "haswell"])
    assert [p.label for p in got] == [
        "threads=1 coretype=default kernelspec=python3",
        "threads=1 coretype=Haswell kernelspec=python3",
        "threads=2 coretype=default kernelspec=python3",
        "threads=2 coretype=Haswell kernelspec=python3"]
    assert check_axes(threads="1, 2", kernelspecs="python3") == check_axes(threads=[1, 2])


def test_the_numpy_dispatch_axis_gives_eight_perturbations_and_keeps_old_names():
    """Issue 37: threads 1/2 x kernel profile (reference, portable) x numpy's AVX-512
    loops on/off = 8 perturbations; without the axis the labels and run names are the
    ones earlier studies wrote (their folders resume)."""
    from qencode_nb.notebook.blas_profiles import PORTABLE, REFERENCE, kernel_spec
    from qencode_nb.studies.robustness_axes import audit_coretype

    got = check_axes(threads=[1, 2], coretypes=["reference", "portable"],
                     numpy_dispatch=["on", "off"])
    assert len(got) == 8 and len(set(p.slug for p in got)) == 8
    assert [p.label for p in got[:4]] == [
        "threads=1 coretype=reference numpy_dispatch=on kernelspec=python3",
        "threads=1 coretype=reference numpy_dispatch=off kernelspec=python3",
        "threads=1 coretype=portable numpy_dispatch=on kernelspec=python3",
        "threads=1 coretype=portable numpy_dispatch=off kernelspec=python3"]
    assert got[1].slug == "t1__reference__npy-off__python3"
    assert BASELINE.label == "threads=1 coretype=default kernelspec=python3"
    assert BASELINE.slug == "t1__default__python3" and BASELINE.numpy_dispatch is None
    assert check_axes(numpy_dispatch="default") == [BASELINE]
    # a profile that already runs the loops as asked is passed by its name (the very runs
    # of the profile); the others as a kernel per copy, resolved for the entry's release
    # on the CPU whose flags are given (issue 51: an AVX-512 CPU's expectations asserted on
    # a Zen 3 failed), first one with AVX-512 ...
    on, off = (audit_coretype(p, "v4", AVX512_CPU) for p in got[:2])
    assert on == "reference"
    assert off == kernel_spec(REFERENCE.coretypes, numpy_avx512=False)
    assert audit_coretype(got[2], "v4", AVX512_CPU) == kernel_spec(PORTABLE.coretypes,
                                                                   numpy_avx512=True)
    assert audit_coretype(got[3], "v4", AVX512_CPU) == "portable"
    for cpu in (AVX512_CPU, ZEN3_CPU):     # the v3 triple (Haswell) runs on both
        assert audit_coretype(got[1], "v3", cpu) == "numpy=Haswell,scipy=Haswell," \
                                                    "pyscf=Haswell,numpy_avx512=off"
        assert audit_coretype(BASELINE, "v3", cpu) is None
    # ... then Zen 3's (no avx512*): reference is the portable triple there, which turns
    # numpy's AVX-512 loops off, so "on" is that triple named per copy and "off" the name
    assert audit_coretype(got[0], "v4", ZEN3_CPU) == kernel_spec(PORTABLE.coretypes,
                                                                 numpy_avx512=True)
    assert audit_coretype(got[1], "v4", ZEN3_CPU) == "reference"
    assert audit_coretype(got[3], "v4", ZEN3_CPU) == "portable"


def test_bad_numpy_dispatch_values_are_refused_naming_the_flag(tmp_path):
    out = tmp_path / "runs"
    with pytest.raises(ParameterError, match="numpy_dispatch 'maybe' is not accepted; "
                                             "accepted: on, off, default"):
        robustness([str(H2_JW_HEA)], out, numpy_dispatch=["on", "maybe"], progress=False)
    with pytest.raises(ParameterError, match="numpy_dispatch off is not accepted with "
                                             "coretype 'host'"):
        robustness([str(H2_JW_HEA)], out, coretypes=["host"], numpy_dispatch="off",
                   progress=False)
    assert not out.exists()
    proc = subprocess.run([str(QENCODE_NB), "robustness", str(H2_JW_HEA), "--numpy-dispatch",
                           "maybe", "--out", str(out)], capture_output=True, text=True,
                          cwd=str(ROOT))
    assert proc.returncode == 2, proc.stderr
    assert "--numpy-dispatch 'maybe' is not accepted; accepted: on, off, default" in proc.stderr
    assert not out.exists()


def test_bad_input_is_refused_before_any_run(tmp_path):
    out = tmp_path / "runs"
    target = [str(H2_JW_HEA)]
    with pytest.raises(ParameterError, match="^engine 'gpu' is not accepted; accepted: None"):
        robustness(target, out, engine="gpu", progress=False)
    with pytest.raises(ParameterError, match=r"'Pentium4' is not accepted; accepted: a profile "
                                             r"\(reference, portable\), 'host' .*Prescott"):
        robustness(target, out, coretypes=["Haswell", "Pentium4"], progress=False)
    with pytest.raises(ParameterError, match="kernelspec.s. qencode-nb-nosuch not found; "
                                             "accepted: .*python3"):
        robustness(target, out, kernelspecs=["python3", "qencode-nb-nosuch"], progress=False)
    with pytest.raises(ParameterError, match="^threads 0 is not accepted; accepted: an integer"):
        robustness(target, out, threads=[1, 0], progress=False)
    with pytest.raises(ParameterError, match="accepted: rerun, full"):
        robustness(target, out, mode="replay", progress=False)
    with pytest.raises(ParameterError, match="timeout 0 is not accepted"):
        robustness(target, out, timeout=0, progress=False)
    with pytest.raises(EntryError, match="neither a folder, a file nor a bundled entry"):
        robustness(["no-such-entry"], out, progress=False)
    assert not out.exists(), "bad input is refused before any notebook is written"
    proc = subprocess.run([str(QENCODE_NB), "robustness", str(H2_JW_HEA), "--coretypes",
                           "Pentium4", "--out", str(out)], capture_output=True, text=True,
                          cwd=str(ROOT))
    assert proc.returncode == 2 and "Pentium4" in proc.stderr and "Haswell" in proc.stderr
    assert not out.exists()


def test_a_coretype_this_cpu_cannot_run_is_refused(tmp_path, monkeypatch):
    """The kernels study's check (blas_profiles.check_coretype) on a CPU without AVX-512:
    the flags are those of an older CPU, the check itself is the real one."""
    from qencode_nb.notebook import blas_profiles

    monkeypatch.setattr(blas_profiles, "cpu_flags", lambda: {"sse3", "ssse3", "sse4_1", "sse4_2",
                                                    "avx", "avx2", "fma"})
    with pytest.raises(ParameterError, match="'SkylakeX' needs CPU flags avx512.*which this "
                                             "CPU lacks; this CPU can run: .*Haswell"):
        robustness([str(H2_JW_HEA)], tmp_path / "runs", coretypes=["Haswell", "SkylakeX"],
                   progress=False)
    assert not (tmp_path / "runs").exists()


def test_the_records_read_are_audit_records():
    from qencode_nb.verdict.records import AUDIT_RECORDS

    assert set(READ_RECORDS) <= set(AUDIT_RECORDS), set(READ_RECORDS) - set(AUDIT_RECORDS)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """Two H2 entries x threads 1 and 2, full mode, two workers (4 real runs)."""
    out = tmp_path_factory.mktemp("robustness") / "runs"
    result = robustness([str(H2_JW_HEA), str(H2_JW_UCCSD)], out, threads=[1, 2], workers=2,
                        progress=False)
    return result, out


def _copy(study, tmp_path) -> Path:
    dest = tmp_path / "runs"
    shutil.copytree(study[1], dest)
    return dest


@pytest.mark.notebook
def test_a_real_study_writes_rows_summary_and_figure(study):
    result, out = study
    csv = pd.read_csv(out / "robustness.csv")
    assert list(csv.columns) == list(ROBUSTNESS_COLUMNS)
    assert list(csv["entry"]) == [H2_JW_HEA.stem] * 2 + [H2_JW_UCCSD.stem] * 2
    assert list(csv["threads"]) == [1, 2, 1, 2]
    assert (csv["measured_threads"] == csv["threads"]).all()
    assert set(csv["status"]) == {"ok"} and csv["reason"].isna().all()
    assert csv["certified"].all() and (csv["error_mha"] < csv["threshold_mha"]).all()
    assert (csv["delta_ha"].abs() < 1e-9).all() and (csv["nfev"] > 0).all()
    assert csv["n_selected_operators"].isna().all(), "no ADAPT entry here"
    assert (csv["engine_used"] == "default.qubit").all() and csv["engine"].isna().all()
    assert csv["kernelspec"].eq("python3").all() and csv["coretype"].isna().all()
    assert all((out / p).is_file() for p in csv["notebook"])   # relative to the folder
    summary = pd.read_csv(out / "robustness_summary.csv")
    assert list(summary.columns) == list(SUMMARY_COLUMNS)
    for _, s in summary.iterrows():
        rows = csv[csv["entry"] == s["entry"]]
        assert (s["runs"], s["runs_ok"], s["certified_fraction"]) == (2, 2, 1.0)
        assert s["error_min_mha"] == rows["error_mha"].min()
        assert s["error_max_mha"] == rows["error_mha"].max()
        assert s["published_error_mha"] == rows["published_error_mha"].iloc[0]
        assert s["published_margin"] > 0.99 and not s["fragile"]
        assert not s["fragile_measured"] and pd.isna(s["lost_certification_in"])
    assert result.lost_certification() == {} and result.failures() == {}
    assert all(Path(p).is_file() and Path(p).stat().st_size > 0 for p in result.figure)
    assert "2 entries x 2 perturbations = 4 runs (4 ok, 0 failed, 0 resumed)" in \
        result.report()
    drift = pd.read_csv(out / "robustness_drift.csv")
    assert drift["scope"].tolist() == [f"threads={t} coretype=default kernelspec=python3"
                                       for t in (1, 2)] + ["all perturbations"]
    # Both H2 entries re-run to < 1e-9 Ha of the published energy, 0.0 mHa from the threshold.
    assert drift["entries"].tolist() == [2, 2, 2]
    assert (drift[["strict_exceeded", "lost_certification", "arithmetic_candidates",
                   "candidates_passed", "gained_certification"]] == 0).all().all()
    assert "drift counts over all perturbations (2 entries): 0 moved" in result.report()


@pytest.mark.notebook
def test_resumes_and_a_timed_out_run_is_a_failed_row(study, tmp_path):
    """Runs that recorded done are read back, not re-run; a run past the per-run
    timeout is killed and becomes a failed row with the reason, and the study goes on
    (on a real Dask LocalCluster, the --scheduler path)."""
    from distributed import LocalCluster

    out = _copy(study, tmp_path)
    stamps = {p.name: p.stat().st_mtime_ns for p in out.glob("*.ipynb")}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        result = robustness([str(H2_JW_HEA), str(H2_JW_UCCSD)], out, threads=[1, 2, 3],
                            timeout=0.5, scheduler=cluster.scheduler_address, progress=False)
    assert {n: stamps[n] for n in stamps} == \
        {p.name: p.stat().st_mtime_ns for p in out.glob("*.ipynb") if p.name in stamps}
    table = result.table
    assert result.resumed == 4 and list(table["threads"]) == [1, 2, 3] * 2
    assert list(table["status"]) == ["ok", "ok", "failed"] * 2
    failed = table[table["status"] == "failed"]
    assert failed["reason"].str.contains("RunTimeout: the run exceeded the per-run timeout "
                                         "of 0.5 s").all()
    assert set(result.failures()) == {f"{e.stem}__t3__default__python3"
                                      for e in (H2_JW_HEA, H2_JW_UCCSD)}
    s = result.summary
    assert list(s["runs"]) == [3, 3] and list(s["runs_failed"]) == [1, 1]
    assert list(s["certified_fraction"]) == [1.0, 1.0]
    assert (out / "robustness.png").is_file()
    assert "6 runs (4 ok, 2 failed, 4 resumed)" in result.report()


@pytest.mark.notebook
def test_cli_prints_the_summary(study, tmp_path):
    out = _copy(study, tmp_path)
    proc = subprocess.run([str(QENCODE_NB), "robustness", str(H2_JW_HEA), str(H2_JW_UCCSD),
                           "--threads", "1", "2", "--workers", "2", "--out", str(out)],
                          capture_output=True, text=True, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    assert "2 entries x 2 perturbations = 4 runs (4 ok, 0 failed, 4 resumed)" in proc.stdout
    assert "entries losing certification in at least one perturbation: 0" in proc.stdout
    assert "H2 JW HEA 67c3" in proc.stdout and "fragile_measured" in proc.stdout


@pytest.mark.notebook
def test_robustness_notebook_with_stock_papermill(study, tmp_path):
    """robustness.ipynb calls the same function; the engine is passed through to
    audit.ipynb (another input than the shared study's, so both runs execute), one of
    the runs under another OpenBLAS coretype."""
    import papermill

    from qencode_nb.notebook.record import read_records

    out = _copy(study, tmp_path)
    out_nb = tmp_path / "robustness.ipynb"
    papermill.execute_notebook(str(ROOT / "notebooks" / "robustness.ipynb"), str(out_nb),
                               parameters={"targets": [str(H2_JW_HEA)], "threads": [1],
                                           "coretypes": ["default", "Haswell"],
                                           "engine": "sector", "workers": 2,
                                           "out": str(out)},
                               progress_bar=False, cwd=str(ROOT))
    r = read_records(out_nb)
    assert r["done"] is True and r["failed"] == {} and r["lost_certification"] == {}
    table = pd.DataFrame(r["table"])
    assert list(table["coretype"].fillna("")) == ["", "Haswell"]
    assert list(table["engine"]) == ["sector", "sector"] and table["engine_used"].notna().all()
    assert list(table["status"]) == ["ok", "ok"] and r["table_csv"] == str(out / "robustness.csv")
    assert "Haswell" in table["blas_kernel"].iloc[1]
    assert r["perturbations"] == ["threads=1 coretype=default kernelspec=python3",
                                  "threads=1 coretype=Haswell kernelspec=python3"]
    summary = pd.DataFrame(r["summary"])[list(SUMMARY_COLUMNS)]   # records sort their keys
    pd.testing.assert_frame_equal(summary, summarise_robustness(table), check_dtype=False)
    assert summary["runs_ok"].tolist() == [2]
    assert all(Path(p).is_file() for p in r["figure"])
    assert pd.read_csv(r["summary_csv"])["runs"].tolist() == [2]
    drift = pd.DataFrame(r["drift"])
    assert drift["scope"].tolist() == r["perturbations"] + ["all perturbations"]
    assert pd.read_csv(r["drift_csv"])["entries"].tolist() == [1, 1, 1]


def test_robustness_notebook_declares_the_parameters():
    import papermill

    declared = set(papermill.inspect_notebook(str(ROOT / "notebooks" / "robustness.ipynb")))
    assert {"targets", "threads", "coretypes", "kernelspecs", "numpy_dispatch", "engine",
            "workers", "out", "mode", "timeout"} <= declared
