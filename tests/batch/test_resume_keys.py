"""Resume keyed by what ran (issue 36): a folder's earlier run is kept only when it
ran under the kernels, threads and packages the resuming sweep would run.

The runs here use ``--coretype host``, which leaves the inherited ``OPENBLAS_CORETYPE``
as it is, so what a run measures follows the environment the sweep starts in:
``Prescott`` exported first, then ``Haswell`` with ``OPENBLAS_L2_SIZE=512`` (the preset
of one of this project's host kinds).  Both kernels run on every host of this project
(AVX2), so the test holds on all three.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import H2_JW_UCCSD, ROOT
from qencode_nb.batch.sweep import sweep
from qencode_nb.notebook.record import read_records


def _kernels(nb) -> dict:
    return {c["copy"]: c["kernel"] for c in
            read_records(nb)["provenance"]["numeric"]["openblas"]}


@pytest.mark.notebook
def test_a_folder_resumed_under_other_kernels_or_threads_reruns_and_says_why(
        tmp_path, monkeypatch):
    out, target = tmp_path / "runs", str(H2_JW_UCCSD)
    nb = out / f"{H2_JW_UCCSD.stem}.ipynb"
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Prescott")
    monkeypatch.delenv("OPENBLAS_L2_SIZE", raising=False)
    first = sweep([target], out, mode="replay", blas_coretype="host", progress=False)
    assert list(first["status"]) == ["done"] and first.attrs["reruns"] == []
    before = _kernels(nb)     # Prescott (an OpenBLAS build may name it Katmai)
    assert "Haswell" not in before.values()
    stamp = nb.stat().st_mtime_ns

    # The same sweep, same parameters, under the preset: re-run, and said so (the CLI).
    env = dict(__import__("os").environ, OPENBLAS_CORETYPE="Haswell", OPENBLAS_L2_SIZE="512",
               PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "qencode_nb.cli", "sweep", target,
                           "--mode", "replay", "--coretype", "host", "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "re-ran 1 run(s) done under other conditions" in done.stdout, done.stdout
    after = _kernels(nb)
    assert nb.stat().st_mtime_ns != stamp and after != before
    assert f"numpy {before['numpy']} x1" in done.stdout, done.stdout
    assert f"-> numpy {after['numpy']} x1" in done.stdout, done.stdout

    # Resumed under the same conditions: nothing re-runs.
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("OPENBLAS_L2_SIZE", "512")
    stamp = nb.stat().st_mtime_ns
    again = sweep([target], out, mode="replay", blas_coretype="host", progress=False)
    assert again.attrs["reruns"] == [] and nb.stat().st_mtime_ns == stamp

    # Another --threads: re-run, naming the parameter.
    other = sweep([target], out, mode="replay", blas_coretype="host", blas_threads=2,
                  progress=False)
    assert [r["name"] for r in other.attrs["reruns"]] == [H2_JW_UCCSD.stem]
    assert "blas_threads 1 -> 2" in other.attrs["reruns"][0]["why"]
    assert list(other["status"]) == ["done"] and nb.stat().st_mtime_ns != stamp


def test_differences_name_kernels_packages_and_python():
    from qencode_nb.batch.resume import Measured, differences

    ran = Measured("aaa", [{"copy": "numpy", "kernel": "SkylakeX", "threads": 1}], "3.11.7",
                   {"pennylane": "0.44.1", "numpy": "2.2.6"})
    same = Measured("aaa", list(ran.openblas), "3.11.14", {"pennylane": "0.44.1",
                                                          "numpy": "2.2.6", "other": "1"})
    assert differences(ran, same) == []      # patch release of Python, extra packages
    now = Measured("bbb", [{"copy": "numpy", "kernel": "Haswell", "threads": 1}], "3.12.1",
                   {"numpy": "2.2.6"})
    why = differences(ran, now)
    assert why[0] == "BLAS kernels and threads numpy SkylakeX x1 -> numpy Haswell x1"
    assert why[1] == "Python 3.11.7 -> 3.12.1"
    assert why[2] == "packages pennylane 0.44.1 -> not installed"
    fp_only = Measured("ccc", list(ran.openblas), "3.11.7", dict(ran.versions))
    assert differences(ran, fp_only)[0].startswith("numeric fingerprint aaa -> ccc")


@pytest.mark.notebook
def test_a_reused_folder_lists_its_earlier_runs_as_stale_in_every_reader(tmp_path):
    """Issue 36: a second sweep into the same --out with fewer entries and other options
    leaves the first run's notebook on disk; the run manifest names the second run's
    notebooks only, and the report, ``show`` and ``compare`` read those and name the
    other one as stale (before: the report counted both).  (Under the same options the
    folder keeps the other entry's run: issue 53, tests/batch/test_shards.py.)"""
    import json

    from conftest import SHARED_DB
    from qencode_nb.readout.manifest import all_audit_notebooks, audit_notebooks
    from qencode_nb.readout.manifest import MANIFEST, stale_notebooks
    from qencode_nb.readout.report import write_report

    h2_bk = SHARED_DB / "H2_ccpvdz_BK_UCCSD_v4_tapered__sha256_d3f280f5c8f32ccc.json"
    out = tmp_path / "runs"
    sweep([str(H2_JW_UCCSD), str(h2_bk)], out, mode="replay", workers=2, progress=False)
    assert json.loads((out / MANIFEST).read_text())["notebooks"] == sorted(
        f"{p.stem}.ipynb" for p in (H2_JW_UCCSD, h2_bk))
    sweep([str(H2_JW_UCCSD)], out, mode="replay", blas_threads=2, progress=False)
    assert len(all_audit_notebooks(out)) == 2
    assert [p.stem for p in audit_notebooks(out)] == [H2_JW_UCCSD.stem]
    assert [p.stem for p in stale_notebooks(out)] == [h2_bk.stem]

    report = write_report(out, notebooks=False)
    assert list(report.table["run"]) == [H2_JW_UCCSD.stem]
    page = __import__("html").unescape(report.path.read_text())
    assert "1 stale notebook(s) outside this folder's last run" in page and h2_bk.stem in page
    cli = [sys.executable, "-m", "qencode_nb.cli"]
    shown = subprocess.run(cli + ["show", str(out)], capture_output=True, text=True,
                           timeout=300, env=dict(__import__("os").environ,
                                                 PYTHONPATH=str(ROOT)))
    assert "1 runs:" in shown.stdout and f"stale notebook(s)" in shown.stdout, shown.stdout
    compared = subprocess.run(cli + ["compare", str(out), str(out)], capture_output=True,
                              text=True, timeout=300,
                              env=dict(__import__("os").environ, PYTHONPATH=str(ROOT)))
    assert compared.returncode == 0, compared.stderr
    assert compared.stdout.count(h2_bk.stem) == 2     # named stale once per folder
