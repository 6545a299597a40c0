"""What a run prints: a successful one no kernel noise, a failed one its reason first.

Real kernels throughout (papermill's CLI, the ``qencode-nb`` CLI, subprocesses whose
stderr the kernel inherits).  The two kernel messages (ipykernel's own, issue 15) and
why the ``qencode-nb`` engine no longer triggers them:
:mod:`qencode_nb.executor.papermill_engine`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import nbformat
import pytest

from conftest import AUDIT_NB, LIH_PAR_HEA, ROOT
from qencode_nb import read_records
from qencode_nb.notebook.record import RECORD_MIMETYPE

PAPERMILL = ROOT / ".venv" / "bin" / "papermill"
QENCODE_NB = ROOT / ".venv" / "bin" / "qencode-nb"

#: ipykernel's two messages (kernelapp.py init_sockets; kernelbase.py dispatch_shell).
TCP_WARNING = "Kernel is running over TCP without encryption"
INTERRUPT = "KeyboardInterrupt caught in kernel"

#: A bad mapping's reason (an entry file that exists, so it reaches the kernel: a name
#: or path that does not exist is refused before any kernel, issue 23), as the ``error``
#: record holds it: the record's keys are a contract.
BAD_MAPPING = ("field encoding.mapping: 'qubit_magic' is not accepted; accepted "
               "(case-insensitive): bk, bravyi-kitaev, bravyi_kitaev, jordan-wigner, "
               "jordan_wigner, jw, p, par, parity")

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _assert_quiet(stderr: str) -> None:
    assert TCP_WARNING not in stderr, stderr
    assert INTERRUPT not in stderr, stderr


def _lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


def _failing_cell_outputs(path) -> list:
    """The outputs a reader sees in the cell that raised (records, which show
    nothing, left out), in order."""
    nb = nbformat.read(str(path), as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code"
             and any(o.output_type == "error" for o in c.outputs)]
    assert len(cells) == 1, [c.source[:60] for c in cells]
    return [o for o in cells[0].outputs if RECORD_MIMETYPE not in (o.get("data") or {})]


@pytest.mark.notebook
def test_a_successful_run_prints_no_kernel_message(tmp_path):
    """``papermill --engine qencode-nb`` and ``qencode-nb audit``: nothing from the
    kernel on stderr (papermill's own two header lines only)."""
    out = tmp_path / "lih.ipynb"
    proc = subprocess.run([str(PAPERMILL), str(AUDIT_NB), str(out), "-p", "entry", "lih",
                           "-p", "mode", "replay", "--engine", "qencode-nb",
                           "--no-progress-bar"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    _assert_quiet(proc.stderr)
    assert read_records(out)["done"] is True
    proc = subprocess.run([str(QENCODE_NB), "audit", "lih", "--mode", "replay", "--out",
                           str(tmp_path / "cli.ipynb")], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""      # no kernel message, no progress bar off a terminal
    assert proc.stdout.splitlines()[1] == f"executed notebook: {tmp_path / 'cli.ipynb'}"


#: A cell that makes the kernel linger in its handler of the next kernel_info_request
#: after sending the reply (as a loaded machine may deschedule it there): the
#: shutdown's SIGINT then lands inside the handler, where ipykernel raises
#: KeyboardInterrupt instead of ignoring it.
SLOW_KERNEL_INFO = '''import time
kernel = get_ipython().kernel
reply = kernel.kernel_info_request
async def slow(stream, ident, parent):
    await reply(stream, ident, parent)
    time.sleep(0.5)
kernel.shell_handlers["kernel_info_request"] = slow'''

RUN_GRACEFUL = '''import sys, papermill
papermill.execute_notebook(sys.argv[1], sys.argv[2], engine_name=sys.argv[3] or None,
                           progress_bar=False, shutdown_kernel="graceful")'''


def _parameters_cell():
    """The tagged parameters cell the notebook contract asks of every notebook."""
    cell = nbformat.v4.new_code_cell("blas_threads = 1")
    cell.metadata["tags"] = ["parameters"]
    return cell


@pytest.mark.notebook
def test_the_shutdown_interrupt_finds_the_kernel_idle(tmp_path):
    """The kernel is stopped only once it reported idle: the interrupt that
    jupyter_client sends before every shutdown is then ignored.  Papermill's own
    engine shows both messages on the same notebook (the README's troubleshooting
    line); a graceful shutdown leaves the kernel time to print."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [_parameters_cell(), nbformat.v4.new_code_cell(SLOW_KERNEL_INFO)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    src = tmp_path / "slow.ipynb"
    nbformat.write(nb, str(src))
    ours, stock = (subprocess.run([sys.executable, "-c", RUN_GRACEFUL, str(src),
                                   str(tmp_path / f"{name or 'stock'}.ipynb"), name],
                                  capture_output=True, text=True, cwd=ROOT)
                   for name in ("qencode-nb", ""))
    assert ours.returncode == 0 and stock.returncode == 0, (ours.stderr, stock.stderr)
    _assert_quiet(ours.stderr)
    assert TCP_WARNING in stock.stderr and INTERRUPT in stock.stderr, stock.stderr


@pytest.mark.notebook
def test_a_failed_audit_leads_with_its_reason(tmp_path):
    """``qencode-nb audit`` of an entry with a bad mapping: stderr's first line is the
    reason (stage: type: message, naming the field and the value), then the executed
    notebook, then (--traceback) the failing cell's traceback; in the notebook,
    papermill's banner carries the reason and the failing cell's first output is the
    message."""
    raw = json.loads(LIH_PAR_HEA.read_text())
    raw["encoding"]["mapping"] = "qubit_magic"
    entry = tmp_path / "badmap.json"
    entry.write_text(json.dumps(raw))
    out = tmp_path / "bad.ipynb"
    proc = subprocess.run([str(QENCODE_NB), "audit", str(entry), "--out", str(out),
                           "--traceback"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    _assert_quiet(proc.stderr)
    message = f"{entry}: {BAD_MAPPING}"
    reason = f"load: EntryError: {message}"
    lines = _lines(proc.stderr)
    assert lines[0] == f"qencode-nb: audit failed: {reason}", proc.stderr
    assert lines[1] == f"executed notebook: {out}"
    assert lines[2] == f"EntryError: {message}"                      # the cell's traceback
    assert lines[3].startswith("  at Cell In[") and "qencode_nb/entry/" in lines[3]
    assert proc.stdout == ""
    assert read_records(out)["error"] == {"stage": "load", "type": "EntryError",
                                          "message": message}        # the contract
    banner = nbformat.read(str(out), as_version=4).cells[0]
    assert "An Exception was encountered" in banner.source and reason in banner.source
    first = _failing_cell_outputs(out)[0]
    assert first.output_type == "error" and first.ename == "EntryError"
    assert [ANSI.sub("", t) for t in first.traceback][0] == lines[2]
    assert len(first.traceback) == 2                                 # no library frames


@pytest.mark.notebook
def test_stock_papermill_ends_with_the_reason(tmp_path):
    """Plain ``papermill`` (its own engine) still prints its own traceback of the
    papermill process; what the kernel contributes is the message and where it was
    raised, and those are the last lines."""
    out = tmp_path / "mode.ipynb"
    proc = subprocess.run([str(PAPERMILL), str(AUDIT_NB), str(out), "-p", "mode", "fast",
                           "--no-progress-bar"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 1
    lines = _lines(proc.stderr)
    assert lines[-3].startswith("Exception encountered at "), lines[-6:]
    assert lines[-2] == ("ParameterError: mode 'fast' is not accepted; accepted: full, "
                         "replay, rerun")
    assert lines[-1].startswith("  at Cell In[") and "options.py:" in lines[-1]
    assert read_records(out)["error"]["stage"] == "parameters"


FOREIGN = '''from qencode_nb.notebook.stages import stage
with stage("hamiltonian"):
    {}["no such key"]'''


@pytest.mark.notebook
def test_any_exception_in_a_stage_is_announced_above_its_traceback(tmp_path):
    """An exception that is not qencode-nb's (a library's KeyError) keeps IPython's full
    traceback, below one readable line; the sweep lists the failure first with its
    notebook."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [_parameters_cell(), nbformat.v4.new_code_cell(FOREIGN)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    src = tmp_path / "foreign.ipynb"
    nbformat.write(nb, str(src))
    from qencode_nb.errors import RunFailed
    from qencode_nb.executor.execute import run_notebook

    out = tmp_path / "foreign_out.ipynb"
    with pytest.raises(RunFailed, match="KeyError"):
        run_notebook(src, out, {})
    assert read_records(out)["error"] == {"stage": "hamiltonian", "type": "KeyError",
                                          "message": "'no such key'"}
    first, second = _failing_cell_outputs(out)[:2]
    assert first.output_type == "display_data"
    assert first.data["text/plain"].splitlines()[0] == \
        "FAILED hamiltonian: KeyError: 'no such key'"
    assert "qnb-stage-failure" in first.data["text/html"]
    assert second.output_type == "error" and len(second.traceback) > 2   # IPython's own


@pytest.mark.notebook
def test_a_sweep_lists_its_failed_runs_first(tmp_path):
    bad = tmp_path / "badmap.yaml"
    bad.write_text((ROOT / "params" / "lih.yaml").read_text()
                   .replace("mapping: parity", "mapping: warp_map"))
    runs = tmp_path / "runs"
    proc = subprocess.run([str(QENCODE_NB), "sweep", str(bad), "--mode", "replay", "--out",
                           str(runs)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    _assert_quiet(proc.stderr)
    lines = _lines(proc.stdout)
    assert lines[0].startswith("FAILED badmap: load: EntryError: ")
    assert "field encoding.mapping: 'warp_map' is not accepted" in lines[0]
    assert lines[1] == f"  executed notebook: {runs / 'badmap.ipynb'}"
    assert lines[2].startswith("0/1 audits done")
