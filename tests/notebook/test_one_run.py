"""Issue 23 items 4 to 6 on real kernels and real entries: one run, one card; a dead
kernel is a failed run with its stage; typos refused before any kernel; the
parameter, tapering and failure messages."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import papermill
import psutil
import pytest
from papermill.exceptions import PapermillExecutionError

from conftest import AUDIT_NB, ROOT
from qencode_nb import read_records
from qencode_nb.notebook.record import RECORD_MIMETYPE, iter_records

CLI = [sys.executable, "-m", "qencode_nb.cli"]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "QENCODE_NB_PROGRESS": "0"}


def _card(nb) -> dict:
    """The card output of a notebook node (the pin cell's first output)."""
    for cell in nb.cells:
        for output in cell.get("outputs") or []:
            if 'class="qnb-card"' in (output.get("data") or {}).get("text/html", ""):
                return output["data"]
    raise AssertionError("no card")


# ------------------------------------------------------------ item 4: one run, one card

@pytest.mark.notebook
def test_a_second_run_in_the_same_kernel_shows_nothing_of_the_first(tmp_path):
    """JupyterLab's case: Run All with entry "h2", then entry = "lih" and Run All again in
    the same kernel.  Before: while the second run's re-run cell was still to run, the
    card said "integrity, hamiltonian, replay, rerun done" with h2's entry id and
    numbers.  Here one kernel (nbclient, kept) runs every cell with h2 (mode full),
    then the cells up to the replay with lih, as a Run All that has not reached the
    re-run yet; the card drawn then, and the file saved then (its later cells still
    hold h2's outputs), carry no record of the first run."""
    from nbclient import NotebookClient

    nb = nbformat.read(str(AUDIT_NB), as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    params.source = params.source.replace('entry = "lih"', 'entry = "h2"')
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}})
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    rerun_at = next(i for i in code if "with stage(\"rerun\")" in nb.cells[i].source)
    with client.setup_kernel(env=_env()):
        for i in code:
            client.execute_cell(nb.cells[i], i)
        first = dict(iter_records(nb))
        assert first["done"] is True and first["entry_id"].startswith("H2_")
        assert 'data-state="done"' in _card(nb)["text/html"]
        params.source = params.source.replace('entry = "h2"', 'entry = "lih"')
        for i in [i for i in code if i < rerun_at]:
            # a cell run again drops its old outputs' display ids, as JupyterLab does
            # (nbclient, made for one pass, keeps them)
            client.clear_display_id_mapping(i)
            client.execute_cell(nb.cells[i], i)
        drawn = dict(_card(nb))          # the card as the pin cell drew it
        # what the card shows now, before the re-run cell (as CARD.update() draws it)
        nb.cells.append(nbformat.v4.new_code_cell("CARD.update();"))
        client.execute_cell(nb.cells[-1], len(nb.cells) - 1)
        nb.cells.pop()
    now = _card(nb)
    for data in (drawn, now):
        text, html = data["text/plain"], data["text/html"]
        assert text.startswith("Audit running"), text
        assert "H2_" not in text and "H2_" not in html
        assert "rerun" not in text.splitlines()[0], text   # no "rerun done" of the first run
        assert 'data-state="running"' in html
    assert now["text/plain"].startswith("Audit running: integrity, hamiltonian, replay done")
    assert 'data-entry-id="LiH_ccpvdz_PAR_HEA_v4_tapered__sha256_e94da71e7eb3b98e"' in \
        now["text/html"]
    # The file as JupyterLab would save it now: the cells after the replay still hold
    # the first run's outputs; read back, only the second run's records count.
    path = tmp_path / "two-runs.ipynb"
    nbformat.write(nb, str(path))
    every = list(iter_records(nb, every_run=True))
    assert ("done", True) in every and len({n for n, _ in every}) > len(dict(iter_records(nb)))
    r = read_records(path)
    assert r["entry_id"].startswith("LiH_") and r["parameters_in_force"]["entry"] == "lih"
    for name in ("done", "rerun", "tiers", "verdict", "works_on_my_qpu", "error_mha"):
        assert name not in r, name
    from qencode_nb.readout.collect import collect

    row = collect([path]).iloc[0]
    assert row["status"] == "partial" and row["entry_id"].startswith("LiH_")


# ---------------------------------------------- item 4: a dead kernel is a failed run

def _kill_kernel_during_rerun(out: Path) -> threading.Thread:
    """SIGKILL the Jupyter kernel under this process once ``out`` shows the re-run
    cell running (the replay record written), from a thread."""
    def kill():
        t0 = time.monotonic()
        while time.monotonic() - t0 < 300:
            try:
                if '"name": "replay"' in out.read_text():
                    break
            except OSError:
                pass
            time.sleep(0.05)
        time.sleep(1.0)
        for child in psutil.Process().children(recursive=True):
            if "ipykernel" in " ".join(child.cmdline()):
                os.kill(child.pid, signal.SIGKILL)
    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


@pytest.mark.notebook
def test_a_killed_kernel_is_a_failed_run_with_its_stage_and_reason(tmp_path, monkeypatch):
    """LiH PAR/HEA (mode rerun), its kernel killed with SIGKILL during the re-run.
    Before: under stock papermill collect said "partial" and the card stayed "Audit
    running"; under the runner the reason read "run: DeadKernelError: DeadKernelError:
    Kernel died".  Now both are failed runs naming the stage (rerun) and the reason once,
    and the runner's card (qencode-nb audit, sweeps) is redrawn as failed."""
    from qencode_nb.errors import RunFailed
    from qencode_nb.executor.execute import run_notebook
    from qencode_nb.readout.collect import audit_table, collect
    from qencode_nb.verdict.card import redraw_card

    monkeypatch.setenv("QENCODE_NB_PROGRESS", "0")
    stock = tmp_path / "stock.ipynb"
    killer = _kill_kernel_during_rerun(stock)
    with pytest.raises(Exception) as raised:
        papermill.execute_notebook(str(AUDIT_NB), str(stock), progress_bar=False,
                                   parameters={"entry": "lih", "mode": "rerun"}, cwd=str(ROOT))
    killer.join()
    assert type(raised.value).__name__ == "DeadKernelError"
    row = collect([stock]).iloc[0]
    assert row["status"] == "failed", row["failure"]
    assert row["failure"].startswith("rerun: NoReply: the kernel never answered this stage's "
                                     "cell: it died or was killed")
    assert audit_table([stock]).iloc[0]["failure"] == row["failure"]

    ran = tmp_path / "runner.ipynb"
    killer = _kill_kernel_during_rerun(ran)
    with pytest.raises(RunFailed) as failed:
        run_notebook(AUDIT_NB, ran, {"entry": "lih", "mode": "rerun"})
    killer.join()
    assert str(failed.value) == f"{ran}: DeadKernelError: Kernel died"
    r = read_records(ran)
    assert r["error"] == {"stage": "rerun", "type": "DeadKernelError", "message": "Kernel died"}
    assert r["replay"]["status"] == "n/a" and "done" not in r
    row = collect([ran]).iloc[0]
    assert row["status"] == "failed" and row["failure"] == "rerun: DeadKernelError: Kernel died"
    assert redraw_card(ran)
    card = _card(nbformat.read(str(ran), as_version=4))
    assert card["text/plain"].splitlines()[0] == "FAILED rerun: DeadKernelError: Kernel died"
    assert 'data-state="failed"' in card["text/html"]


# ------------------------------------------------- item 5: typos before any kernel

def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_typo_is_refused_before_any_kernel_with_nothing_written(tmp_path):
    """Before: `qencode-nb audit lhi` ran a kernel, exited 1 and left runs/audit/lhi.ipynb,
    a failed audit for a later report.  Now exit 2, nothing written, and the closest
    bundled name (difflib) or file; the same for sweep, study and robustness targets."""
    db = ROOT.parent / "shared" / "qencode-v4" / "db"
    cases = [
        (["audit", "lhi"], "field entry: 'lhi' is neither a file nor a bundled entry; did "
                           "you mean 'lih'? accepted: a bundled name (bh, h2, h6, lih) or the "
                           "path of a .json / .yaml entry"),
        (["audit", str(tmp_path / "nope.json")],
         f"field entry: no such file '{tmp_path / 'nope.json'}'; accepted: a bundled name "
         "(bh, h2, h6, lih) or the path of an existing .json / .yaml entry"),
        (["audit", str(ROOT / "params" / "lhi.yaml")], "did you mean 'lih.yaml'?"),
        (["sweep", "h2", "LIH", "--out", "s"], "field targets: 'LIH' is neither a folder, a "
                                               "file nor a bundled entry; did you mean 'lih'? "
                                               "accepted: a bundled name (bh, h2, h6, lih), the "
                                               "path of a .json / .yaml entry or a folder of "
                                               ".json entries"),
        (["study", "threads", "h6x", "--out", "t"], "field entry: 'h6x' is neither a file "
                                                    "nor a bundled entry; did you mean 'h6'?"),
        (["robustness", "lhi", "--out", "r"], "did you mean 'lih'?"),
    ]
    if db.is_dir():
        cases.append((["audit", str(db / "LiH_ccpvdz_PAR_HEA_v4_tapered.json")],
                      "did you mean 'LiH_ccpvdz_PAR_HEA_v4_tapered__sha256_e94da71e7eb3b98e"
                      ".json'?"))
    for args, message in cases:
        t0 = time.monotonic()
        proc = subprocess.run(CLI + args, cwd=tmp_path, env=_env(), capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert _files(tmp_path) == [], (args, _files(tmp_path))
        assert time.monotonic() - t0 < 60


@pytest.mark.notebook
def test_an_entry_that_never_loaded_answers_unknown_not_no(tmp_path):
    """papermill run directly with a typo: the run fails in its load stage; the five
    "Works on my QPU" questions read "unknown" (before: five red "no" blaming the
    entry), on the card and in the record a report reads."""
    from qencode_nb.readout.report_tables import qpu_answers
    from qencode_nb.verdict.qpu_questions import QUESTIONS

    out = tmp_path / "lhi.ipynb"
    with pytest.raises(PapermillExecutionError):
        papermill.execute_notebook(str(AUDIT_NB), str(out), parameters={"entry": "lhi"},
                                   progress_bar=False, cwd=str(ROOT))
    r = read_records(out)
    assert r["error"]["stage"] == "load" and "did you mean 'lih'?" in r["error"]["message"]
    answers = qpu_answers(r)
    assert list(answers) == list(QUESTIONS)
    assert {a for a, _ in answers.values()} == {"unknown"}
    assert all(why.startswith("unknown: the entry was never read") for _, why in
               answers.values())
    card = _card(nbformat.read(str(out), as_version=4))
    assert card["text/plain"].count(" unknown") == 5 and " no" not in \
        card["text/plain"].split("works on my QPU:")[1]


# ------------------------------------------------------------------- item 6: messages

def _variant(tmp_path, cell_source: str) -> str:
    """audit.ipynb with a cell inserted between the parameters cell and the pin cell."""
    nb = json.loads(AUDIT_NB.read_text())
    at = next(i for i, c in enumerate(nb["cells"]) if "parameters" in c["metadata"].get("tags", []))
    nb["cells"].insert(at + 1, {"cell_type": "code", "execution_count": None, "id": "c0ffee01",
                                "metadata": {}, "outputs": [], "source": cell_source})
    path = tmp_path / "variant.ipynb"
    path.write_text(json.dumps(nb))
    return str(path)


@pytest.mark.notebook
def test_a_parameter_reassigned_before_the_pin_cell_is_named_as_such(tmp_path):
    """Before: a cell between the (tagged) parameters cell and the pin cell that sets
    `entry` was refused as "unknown parameter(s) engine, mode; accepted: entry" (more
    than one parameter given) or as "not tagged 'parameters'" (only entry given).
    Now one line names the parameter, the value set and the value in force."""
    src = _variant(tmp_path, 'entry = "lih"')
    for name, params, want in [
        ("several", {"entry": "h2", "mode": "replay", "engine": "fast"},
         "a cell between the parameters and the pin cell reassigned entry (injected 'h2', "
         "in force 'lih'); accepted: parameters are set only in the parameters cell or by "
         "papermill"),
        ("one", {"entry": "h2"},
         "a cell between the parameters and the pin cell reassigned entry (injected 'h2', "
         "in force 'lih'); accepted: parameters are set only in the parameters cell or by "
         "papermill")]:
        out = tmp_path / f"{name}.ipynb"
        with pytest.raises(PapermillExecutionError):
            papermill.execute_notebook(src, str(out), parameters=params, progress_bar=False,
                                       cwd=str(ROOT))
        err = read_records(out)["error"]
        assert err["stage"] == "parameters" and err["type"] == "ParameterError"
        assert err["message"] == want


def test_capture_finds_the_parameters_cell_from_papermills_cell():
    """The kernel's input history as papermill (and a kept kernel) leaves it."""
    from qencode_nb.errors import ParameterError
    from qencode_nb.notebook.contract import capture

    params = 'entry = "lih"\nmode = "full"\nengine = None'
    injected = '# Parameters\nentry = "h2"\nmode = "replay"\n'
    ns = {"entry": "h2", "mode": "replay", "engine": None}
    assert capture(ns, [params, injected, "PIN"]) == ns
    # a second papermill-style run in a kept kernel: the first run's cells are not this one's
    again = [params, '# Parameters\nentry = "lih"\n', "PIN", 'record("done", True)']
    assert capture(ns, again + [params, injected, "PIN"]) == ns
    with pytest.raises(ParameterError, match=r"^a cell between the parameters and the pin "
                                             r"cell reassigned mode \(parameters cell "
                                             r"'full', in force 'rerun'\)"):
        capture({**ns, "mode": "rerun"}, [params, '# Parameters\nentry = "h2"\n',
                                          'mode = "rerun"', "PIN"])
    with pytest.raises(ParameterError, match="not tagged 'parameters'"):   # really untagged
        capture({"entry": "lih", "mode": "full", "engine": None}, [injected, params, "PIN"])
    with pytest.raises(ParameterError, match=r"^unknown parameter\(s\) entyr; accepted: "
                                             r"entry, mode, engine$"):
        capture(ns, [params, '# Parameters\nentyr = "h2"\n', "PIN"])


def test_a_declared_tapering_the_rebuild_does_not_find_is_named_by_its_field(tmp_path):
    """A YAML of one's own declaring 2 Z2 symmetries where the rebuild of its procedure
    (H2 JW) finds 3: one line with the field, the value, the declared and rebuilt
    counts and what is accepted, before any PennyLane operator is built on it."""
    from qencode_nb.entry import load
    from qencode_nb.errors import RebuildMismatch
    from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild
    from qencode_nb.rerun.problem import build_problem

    text = (ROOT / "params" / "h2.yaml").read_text()
    text = (text.replace("tapering_sectors: [1, -1, -1]", "tapering_sectors: [1, -1]")
            .replace("hf_tapered_state: [1]", "hf_tapered_state: [1, 0]")
            .replace("tapered_num_qubits: 1", "tapered_num_qubits: 2"))
    path = tmp_path / "h2-two-symmetries.yaml"
    path.write_text(text)
    entry = load(str(path))
    rebuilt = rebuild(entry)
    record = hamiltonian_check(entry, rebuilt)
    assert (record.z2_symmetries_stored, record.z2_symmetries_rebuilt) == (2, 3)
    with pytest.raises(RebuildMismatch) as err:
        build_problem(entry, rebuilt, None, record)
    assert str(err.value).startswith(
        f"{path}: field encoding.tapering_sectors: [1, -1] declares 2 Z2 symmetries (2 "
        "tapered qubits); the rebuild of the declared procedure finds 3, sectors [1, -1, -1] "
        "(1 tapered qubit); accepted: 3 sectors")
    assert "\n" not in str(err.value) and "OpenBLAS" not in str(err.value)  # HF orbitals


@pytest.mark.notebook
def test_no_failure_names_its_type_twice(tmp_path, monkeypatch):
    """Before: "run: RunTimeout: RunTimeout: ..." in a sweep's row and the notebook, and
    "DeadKernelError: DeadKernelError: ..." from the runner.  A real per-run timeout
    (H2, 1 s: killed while its kernel starts) and an error record an older runner wrote."""
    from qencode_nb.notebook.stages import failure_line
    from qencode_nb.batch.sweep import sweep

    monkeypatch.setenv("QENCODE_NB_PROGRESS", "0")
    table = sweep(["h2"], tmp_path / "runs", mode="replay", timeout=1, progress=False,
                  plot=False)
    row = table.iloc[0]
    assert row["status"] == "failed"
    assert "RunTimeout: the run exceeded the per-run timeout of 1 s" in row["failure"]
    assert row["failure"].count("RunTimeout") == 1, row["failure"]
    err = read_records(tmp_path / "runs" / "h2.ipynb")["error"]
    assert err["type"] == "RunTimeout" and not err["message"].startswith("RunTimeout")
    outcome = json.loads((tmp_path / "runs" / "h2.outcome.json").read_text())
    assert outcome["failure"].count("RunTimeout") == 1
    old = {"stage": "run", "type": "DeadKernelError", "message": "DeadKernelError: Kernel died"}
    assert failure_line(old) == "run: DeadKernelError: Kernel died"
