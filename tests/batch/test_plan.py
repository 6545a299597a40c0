"""Issue 53: a plan before the bill.  Each entry's predicted wall time from a
measurement, the evaluations a re-run makes, plan.csv, and a plan against a real sweep
of the same entries (within a factor of three, FACTOR)."""

from __future__ import annotations

import json
import math
import subprocess
import time

import pandas as pd
import pytest
from conftest import H2_JW_UCCSD, ROOT, SHARED_DB

from qencode_nb.batch.plan import (
    evaluations,
    human,
    kept_path,
    makespan,
    material,
    predict,
    screenings,
)
from qencode_nb.batch.plan_file import PLAN_COLUMNS, predictions, read_plan
from qencode_nb.entry import load
from qencode_nb.options import RunOptions
from qencode_nb.rules import PLAN_NOTEBOOK_S, PLAN_SWEEP_S

H2CO_ADAPT = SHARED_DB / "H2CO_ccpvdz_JW_ADAPT_v4_tapered__sha256_09d774c657fca512.json"
N2_HEA_LBFGSB = SHARED_DB / "N2_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_17841edecba23ac1.json"
H8_ADAPT = SHARED_DB / "H8_ccpvdz_JW_ADAPT_v4_casscf_tapered__sha256_b2328caa5d17467b.json"
H6_ADAPT = SHARED_DB / "H6_ccpvdz_JW_ADAPT_v4_casscf_tapered__sha256_def5987c2958af93.json"
CLI = str(ROOT / ".venv" / "bin" / "qencode-nb")

#: The factor a plan's prediction is held to on a small entry (docs/howto/
#: audit-a-whole-record.md): measured / predicted between 1/3 and 3.  A plan and its run
#: made minutes apart agreed within 1.1x on an idle share of the 2-core AMD EPYC (Zen 4);
#: the v4 release's small entries, run as other work came and went (load 3 to 5), took
#: 1.5 to 2.8 times their prediction (docs/results/v4-recorded), so 2 would fail on a host
#: busy with the other pytest worker: 3 still catches a model that drops the evaluations
#: (an order of magnitude on these entries).  Not a speed assertion: plan against run.
FACTOR = 3.0


def test_the_evaluations_are_those_the_rerun_makes():
    """COBYLA's nfev is its energy calls; L-BFGS-B's published nfev is scipy's times
    (1 + 2n) (rerun/vqe.py), so every v4 L-BFGS-B entry's nfev divides by it; ADAPT with
    L-BFGS-B counts (1 + n) per call at n operators; ADAPT screens once per iteration."""
    lbfgsb = [load(p) for p in sorted(SHARED_DB.glob("*.json"))]
    lbfgsb = [e for e in lbfgsb if e.optimizer.name == "l-bfgs-b"]
    assert len(lbfgsb) == 4
    for entry in lbfgsb:
        n = len(entry.optimal_params)
        assert entry.published_nfev % (1 + 2 * n) == 0, entry.name
    n2 = load(N2_HEA_LBFGSB)
    assert evaluations(n2, {"num_params": 88}) == (95403 // 177, "results.vqe.nfev / (1 + 2n)")
    assert evaluations(load(H2_JW_UCCSD), {}) == (20, "results.vqe.nfev")
    h8 = load(H8_ADAPT)
    assert evaluations(h8, {"num_params": 98}) == (
        math.ceil(63072 / 99), "results.vqe.nfev / (1 + N), at N operators")
    assert evaluations(load(H2CO_ADAPT), {}) == (19, "results.vqe.nfev")
    assert [screenings(load(p)) for p in (H2CO_ADAPT, H6_ADAPT, H2_JW_UCCSD)] == [1, 28, 0]
    own = load("bh")         # an entry of one's own publishes no nfev: the budget bounds it
    assert evaluations(own, {}) == (
        300 * 2, "budget (no published nfev): max_iterations x restarts")


#: A measurement as the child reports it (seconds), for the formula's arithmetic.
MEASURED = {"start_s": 0.2, "pin_s": 0.3, "load_s": 0.4, "hamiltonian_s": 0.5,
            "problem_s": 4.0, "replay_s": 0.05, "setup_s": 0.01, "eval_s": 0.002,
            "eval_one_s": 0.001, "cobyla_step_s": 0.0001, "qnode_s": 0.003,
            "screen_empty_s": 0.004, "screen_full_s": 0.006, "label": "qnode",
            "evaluation": "energy", "num_params": 1}


def test_the_prediction_is_fixed_plus_evaluations_plus_screenings():
    stages = 0.2 + 0.3 + 0.4 + 0.5 + 4.0 + PLAN_NOTEBOOK_S
    vqe = predict(load(H2_JW_UCCSD), {**MEASURED, "label": "default.qubit"})
    assert vqe.fixed_seconds == pytest.approx(stages + 0.05 + 0.01)
    assert vqe.seconds_per_evaluation == pytest.approx(0.002 + 0.0001)
    assert vqe.predicted_seconds == pytest.approx(vqe.fixed_seconds + 20 * 0.0021)
    assert (vqe.screenings, vqe.engine, vqe.optimizer) == (0, "default.qubit", "cobyla")
    adapt = predict(load(H2CO_ADAPT), MEASURED)
    per = 0.001 + 2 / 3 * (0.002 - 0.001) + 0.0001     # mean over 1..N operators
    assert adapt.seconds_per_evaluation == pytest.approx(per)
    assert adapt.seconds_per_screening == pytest.approx(0.003 + 0.005)
    assert adapt.predicted_seconds == pytest.approx(adapt.fixed_seconds + 19 * per + 0.008)
    replay = predict(load(H2_JW_UCCSD), MEASURED, "replay")
    assert replay.evaluations == 0 and replay.predicted_seconds == pytest.approx(stages + 0.05)
    rerun = predict(load(H2_JW_UCCSD), MEASURED, "rerun")
    assert rerun.fixed_seconds == pytest.approx(stages + 0.01)
    failed = predict(load(H2_JW_UCCSD), {"failure": "the measurement failed: X"})
    assert failed.predicted_seconds is None and failed.failure.endswith("X")


def test_human_units_and_the_pools_wall_time():
    assert [human(s) for s in (0.84, 42.4, 185, 7620, None)] == [
        "0.8 s", "42 s", "3 min 05 s", "2 h 07 min", "?"]
    assert makespan([10, 6, 5, 4], 2) == 14 and makespan([10, 6, 5, 4], 1) == 25
    assert makespan([], 3) == 0


def test_a_plan_measured_on_a_shared_host_says_so_under_its_total():
    """Below rules.PLAN_SHARED_CPU_SHARE of a core (median), the closing line says the
    predictions hold under that load; on a core of its own, or without a share, it does
    not."""
    import pandas as pd

    from qencode_nb.batch.plan_table import total_text

    def closing(share):
        table = pd.DataFrame()
        table.attrs.update(total_seconds=600, runs=2, unpredicted=0, sweep_seconds=8.0,
                           workers=1, makespan_seconds=600, path="p/plan.csv",
                           cpu_share=share)
        return total_text(table)

    assert ("; measured with 45% of a core (median): a shared host, so the predictions "
            "hold under that load (an idle host runs faster, a busier one slower); "
            "plan: p/plan.csv") in closing(0.45)
    assert "shared host" not in closing(0.97) and "shared host" not in closing(None)
    assert "shared host" not in closing(0.9), "below the threshold, not at it"
    assert "measured with 89% of a core" in closing(0.899), "rounded down, never up to 90"
    assert closing(None) == ("total 10 min 00 s for 2 run(s) to do (+ 8.0 s the sweep's "
                             "own start and finish); plan: p/plan.csv")


def test_a_plans_share_of_a_core_is_the_median_of_its_one_thread_measurements(
        tmp_path, monkeypatch):
    """The plan's cpu_share is the median over its entries' measurements (here replaced:
    no child); with 2 BLAS threads a measurement's CPU seconds count both threads, so the
    plan says nothing of the load."""
    from qencode_nb.batch import plan
    from qencode_nb.batch.plan_table import plan_sweep

    targets = [str(H2_JW_UCCSD), str(H2CO_ADAPT),
               str(SHARED_DB / "H2_ccpvdz_BK_UCCSD_v4_tapered__sha256_d3f280f5c8f32ccc.json")]
    shares = iter([0.4, 0.5, 0.95] * 2)
    monkeypatch.setattr(plan, "measure", lambda target, options, **_: {
        **MEASURED, "cpu_share": next(shares)})
    one = plan_sweep(targets, tmp_path / "one", progress=False)
    assert sorted(one["cpu_share"]) == [0.4, 0.5, 0.95]
    assert one.attrs["cpu_share"] == 0.5
    two = plan_sweep(targets, tmp_path / "two", progress=False, blas_threads=2)
    assert two.attrs["cpu_share"] is None


def test_a_kept_measurement_is_keyed_by_entry_engine_host_and_the_options_that_change_it():
    base = material(str(H2_JW_UCCSD), RunOptions())
    assert base["entry_sha256"] and base["engine"] == "recorded" and base["cpu"]
    for changed in (RunOptions(engine="fast"), RunOptions(blas_threads=2),
                    RunOptions(proof_budget=0)):
        assert kept_path(material(str(H2_JW_UCCSD), changed)) != kept_path(base)
    assert kept_path(material(str(H2_JW_UCCSD), RunOptions(workers=2, mode="replay"))) == \
        kept_path(base), "mode and workers change the prediction, not the measurement"
    assert kept_path({**base, "cpu": "another CPU"}) != kept_path(base)


def test_a_shards_plan_lists_that_shard_and_merges_with_the_others(tmp_path, monkeypatch):
    """``--plan --shard K/N`` plans that shard's entries only; the plans of both shards
    add up in one plan.csv (measurements replaced by a fixed one: no child here)."""
    from qencode_nb.batch import plan
    from qencode_nb.batch.plan_table import plan_sweep
    from qencode_nb.batch.shards import assign

    monkeypatch.setattr(plan, "measure", lambda target, options, **_: dict(MEASURED))
    targets = [str(H2_JW_UCCSD), str(H2CO_ADAPT),
               str(SHARED_DB / "H2_ccpvdz_BK_UCCSD_v4_tapered__sha256_d3f280f5c8f32ccc.json")]
    shards = assign(targets, 2)
    lines = []
    first = plan_sweep(targets, tmp_path, shard="1/2", progress=False, say=lines.append)
    assert set(first["run"]) == {t.split("/")[-1][:-5] for t in targets if shards[t] == 1}
    assert len(lines) == len(first) and set(first["shard"]) == {"1/2"}
    plan_sweep(targets, tmp_path, shard="2/2", progress=False)
    both = read_plan(tmp_path)
    assert list(both.columns) == list(PLAN_COLUMNS)
    assert sorted(both["run"]) == sorted(t.split("/")[-1][:-5] for t in targets)
    assert set(predictions(tmp_path)) == set(both["run"])
    assert not list(tmp_path.glob("*.ipynb")), "a plan runs no audit"


@pytest.mark.notebook
def test_a_plan_predicts_a_real_sweep_of_small_entries_within_a_factor_of_three(
        tmp_path, monkeypatch):
    """The CLI's plan of H2 JW/UCCSD (COBYLA, 20 evaluations) and H2CO JW/ADAPT (one
    operator) against a real full sweep of both into the same folder: each run's wall
    time and the sweep's within a factor of three of the plan's (:data:`FACTOR`); the measurement ran under
    the run's pins (numpy after the pin, one BLAS thread, the kernels the audit
    records); re-planning the finished folder reuses the kept measurements and names
    the runs the sweep keeps."""
    from qencode_nb.notebook.record import read_records

    out = tmp_path / "runs"
    monkeypatch.setenv("QENCODE_NB_PLANS", str(tmp_path / "plans"))   # measured now, here
    targets = [str(H2_JW_UCCSD), str(H2CO_ADAPT)]
    proc = subprocess.run([CLI, "sweep", *targets, "--plan", "--workers", "2", "--out",
                           str(out)], capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 3 and lines[-1].startswith("total ") and "with 2 workers" in lines[-1]
    assert lines[0].lstrip().startswith("1  ") and " -> " in lines[0]
    table = read_plan(out)
    assert list(table.columns) == list(PLAN_COLUMNS) and len(table) == 2
    assert set(table["status"]) == {"to run"} and table["failure"].isna().all()
    assert not list(out.glob("*.ipynb")), "a plan runs no audit"
    predicted = predictions(out)
    for target in targets:
        kept = json.loads(kept_path(material(target, RunOptions())).read_text())["measured"]
        assert kept["numpy_before_pin"] is False and kept["blas_threads"] == 1

    start = time.monotonic()
    run = subprocess.run([CLI, "sweep", *targets, "--workers", "1", "--out", str(out)],
                         capture_output=True, text=True, check=False, timeout=600)
    wall = time.monotonic() - start
    assert run.returncode == 0, run.stdout + run.stderr
    for target in targets:
        name = target.split("/")[-1][:-5]
        seconds = json.loads((out / f"{name}.outcome.json").read_text())["seconds"]
        assert 1 / FACTOR <= seconds / predicted[name] <= FACTOR, (name, seconds,
                                                                   predicted[name])
        kept = json.loads(kept_path(material(target, RunOptions())).read_text())["measured"]
        assert read_records(out / f"{name}.ipynb")["blas_profile"]["kernels"] == \
            kept["kernels"]
    total = sum(predicted.values()) + PLAN_SWEEP_S
    assert 1 / FACTOR <= wall / total <= FACTOR, (wall, total)
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary["predicted_seconds"]) == pytest.approx(
        [predicted[n.removesuffix(".ipynb")] for n in summary["notebook"]])

    again = subprocess.run([CLI, "sweep", *targets, "--plan", "--out", str(out)],
                           capture_output=True, text=True, check=False, timeout=600)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("(done: the sweep keeps it)") == 2
    assert again.stdout.splitlines()[-1].startswith("total 0.0 s for 0 run(s) to do")
    replanned = read_plan(out)
    assert set(replanned["status"]) == {"done"}
    assert sorted(replanned["measured_utc"]) == sorted(table["measured_utc"])
    assert len(list((tmp_path / "plans").glob("*.json"))) == 2   # kept where named
