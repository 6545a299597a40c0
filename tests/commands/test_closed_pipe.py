"""A reader that closes the pipe early (``qencode-nb show runs/db | head``) ends the
command quietly: exit status 0 and no ``BrokenPipeError`` traceback (qencode_nb.cli.main).

The notebook shown is a copy of ``notebooks/audit.ipynb`` marked as started by papermill
(a run that recorded nothing: ``show`` prints its card), so no kernel runs here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "qencode_nb.cli"]
LONG = "x" * 200


@pytest.fixture
def started(tmp_path) -> Path:
    """A folder of 300 audit notebooks papermill started that recorded nothing, with
    long names: ``show`` prints a line of about 260 characters each, more than a pipe
    holds (64 KiB) and ``head``'s first read together, so the writer meets the closed
    pipe whatever the timing."""
    nb = json.loads((ROOT / "notebooks" / "audit.ipynb").read_text(encoding="utf-8"))
    nb["metadata"]["papermill"] = {"parameters": {"entry": "h2"}, "exception": None}
    folder = tmp_path / "runs"
    folder.mkdir()
    text = json.dumps(nb)
    for i in range(300):
        (folder / f"h2-{i:03d}-{LONG}.ipynb").write_text(text, encoding="utf-8")
    return folder


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _into_closed_pipe(args, cwd) -> subprocess.CompletedProcess:
    """Run the CLI with standard output a pipe whose reading end is already closed."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([*CLI, *args], stdout=write, stderr=subprocess.PIPE, text=True,
                              cwd=cwd, env=_env(), timeout=300)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [["show", f"{{folder}}/h2-000-{LONG}.ipynb"], ["show", "{folder}"],
                                  ["--help"]])
def test_a_closed_pipe_ends_the_command_quietly(started, args):
    proc = _into_closed_pipe([a.format(folder=started) for a in args], started.parent)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def test_show_piped_into_head_exits_0_without_a_traceback(started):
    """The command of issue 36 as typed: ``show FOLDER | head -1`` (pipefail: the
    status is qencode-nb's)."""
    cmd = " ".join([*CLI, "show", str(started)])
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd} | head -1"],
                          capture_output=True, text=True, env=_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"h2-000-{LONG}  ")
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
