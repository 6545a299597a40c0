"""The qencode-nb papermill engine's kernel start and its saves during a run.

A kernel that dies before its first reply is started again with new ports
(qencode_nb.executor.papermill_engine.KERNEL_START_ATTEMPTS): two runs launched at once
can be given the same port by jupyter_client (jupyter_client issue #154), which a sweep
or robustness study with two workers met as ``Kernel died before replying to
kernel_info``.  Emulated by a real kernelspec whose launcher exits before the kernel
starts for its first N launches, then runs ipykernel.  The kernel normally talks over Unix
sockets in a folder of its own, where no port can be taken (tested last, with the
fallback to TCP that the restart is for)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest

from qencode_nb.executor.papermill_engine import (DIED_STARTING, ENGINE_NAME,
                                                  KERNEL_START_ATTEMPTS)

LAUNCHER = """\
import os, sys
count = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launches")
n = int(open(count).read()) if os.path.exists(count) else 0
open(count, "w").write(str(n + 1))
if n < {deaths}:
    sys.exit(1)              # dies before binding any port, as a port clash does
from ipykernel.kernelapp import launch_new_instance
launch_new_instance()
"""


def _flaky_kernel(base: Path, deaths: int) -> Path:
    """A kernelspec ``flaky`` under ``base`` whose first ``deaths`` launches exit at once."""
    spec = base / "share" / "jupyter" / "kernels" / "flaky"
    spec.mkdir(parents=True)
    (spec / "launch.py").write_text(LAUNCHER.format(deaths=deaths))
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, str(spec / "launch.py"), "-f", "{connection_file}"],
        "display_name": "flaky", "language": "python"}))
    return spec


def _notebook(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("blas_threads = 1", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("import os; print('pid', os.getpid())")]
    nbformat.write(nb, path)
    return path


def _run(tmp_path, monkeypatch, deaths):
    import papermill
    from qencode_nb.executor import papermill_engine

    monkeypatch.setattr(papermill_engine, "MAX_SOCKET_PATH", 8)   # TCP, as on Windows

    spec = _flaky_kernel(tmp_path / "jupyter", deaths)
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter" / "share" / "jupyter"))
    out = tmp_path / "out.ipynb"
    try:
        papermill.execute_notebook(str(_notebook(tmp_path / "in.ipynb")), str(out),
                                   kernel_name="flaky", engine_name=ENGINE_NAME,
                                   progress_bar=False, start_timeout=60)
    finally:
        launches = int((spec / "launches").read_text())
    return out, launches


@pytest.mark.notebook
def test_a_kernel_that_died_starting_is_started_again(tmp_path, monkeypatch, caplog):
    out, launches = _run(tmp_path, monkeypatch, deaths=KERNEL_START_ATTEMPTS - 1)
    assert launches == KERNEL_START_ATTEMPTS
    outputs = nbformat.read(out, 4).cells[-1].outputs
    assert outputs and outputs[0]["text"].startswith("pid ")
    assert f"kernel 1 of {KERNEL_START_ATTEMPTS} died before its first reply" in caplog.text


@pytest.mark.notebook
def test_a_kernel_that_always_dies_fails_the_run_after_the_last_attempt(tmp_path, monkeypatch):
    with pytest.raises(RuntimeError, match=DIED_STARTING):
        _run(tmp_path, monkeypatch, deaths=KERNEL_START_ATTEMPTS + 5)
    assert int((tmp_path / "jupyter" / "share" / "jupyter" / "kernels" / "flaky"
                / "launches").read_text()) == KERNEL_START_ATTEMPTS


@pytest.mark.notebook
def test_a_running_notebook_is_saved_as_each_cell_starts_and_ends_in_nbformat_layout(tmp_path):
    """While a run goes on, papermill's saves (each cell's start and end) write the notebook
    as one line of JSON (papermill_engine._progress_save); what a cell reads of its own
    output file then holds every cell before it.  The finished notebook is nbformat's own
    layout (papermill's last write)."""
    import papermill

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("blas_threads = 1\nout = ''",
                                          metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("print('first cell ran')"),
                nbformat.v4.new_code_cell(
                    "import pathlib, nbformat\n"
                    "text = pathlib.Path(out).read_text()\n"
                    "seen = nbformat.reads(text, 4)\n"
                    "print(len(text.splitlines()), seen.cells[-2].outputs[0]['text'].strip())")]
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python",
                                 "display_name": "Python 3"}
    nbformat.write(nb, tmp_path / "in.ipynb")
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(str(tmp_path / "in.ipynb"), str(out), parameters={"out": str(out)},
                               kernel_name="python3", engine_name=ENGINE_NAME,
                               progress_bar=False)
    assert nbformat.read(out, 4).cells[-1].outputs[0]["text"].strip() == "1 first cell ran"
    text = out.read_text()
    assert text == nbformat.writes(nbformat.reads(text, 4)) and len(text.splitlines()) > 20


CONNECTION_CELL = (
    "import ipykernel, json, os\n"
    "info = json.loads(ipykernel.get_connection_info())\n"
    "ports = [info[k] for k in ('shell_port', 'iopub_port', 'stdin_port', 'control_port',"
    " 'hb_port')]\n"
    "sockets = [f\"{info['ip']}-{p}\" for p in ports]\n"
    "print(info['transport'], info['ip'], sum(os.path.exists(s) for s in sockets))")


def _connection(tmp_path) -> list[str]:
    """Run a notebook that prints its kernel's transport, ``ip`` and how many of its five
    channels exist as files; return the three words."""
    import papermill

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("blas_threads = 1", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(CONNECTION_CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python",
                                 "display_name": "Python 3"}
    nbformat.write(nb, tmp_path / "in.ipynb")
    papermill.execute_notebook(str(tmp_path / "in.ipynb"), str(tmp_path / "out.ipynb"),
                               kernel_name="python3", engine_name=ENGINE_NAME,
                               progress_bar=False)
    return nbformat.read(tmp_path / "out.ipynb", 4).cells[-1].outputs[0]["text"].split()


@pytest.mark.notebook
@pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets: pyzmq has no ipc on Windows")
def test_the_kernel_talks_over_unix_sockets_in_a_folder_of_its_own(tmp_path):
    """No TCP port, so no port another process's kernel can take between jupyter_client
    choosing it and the kernel binding it: ipykernel 7 hangs when that happens to its
    IOPub or heartbeat port (papermill_engine's module docstring).  The five sockets are
    files in a fresh folder while the kernel runs; the folder is gone after the run."""
    transport, prefix, sockets = _connection(tmp_path)
    assert transport == "ipc" and sockets == "5"
    folder = Path(prefix).parent
    assert folder.name.startswith("qnb-kernel-") and not folder.exists()


@pytest.mark.notebook
def test_a_socket_path_too_long_falls_back_to_tcp(tmp_path, monkeypatch):
    from qencode_nb.executor import papermill_engine

    monkeypatch.setattr(papermill_engine, "MAX_SOCKET_PATH", 8)
    transport, ip, sockets = _connection(tmp_path)
    assert (transport, ip, sockets) == ("tcp", "127.0.0.1", "0")
