"""Threading and BLAS-kernel studies: real audit runs, each its own process and kernel.

Entry: the shared H2 JW/UCCSD entry (one parameter, COBYLA, 20 evaluations; a re-run
takes ~5-12 s).  Measured here: at 1 and 2 threads, and under Haswell and SkylakeX,
it re-runs to -1.131286510226469 Ha (error 1.05e-06 mHa) bit for bit.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import (ERROR_LABEL_GLYPHS, H2_JW_UCCSD, ROOT, check_summary_against_table,
                      svg_has_text)
from qencode_nb.errors import ParameterError
from qencode_nb.studies import STUDY_KINDS, run
from qencode_nb.studies.blas import kernels_study, threads_study
from qencode_nb.readout.summaries import finding, summarise
from qencode_nb.notebook.pins import CORETYPE_CPU_FLAGS, runnable_coretypes

QENCODE_NB = Path(sys.executable).parent / "qencode-nb"


def _check_finding(text, table, summary, by, labels):
    """The sentence says what the numbers say."""
    hexes = set(table.loc[table["status"] == "done", "energy_hex"])
    if len(hexes) == 1 and (table["status"] == "done").all():
        assert "the same energy bit for bit" in text and "distinct" not in text
        assert f"{len(table)} runs" in text
        assert float(text.split("(")[1].split(" Ha")[0]) == pytest.approx(
            table["energy"].iloc[0], abs=1e-10)
    elif len(hexes) > 1:   # a group with several values, or groups that differ
        assert f"{len(hexes)} distinct values" in text, text
    else:                  # one value, but some runs failed: the sentence counts them
        assert "failed" in text and "distinct" not in text, text
    for label in labels:
        assert label in text


@pytest.fixture(scope="module")
def threads_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("threads")
    table = threads_study(str(H2_JW_UCCSD), threads=(1, 2), repeats=2, out_dir=out,
                          mode="rerun", progress=False)
    return out, table


@pytest.mark.notebook
def test_threads_study_measures_the_requested_threads(threads_run):
    out, table = threads_run
    assert list(table["threads"]) == [1, 1, 2, 2] and list(table["repeat"]) == [0, 1, 0, 1]
    assert (table["status"] == "done").all(), table["failure"].tolist()
    assert (table["measured_threads"] == table["threads"]).all()
    # Each run has its own notebook, named by entry, threads and repeat.
    stems = [Path(p).stem for p in table["notebook"]]
    assert stems == [f"{H2_JW_UCCSD.stem}__t{t}__r{r}"
                     for t, r in zip(table["threads"], table["repeat"])]
    assert all(Path(p).is_file() and Path(p).with_suffix(".outcome.json").is_file()
               for p in table["notebook"])
    # energy_hex is the exact float; the published H2 re-run takes 20 evaluations.
    assert all(float.fromhex(h) == e for h, e in zip(table["energy_hex"], table["energy"]))
    assert (table["nfev"] == 20).all() and (table["seconds"] > 0).all()
    assert (table["error_mha"] < 1e-3).all()
    one = table[table["threads"] == 1]
    assert one["energy_hex"].nunique() == 1, "1-thread repeats must be bit-identical"
    csv = pd.read_csv(out / "threads.csv")
    assert list(csv["energy_hex"]) == list(table["energy_hex"])
    assert list(csv.columns[:12]) == ["threads", "repeat", "measured_threads", "engine",
                                      "energy", "energy_hex", "error_mha", "nfev", "seconds",
                                      "status", "failure", "notebook"]
    assert (table["engine"] == "default.qubit").all()   # the recorded backend ran


@pytest.mark.notebook
def test_threads_summary_finding_and_figure(threads_run):
    out, table = threads_run
    summary = summarise(table, "threads")
    assert list(summary["n"]) == [2, 2]
    check_summary_against_table(table, summary, "threads")
    assert summary.loc[summary["threads"] == 1, "spread_mha"].item() == 0.0
    text = finding(summary, "threads")
    _check_finding(text, table, summary, "threads", ["1 thread", "2 threads"])
    for suffix in (".png", ".pdf", ".svg"):
        assert (out / f"threads{suffix}").stat().st_size > 5_000
    svg = (out / "threads.svg").read_text()
    assert "<svg" in svg[:500]
    assert "BLAS threads (requested)" in svg
    assert svg_has_text(out / "threads.svg", *ERROR_LABEL_GLYPHS)


def test_finding_reports_distinct_values_and_spread():
    """The sentence follows the numbers when runs differ (a table built by hand)."""
    e = [-7.978591597970441, -7.978591597970441, -7.978591597970441,
         -7.978591597970441, -7.9747793, -7.978591597970441]
    table = pd.DataFrame({"threads": [1, 1, 1, 4, 4, 4], "energy": e,
                          "energy_hex": [x.hex() for x in e],
                          "error_mha": [(x + 7.983772976961489) * 1e3 for x in e],
                          "status": ["done"] * 6})
    summary = summarise(table, "threads")
    check_summary_against_table(table, summary, "threads")
    text = finding(summary, "threads")
    spread = (e[4] - e[0]) * 1e3
    assert text.startswith("at 1 thread 3/3 runs identical; at 4 threads 2 distinct values "
                           f"in 3 runs, spread {spread:.3g} mHa")
    assert f"spans {spread:.3g} mHa" in text
    table.loc[5, ["status", "energy", "energy_hex"]] = ["failed", None, None]
    text = finding(summarise(table, "threads"), "threads")
    assert "at 4 threads 2 distinct values in 2 runs" in text and "(1 failed)" in text


@pytest.mark.hostkind
@pytest.mark.notebook
def test_kernels_study_over_two_runnable_coretypes(tmp_path):
    runnable = runnable_coretypes()
    if len(runnable) < 2:
        pytest.skip(f"this CPU runs fewer than two OpenBLAS coretypes: {runnable}")
    chosen = [c for c in ("Haswell", "SkylakeX") if c in runnable]
    chosen = chosen if len(chosen) == 2 else runnable[-2:]
    table = kernels_study(str(H2_JW_UCCSD), [c.lower() for c in chosen], repeats=1,
                          out_dir=tmp_path, progress=False)
    assert list(table["coretype"]) == chosen, "names come back in their canonical spelling"
    assert (table["status"] == "done").all(), table["failure"].tolist()
    assert (table["measured_threads"] == 1).all() and table["kernel"].notna().all()
    summary = summarise(table, "coretype")
    check_summary_against_table(table, summary, "coretype")
    _check_finding(finding(summary, "coretype"), table, summary, "coretype", chosen)
    assert (tmp_path / "kernels.csv").is_file()
    assert "OpenBLAS coretype" in (tmp_path / "kernels.svg").read_text()


def test_unknown_coretype_lists_the_accepted_names(tmp_path):
    with pytest.raises(ParameterError) as err:
        kernels_study(str(H2_JW_UCCSD), ["Pentium4"], out_dir=tmp_path, progress=False)
    assert "'Pentium4'" in str(err.value)
    assert all(name in str(err.value) for name in CORETYPE_CPU_FLAGS)
    with pytest.raises(ParameterError, match="^threads 0 is not accepted; accepted: an integer"):
        threads_study(str(H2_JW_UCCSD), threads=(0,), out_dir=tmp_path, progress=False)
    with pytest.raises(ParameterError, match="accepted: rerun, full"):
        threads_study(str(H2_JW_UCCSD), mode="replay", out_dir=tmp_path, progress=False)
    with pytest.raises(ParameterError, match="^engine 'turbo' is not accepted"):
        threads_study(str(H2_JW_UCCSD), engine="turbo", out_dir=tmp_path, progress=False)
    # The entry point of the CLI and threading.ipynb refuses the same way, before any run.
    with pytest.raises(ParameterError, match="study 'nightly' is not accepted; accepted: "
                                             "threads, kernels, optimizers, environments"):
        run("nightly", str(H2_JW_UCCSD), out_dir=tmp_path, progress=False)
    with pytest.raises(ParameterError, match="'Pentium4'"):
        run("kernels", str(H2_JW_UCCSD), coretypes=["Pentium4"], out_dir=tmp_path,
            progress=False)
    with pytest.raises(ParameterError, match="engine 'sector' is not accepted by an "
                                             "optimizers study"):
        run("optimizers", str(H2_JW_UCCSD), engine="sector", out_dir=tmp_path, progress=False)
    with pytest.raises(ParameterError, match="accepted: an integer >= 1"):
        run("threads", str(H2_JW_UCCSD), repeats=0, out_dir=tmp_path, progress=False)
    assert not list(tmp_path.glob("*.ipynb")), "bad input is refused before any run"
    proc = subprocess.run([str(QENCODE_NB), "study", "kernels", str(H2_JW_UCCSD),
                           "--coretypes", "Haswell", "Pentium4", "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=str(ROOT))
    assert proc.returncode == 2
    assert "Pentium4" in proc.stderr and "accepted: a profile (reference, portable)" in proc.stderr
    assert "OpenBLAS coretype (Prescott, Core2" in proc.stderr


@pytest.mark.notebook
def test_threading_notebook_with_stock_papermill(tmp_path):
    import papermill

    from qencode_nb.notebook.record import read_records

    out_nb = tmp_path / "threading.ipynb"
    papermill.execute_notebook(str(ROOT / "notebooks" / "threading.ipynb"), str(out_nb),
                               parameters={"entry": str(H2_JW_UCCSD), "repeats": 2,
                                           "out": str(tmp_path / "runs")},
                               progress_bar=False, cwd=str(ROOT))
    r = read_records(out_nb)
    assert r["done"] is True and r["study"] == "threads" and r["failed"] == {}
    table = pd.DataFrame(r["table"])
    assert list(table["threads"]) == [1, 1, 2, 2]
    assert (table["measured_threads"] == table["threads"]).all()
    summary = pd.DataFrame(r["summary"])
    check_summary_against_table(table, summary, "threads")
    assert r["finding"] == finding(summarise(table, "threads"), "threads")
    assert all(Path(p).is_file() for p in r["figure"])
    assert pd.read_csv(r["table_csv"])["energy_hex"].tolist() == table["energy_hex"].tolist()


def test_study_parameter_files_name_notebook_parameters():
    import papermill

    declared = set(papermill.inspect_notebook(str(ROOT / "notebooks" / "threading.ipynb")))
    for name, study in (("threads_lih", "threads"), ("kernels_lih", "kernels")):
        params = yaml.safe_load((ROOT / "params" / "studies" / f"{name}.yaml").read_text())
        assert set(params) <= declared, set(params) - declared
        assert params["entry"] == "lih" and params["study"] == study


@pytest.mark.notebook
def test_cli_study_threads(tmp_path):
    out = tmp_path / "cli"
    proc = subprocess.run([str(QENCODE_NB), "study", "threads", str(H2_JW_UCCSD),
                           "--threads", "1", "2", "--repeats", "1", "--out", str(out)],
                          capture_output=True, text=True, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(out / "threads.csv")
    assert list(table["threads"]) == [1, 2]
    assert (table["measured_threads"] == table["threads"]).all()
    sentence = finding(summarise(table, "threads"), "threads")
    assert sentence in proc.stdout
    assert "n_distinct_energies" in proc.stdout and "spread_mha" in proc.stdout
    assert (out / "threads.png").is_file() and (out / "threads.svg").is_file()


def test_study_kinds_and_the_records_a_study_reads():
    """One list of kinds (CLI subcommands = threading.ipynb's study values = figure kinds),
    and every audit record a study row reads is a name of verdict.records.AUDIT_RECORDS."""
    from qencode_nb.cli import build_parser
    from qencode_nb.readout.plots import STUDY_GROUPS
    from qencode_nb.readout.run_rows import READ_RECORDS
    from qencode_nb.verdict.records import AUDIT_RECORDS, ERROR_RECORD

    assert STUDY_KINDS == ("threads", "kernels", "optimizers", "environments")
    assert tuple(STUDY_GROUPS) == STUDY_KINDS
    for kind in STUDY_KINDS:   # each kind is a `qencode-nb study` subcommand
        assert build_parser().parse_args(["study", kind, "lih"]).kind == kind
    with pytest.raises(SystemExit):
        build_parser().parse_args(["study", "nightly", "lih"])
    assert set(READ_RECORDS) - {ERROR_RECORD} <= set(AUDIT_RECORDS), \
        set(READ_RECORDS) - set(AUDIT_RECORDS)


def test_study_result_records_what_threading_ipynb_records(tmp_path):
    """StudyResult.to_record: the record names and order of threading.ipynb, the finding
    of an environment study is its differences' sentence (a table built by hand)."""
    from qencode_nb.readout.environment_tables import (environment_differences,
                                                      environment_finding, version_table)
    from qencode_nb.studies.study import StudyResult

    table = pd.DataFrame([
        {"kernelspec": k, "status": s, "python": "3.11.7", "blas": "openblas x",
         "packages": {"numpy": "2.2.6", "scipy": v}, "energy": e, "energy_hex": e.hex(),
         "error_mha": 1.0 + i, "notebook": str(tmp_path / f"lih__{k}__r0.ipynb"),
         "failure": f}
        for i, (k, s, v, e, f) in enumerate([("python3", "done", "1.13.1", -1.0, None),
                                             ("qencode-nb-x", "failed", "1.16.3", -1.5,
                                              "run: RunTimeout: killed")])])
    versions = version_table(table)
    differences = environment_differences(table, versions)
    summary = summarise(table, "kernelspec")
    result = StudyResult(kind="environments", by="kernelspec", out_dir=tmp_path, table=table,
                         summary=summary, finding=finding(summary, "kernelspec"),
                         versions=versions, differences=differences,
                         environment_finding=environment_finding(differences))
    rec = result.to_record()
    assert list(rec) == ["study", "by", "table", "table_csv", "summary", "finding",
                         "versions", "differences", "figure", "failed"]
    assert rec["finding"] == result.environment_finding == result.headline
    assert rec["table_csv"] == str(tmp_path.resolve() / "environments.csv")
    assert rec["figure"] == [str(tmp_path.resolve() / f"environments.{s}")
                             for s in ("png", "pdf", "svg")]
    assert rec["failed"] == {"lih__qencode-nb-x__r0": "run: RunTimeout: killed"}
    threads = StudyResult(kind="threads", by="threads", out_dir=tmp_path, table=table,
                          summary=summary, finding="at 1 thread 1 run")
    assert threads.headline == "at 1 thread 1 run" and "versions" not in threads.to_record()


@pytest.mark.notebook
def test_cli_audit_writes_under_runs_never_a_loose_file(tmp_path):
    """Without --out the executed notebook goes to runs/audit/<entry>.ipynb under the
    working directory; nothing else appears there."""
    from qencode_nb.notebook.record import read_records

    proc = subprocess.run([str(QENCODE_NB), "audit", "h2", "--db", str(ROOT.parent / "shared"
                                                                       / "qencode-v4" / "db"),
                           "--mode", "replay"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    nb = tmp_path / "runs" / "audit" / "h2.ipynb"
    assert f"executed notebook: {Path('runs') / 'audit' / 'h2.ipynb'}" in proc.stdout
    assert read_records(nb)["done"] is True
    assert [p.name for p in tmp_path.iterdir()] == ["runs"]
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["audit"]
