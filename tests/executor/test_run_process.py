"""A run's own process (qencode_nb.executor.run_process): forked from a warm pool
worker or a fresh ``python -m qencode_nb.executor.execute``, the same audit, the same
one-line reasons, and nothing left running after a timeout."""

from __future__ import annotations

import threading
import time

import psutil
import pytest

from conftest import SHARED_DB
from qencode_nb.errors import ParameterError, RunTimedOut
from qencode_nb.executor import run_process
from qencode_nb.notebook.record import read_records
from qencode_nb.paths import NOTEBOOKS, ROOT

H2_JW_UCCSD = SHARED_DB / "H2_ccpvdz_JW_UCCSD_v4_tapered__sha256_93a0f8a8604d9aed.json"
H4_UCCSD = SHARED_DB / "H4_ccpvdz_JW_UCCSD_v4_tapered__sha256_7606caf47ff39f40.json"
AUDIT = NOTEBOOKS / "audit.ipynb"


def test_start_method_is_fork_only_where_safe(monkeypatch):
    monkeypatch.delenv("QENCODE_NB_RUN_PROCESS", raising=False)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert run_process.start_method() == "fork"
    monkeypatch.setattr(threading, "active_count", lambda: 3)   # e.g. a Dask worker
    assert run_process.start_method() == "subprocess"
    monkeypatch.setenv("QENCODE_NB_RUN_PROCESS", "fork")
    assert run_process.start_method() == "fork"
    monkeypatch.setenv("QENCODE_NB_RUN_PROCESS", "spawn")
    with pytest.raises(ParameterError, match="QENCODE_NB_RUN_PROCESS 'spawn' is not "
                                             "accepted; accepted: fork, subprocess"):
        run_process.start_method()


@pytest.mark.notebook
def test_fork_and_subprocess_give_the_same_audit_and_the_same_reasons(tmp_path, monkeypatch):
    records, reasons = {}, {}
    for method in run_process.START_METHODS:
        monkeypatch.setenv("QENCODE_NB_RUN_PROCESS", method)
        out = tmp_path / method
        assert run_process.run_isolated(AUDIT, out / "h2.ipynb",
                                        {"entry": str(H2_JW_UCCSD), "mode": "replay"},
                                        cwd=str(ROOT)) is None
        records[method] = read_records(out / "h2.ipynb")
        reasons[method] = run_process.run_isolated(
            AUDIT, out / "missing.ipynb", {"entry": str(tmp_path / "missing.json")},
            cwd=str(ROOT)).replace(str(out), "OUT")
        reasons[method + " parameter"] = run_process.run_isolated(
            AUDIT, out / "typo.ipynb", {"entyr": "lih"}, cwd=str(ROOT)).replace(str(out), "OUT")
    fork, sub = records["fork"], records["subprocess"]
    assert fork["done"] is True and sub["done"] is True
    assert fork["replay"]["energy_hex"] == sub["replay"]["energy_hex"]
    assert fork["replay"]["status"] == "pass"
    assert reasons["fork"] == reasons["subprocess"]
    assert "EntryError" in reasons["fork"] and reasons["fork"].count("\n") == 0
    assert reasons["fork parameter"] == reasons["subprocess parameter"]
    assert "unknown parameter(s) entyr; accepted: entry" in reasons["fork parameter"]


@pytest.mark.notebook
def test_a_forked_run_past_its_timeout_is_killed_with_its_kernel(tmp_path, monkeypatch):
    """Every process the run started (the fork, its kernel) is watched while it
    runs; after the timeout none is alive (an orphaned kernel would be too)."""
    monkeypatch.setenv("QENCODE_NB_RUN_PROCESS", "fork")
    me, seen, running = psutil.Process(), set(), threading.Event()
    before = {p.pid for p in me.children(recursive=True)}

    def watch():
        while not running.is_set():
            seen.update(p.pid for p in me.children(recursive=True))
            time.sleep(0.2)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        # H4 JW/UCCSD in full mode re-runs 1000 COBYLA steps (~1 min); 15 s cannot.
        with pytest.raises(RunTimedOut):
            run_process.run_isolated(AUDIT, tmp_path / "h4.ipynb",
                                     {"entry": str(H4_UCCSD), "mode": "full"},
                                     timeout=15, cwd=str(ROOT))
    finally:
        running.set()
        watcher.join()
    started = seen - before
    assert len(started) >= 2, "the fork and its kernel were seen"
    alive = [pid for pid in started if psutil.pid_exists(pid)
             and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert not alive, f"processes left running after the timeout: {alive}"
    assert read_records(tmp_path / "h4.ipynb").get("done") is not True


@pytest.mark.parametrize("content", [b"", b'{"cells": [{"cell_type": "co'])
def test_a_run_killed_mid_save_still_gets_its_reason(tmp_path, content):
    """A notebook left empty or cut short (papermill wrote it in place; a kill between
    its truncation and its write left it so, and a 1-s sweep timeout met it in CI): the
    runner's failure record is still written, in a new notebook that says why."""
    from qencode_nb.executor.execute import mark_failed

    nb = tmp_path / "run.ipynb"
    nb.write_bytes(content)
    mark_failed(nb, "run", "RunTimeout", "the run exceeded the per-run timeout of 1 s")
    error = read_records(nb)["error"]
    assert (error["stage"], error["type"]) == ("run", "RunTimeout")
    assert error["message"] == ("the run exceeded the per-run timeout of 1 s (its notebook "
                                "could not be read: NotJSONError; this one holds the reason)")

