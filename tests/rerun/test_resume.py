"""Resumable re-runs: the kernel killed mid-run, the audit started again with
resume=True, and the result bit-identical to an uninterrupted run (issue 16 item 6).

Each test runs the real audit notebook under the papermill CLI in a subprocess,
watches the checkpoint file grow, kills the Jupyter kernel with SIGKILL once some
restarts / ADAPT steps are saved and before the run ends, then resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from conftest import AUDIT_NB, ROOT, pinned_env
from qencode_nb import read_records
from qencode_nb.rerun.checkpoint import Checkpoint

PAPERMILL = [sys.executable, "-m", "papermill", "--no-progress-bar"]


def _env(cache: Path) -> dict:
    env = pinned_env(1)
    env["QENCODE_NB_CACHE"] = str(cache)
    env["QENCODE_NB_PROGRESS"] = "0"
    return env


def _papermill(out: Path, env: dict, **params) -> subprocess.Popen:
    args = [*PAPERMILL, str(AUDIT_NB), str(out)]
    for k, v in params.items():
        args += ["-p", k, str(v)]
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _kernel_of(proc: subprocess.Popen) -> psutil.Process | None:
    for child in psutil.Process(proc.pid).children(recursive=True):
        if "ipykernel" in " ".join(child.cmdline()):
            return child
    return None


def _kill_after(proc, cache: Path, parts: int, limit_s: float = 600) -> int:
    """SIGKILL the kernel once the checkpoint holds ``parts`` parts; the parts it held."""
    folder = cache / "checkpoints"
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        assert proc.poll() is None, "the run ended before it could be killed:\n" \
            + proc.stdout.read()
        # the checkpoint itself, not write_atomic's temporary file beside it
        # (``.tmp-<stem>-*.json``), which a kill before its os.replace leaves unread
        for f in folder.glob("[!.]*.json") if folder.exists() else []:
            try:
                held = len(json.loads(f.read_text())["parts"])
            except (OSError, ValueError, KeyError):
                continue
            if held >= parts:
                kernel = _kernel_of(proc)
                assert kernel is not None
                os.kill(kernel.pid, signal.SIGKILL)
                proc.wait(timeout=120)
                return held
        time.sleep(0.02)
    raise AssertionError("no checkpoint appeared")


def _killed_then_resumed(tmp_path, parts: int, **params):
    cache = tmp_path / "cache"
    env = _env(cache)
    whole = tmp_path / "whole.ipynb"
    ref = _papermill(whole, env, **params)
    assert ref.wait(timeout=1200) == 0, ref.stdout.read()
    assert not list((cache / "checkpoints").glob("*.json"))   # a finished run leaves none
    killed = tmp_path / "killed.ipynb"
    proc = _papermill(killed, env, **params)
    held = _kill_after(proc, cache, parts)
    assert proc.returncode != 0
    assert "done" not in read_records(killed)                  # the killed notebook is kept
    resumed = tmp_path / "resumed.ipynb"
    again = _papermill(resumed, env, resume=True, **params)
    assert again.wait(timeout=1200) == 0, again.stdout.read()
    a, b = read_records(whole), read_records(resumed)
    assert b["rerun"]["resumed_parts"] >= held >= parts
    assert b["rerun_energy"].hex() == a["rerun_energy"].hex()
    assert b["rerun"]["nfev"] == a["rerun"]["nfev"]
    assert b["rerun"]["params"] == a["rerun"]["params"]
    assert b["rerun_trace"] == a["rerun_trace"]
    assert not list((cache / "checkpoints").glob("*.json"))
    return a, b


@pytest.mark.notebook
@pytest.mark.slow
def test_a_killed_multi_restart_rerun_resumes_bit_identically(tmp_path):
    """LiH PAR/HEA (bundled; COBYLA, 10 restarts requested, 2 run) on its recorded
    backend: killed after restart 1 is saved, resumed from restart 2."""
    a, b = _killed_then_resumed(tmp_path, 1, entry="lih", mode="rerun")
    assert a["rerun"]["restarts_run"] == b["rerun"]["restarts_run"] >= 2
    assert b["rerun"]["restart_nfev"] == a["rerun"]["restart_nfev"]
    assert b["rerun"]["energy_calls"] == a["rerun"]["energy_calls"]


@pytest.mark.notebook
@pytest.mark.slow
def test_a_killed_adapt_rerun_resumes_bit_identically(tmp_path):
    """H6 JW/ADAPT (bundled; 28 operators) on the fast engine: killed after 5 steps."""
    a, b = _killed_then_resumed(tmp_path, 5, entry="h6", mode="rerun", engine="fast")
    assert b["rerun"]["selected_operator_indices"] == a["rerun"]["selected_operator_indices"]
    assert len(a["rerun"]["selected_operator_indices"]) == 28
    assert b["rerun"]["max_gradients"] == a["rerun"]["max_gradients"]


def test_a_finished_run_removes_what_a_killed_save_left(tmp_path):
    """A SIGKILL between write_atomic's temporary file and its rename leaves
    ``.tmp-<key>-*.json`` beside the checkpoint (seen once in .ci/run's resume test); the
    run that finishes removes it with its checkpoint, and nothing of another key."""
    material = {"format": 1, "kind": "vqe", "entry_sha256": "cd"}
    cp = Checkpoint(material, cache_dir=tmp_path)
    cp.save(0, {"energy": -1.0, "x": [0.5], "nfev": 3, "stop_inside": False, "calls": 3,
                "trace": [-1.0]})
    left = cp.path.with_name(f".tmp-{cp.path.stem[:16]}-killed.json")
    left.write_text("{")
    other = cp.path.with_name(".tmp-0123456789abcdef-other.json")
    other.write_text("{")
    cp.done()
    assert not cp.path.exists() and not left.exists() and other.exists()


def test_a_corrupt_or_foreign_checkpoint_is_set_aside_naming_it(tmp_path):
    """An unusable checkpoint is never resumed from: it is moved to
    ``<key>.json.corrupt`` with a CheckpointWarning naming both files, and the run
    starts over (``discarded`` says why; tests/test_faults.py shows it in a sweep)."""
    from qencode_nb.rerun.checkpoint import CheckpointWarning

    material = {"format": 1, "kind": "vqe", "entry_sha256": "ab"}
    cp = Checkpoint(material, cache_dir=tmp_path)
    cp.save(0, {"energy": -1.0, "x": [0.5], "nfev": 3, "stop_inside": False, "calls": 3,
                "trace": [-0.5, -1.0, -0.9]})
    assert Checkpoint(material, resume=True, cache_dir=tmp_path).part(0)["energy"] == -1.0
    assert Checkpoint(material, resume=False, cache_dir=tmp_path).part(0) is None
    good = cp.path.read_text()
    aside = cp.path.with_name(cp.path.name + ".corrupt")
    doc = json.loads(good)                 # another run's material under this run's name
    doc["material"] = {**doc["material"], "entry_sha256": "cd"}
    for text, why in ((json.dumps(doc), "belongs to another run"),
                      (good[:20], "is unreadable")):          # truncated
        cp.path.write_text(text)
        with pytest.warns(CheckpointWarning, match=why) as caught:
            again = Checkpoint(material, resume=True, cache_dir=tmp_path)
        assert str(cp.path) in str(caught[0].message) and str(aside) in again.discarded
        assert again.part(0) is None and again.resumed == 0 and "starts over" in again.discarded
        assert aside.read_text() == text and not cp.path.exists()
        assert Checkpoint(material, resume=True, cache_dir=tmp_path).discarded is None


@pytest.mark.notebook
def test_the_cli_passes_resume_and_a_sweep_resumes_by_default(tmp_path):
    """``qencode-nb audit --resume`` reaches the notebook; a sweep starts its runs with
    resume=True (and prints the active-space warning of LiH's split pi pair)."""
    exe = ROOT / ".venv" / "bin" / "qencode-nb"
    env = _env(tmp_path / "cache")
    out = tmp_path / "h2.ipynb"
    proc = subprocess.run([str(exe), "audit", "h2", "--mode", "rerun", "--resume", "--out",
                           str(out)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    r = read_records(out)
    assert r["rerun"]["resumed_parts"] == 0 and r["done"] is True   # nothing to resume
    import nbformat

    assert nbformat.read(str(out), as_version=4).metadata.papermill.parameters["resume"] is True
    runs = tmp_path / "runs"
    proc = subprocess.run([str(exe), "sweep", "lih", "--mode", "replay", "--out", str(runs)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    nb = nbformat.read(str(runs / "lih.ipynb"), as_version=4)
    assert nb.metadata.papermill.parameters["resume"] is True
    assert "WARNING lih: active-space boundary splits near-degenerate orbitals: MO 4 " \
        "(virtual" in proc.stdout
