"""The evaluation log (issue 59; qencode_nb/rerun/evaluation_log.py): every objective
evaluation a re-run's optimiser makes, in order, as JSON lines of hex floats, written
where every evaluation passes (qencode_nb/rerun/progress.py).  COBYLA, a verified kept
COBYLA path and L-BFGS-B write the same lines a plain run writes; a restart restored
from a checkpoint writes none; a damaged file is refused naming the file and the line.
The audits that write one are in tests/notebook/test_rebuilt_hamiltonian.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from qencode_nb.rerun import cobyla_path
from qencode_nb.rerun.cobyla_path import CobylaPaths
from qencode_nb.rerun.evaluation_log import EvaluationLog, read_log
from qencode_nb.rerun.progress import Progress
from qencode_nb.rerun.vqe import run_vqe

N = 4


class Energy:
    """``-sum_i cos(θ_i - 0.1 i) / 2`` (Ha), with its exact gradient (``energy_and_grad``,
    as the compiled engine has one), counting calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, p):
        self.calls += 1
        return float(-0.5 * np.cos(np.asarray(p) - 0.1 * np.arange(N)).sum())

    def energy_and_grad(self, p):
        self.calls += 1
        d = np.asarray(p) - 0.1 * np.arange(N)
        return float(-0.5 * np.cos(d).sum()), 0.5 * np.sin(d)


def _logged_run(path, *, optimizer="cobyla", paths=None, checkpoint=None, constant=0.25):
    progress = Progress(-2.0, constant, 2, 60, enabled=False)
    with EvaluationLog(path) as log:
        progress.log = log
        out = run_vqe(progress.wrap(Energy()), N, optimizer=optimizer, max_iterations=60,
                      restarts=2, seed=3, e_target=None, progress=progress, paths=paths,
                      checkpoint=checkpoint)
    return out, progress, read_log(path)


def _check_against_trace(lines, progress):
    """The log holds the trace's evaluations in order: its index, restart and energy
    (before the constant, as the optimiser got it) to the bit."""
    assert [line["i"] for line in lines] == list(range(len(lines)))
    assert len(lines) == len(progress.energies)
    starts = progress.restart_starts + [len(lines)]
    for k in range(len(starts) - 1):
        assert {line["restart"] for line in lines[starts[k]:starts[k + 1]]} == {k}
    for line, traced in zip(lines, progress.energies):
        assert float.fromhex(line["energy"]) + progress.constant_ha == traced


def test_a_cobyla_run_logs_every_evaluation_as_hex(tmp_path):
    out, progress, lines = _logged_run(tmp_path / "log.jsonl")
    assert len(lines) == out.nfev == sum(out.restart_nfev)
    _check_against_trace(lines, progress)
    assert lines[0]["x"] == tuple(float.hex(0.0) for _ in range(N))    # restart 0: zeros
    first = Energy()(np.zeros(N))
    assert lines[0]["energy"] == float.hex(first)
    raw = (tmp_path / "log.jsonl").read_text().splitlines()[0]
    assert json.loads(raw) == {"i": 0, "restart": 0, "x": ["0x0.0p+0"] * N,
                               "energy": float.hex(first)}


def test_lbfgsb_logs_each_energy_and_gradient_call(tmp_path):
    out, progress, lines = _logged_run(tmp_path / "log.jsonl", optimizer="l-bfgs-b")
    _check_against_trace(lines, progress)
    # the energy of each call at its own point, recomputed here to the bit
    for line in lines:
        x = np.array([float.fromhex(h) for h in line["x"]])
        assert float.hex(Energy().energy_and_grad(x)[0]) == line["energy"]
    # nfev is QEncode's count (steps x (1 + 2 n)), not the calls
    assert out.nfev == sum(out.restart_nfev) and len(lines) < out.nfev


def test_a_verified_cobyla_path_logs_what_a_run_of_cobyla_logs(tmp_path, monkeypatch):
    monkeypatch.setattr("qencode_nb.rules.COBYLA_PATH_MIN_S", 0.0)
    monkeypatch.delenv(cobyla_path.ENV_VAR, raising=False)
    material = {"format": 2, "kind": "vqe", "entry_sha256": "log-test"}
    _, _, plain = _logged_run(tmp_path / "plain.jsonl")
    first = CobylaPaths(material, cache_dir=tmp_path)
    _logged_run(tmp_path / "kept.jsonl", paths=first)
    if first.stored == 0:
        pytest.skip(f"no COBYLA path kept here: {first.why_off}")
    second = CobylaPaths(material, cache_dir=tmp_path)
    _, progress, verified = _logged_run(tmp_path / "verified.jsonl", paths=second)
    assert second.verified == 2 and second.ran == 0
    assert verified == plain
    _check_against_trace(verified, progress)


class _Checkpoint:
    """A checkpoint that saves every finished restart and holds those of ``restored``."""

    def __init__(self, restored=None):
        self.restored, self.saved = dict(restored or {}), {}

    def part(self, run):
        return self.restored.get(run)

    def save(self, run, doc):
        self.saved[run] = doc


def test_a_restart_restored_from_a_checkpoint_writes_nothing(tmp_path):
    first = _Checkpoint()
    _, _, full = _logged_run(tmp_path / "full.jsonl", checkpoint=first)
    _, progress, resumed = _logged_run(tmp_path / "resumed.jsonl",
                                       checkpoint=_Checkpoint({0: first.saved[0]}))
    n0 = len(first.saved[0]["trace"])
    assert n0 > 0 and len(resumed) == len(full) - n0
    assert [(r["restart"], r["x"], r["energy"]) for r in resumed] == [
        (r["restart"], r["x"], r["energy"]) for r in full[n0:]]
    assert len(progress.energies) == len(full)        # the trace is whole


def test_read_log_refuses_a_damaged_line_by_file_and_number(tmp_path):
    assert read_log(tmp_path / "missing.jsonl") == []
    (tmp_path / "empty.jsonl").write_text("")
    assert read_log(tmp_path / "empty.jsonl") == []
    path = tmp_path / "log.jsonl"
    with EvaluationLog(path) as log:
        log.write(0, [0.0, np.float64(0.5)], -1.25)
        log.write(1, np.array([0.1, -0.2]), np.float64(-1.5))
    assert log.lines == 2
    lines = read_log(path)
    assert lines[1] == {"i": 1, "restart": 1, "x": (float.hex(0.1), float.hex(-0.2)),
                        "energy": float.hex(-1.5)}
    good = path.read_text()
    for bad in ("{not json", '{"i": 2, "restart": 0, "x": [], "energy": 1.5}',
                '{"i": 2, "restart": 0, "x": ["0x1p+0"]}', '[1, 2]'):
        path.write_text(good + bad + "\n")
        with pytest.raises(ValueError, match=f"^{path}: line 3: not an evaluation"):
            read_log(path)
    with EvaluationLog(path):      # truncated when opened again
        pass
    assert read_log(path) == []
