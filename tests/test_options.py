"""Every run parameter is checked in one place (issue 38, item 1): ``qencode_nb.options``.

A wrong value given to the audit notebook, the CLI, a sweep, a study or a robustness
study is refused by the same check: the same class (:class:`ParameterError`), the same
parameter and the same sentence with the same accepted set, taken from where the set
lives (the engines registry, the kernel profiles); nothing is run or written first.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import AUDIT_NB, H2_JW_UCCSD, ROOT
from qencode_nb.engines import registry
from qencode_nb.errors import ParameterError, RunFailed
from qencode_nb.notebook import blas_profiles
from qencode_nb.engines.selection import HAMILTONIANS
from qencode_nb.options import (MODES, RunOptions, audit_parameters, check_coretype,
                                check_engine, check_evaluation_log, check_hamiltonian,
                                check_seconds, check_stack, check_threads, with_changes)

#: One wrong value per parameter, and the library's sentence for it (parameter, detail).
WRONG = {
    "engine": ("gpu", "'gpu' is not accepted; accepted: None (the recorded backend), "
               + ", ".join(registry.names())),
    "blas_threads": (0, "0 is not accepted; accepted: an integer >= 1"),
    "mode": ("bogus", "'bogus' is not accepted; accepted: " + ", ".join(MODES)),
    "hamiltonian": ("generator", "'generator' is not accepted; accepted: stored, rebuilt"),
}


def _refusal(call) -> tuple[str, str]:
    with pytest.raises(ParameterError) as err:
        call()
    return err.value.parameter, err.value.detail


def test_the_accepted_sets_come_from_their_sources():
    assert WRONG["engine"][1].endswith("qnode, faithful, statevector, sector, fast")
    detail = _refusal(lambda: check_coretype("bogus"))[1]
    for value in blas_profiles.accepted_values():
        assert value in detail
    registry.register("toy-name", registry.get("sector"))
    try:   # a new registration is accepted at once, and listed
        assert check_engine("Toy-Name") == "toy-name"
        assert _refusal(lambda: check_engine("gpu"))[1].endswith("fast, toy-name")
    finally:
        registry.unregister("toy-name")
    assert check_stack(None) == "current"
    assert _refusal(lambda: check_stack("Not A Name", ready=False))[0] == "stack"
    for bad in (0, -1, float("nan"), True, "5"):
        assert _refusal(lambda: check_seconds(bad, "timeout"))[0] == "timeout"
    assert check_seconds(0, "proof_budget", zero=True) == 0


def test_run_options_are_checked_when_built_and_when_changed():
    opts = RunOptions(engine=" Sector ", blas_coretype="haswell")
    assert (opts.engine, opts.blas_coretype, opts.stack) == ("sector", "Haswell", "current")
    for name, (value, detail) in WRONG.items():
        assert _refusal(lambda: RunOptions(**{name: value})) == (name, detail)
        assert _refusal(lambda: with_changes(opts, {name: value})) == (name, detail)
    assert _refusal(lambda: RunOptions(workers=0)) == (
        "workers", "0 is not accepted; accepted: an integer >= 1")
    RunOptions(workers=0, scheduler="tcp://host:8786")   # the scheduler's workers count
    with pytest.raises(TypeError, match="colour is not an option; accepted: blas_coretype"):
        with_changes(None, {"colour": "red"})


def test_the_notebook_frame_checks_with_the_same_sentences():
    base = dict(mode="full", engine=None, blas_threads=1, blas_coretype=None,
                proof_budget=60, stack="current")
    assert audit_parameters(**base)["stack"] == "current"
    for name, (value, detail) in WRONG.items():
        assert _refusal(lambda: audit_parameters(**{**base, name: value})) == (name, detail)
    assert check_threads(2) == 2


@pytest.mark.notebook
@pytest.mark.parametrize("name", sorted(WRONG))
def test_each_entry_point_refuses_a_wrong_value_the_same_way(name, tmp_path):
    """The notebook (its frame records the refusal), the CLI (the flag as typed), a sweep,
    a study and a robustness study: one class, one sentence; nothing run or written."""
    from qencode_nb.batch.sweep import sweep
    from qencode_nb.executor.execute import run_notebook
    from qencode_nb.notebook.record import read_records
    from qencode_nb.studies.blas import threads_study
    from qencode_nb.studies.robustness import robustness

    value, detail = WRONG[name]
    out = tmp_path / "runs"
    said = {"sweep": _refusal(lambda: sweep([str(H2_JW_UCCSD)], out, progress=False,
                                            **{name: value})),
            "study": _refusal(lambda: threads_study(str(H2_JW_UCCSD), out_dir=out,
                                                    progress=False, **{name: value})),
            "robustness": _refusal(lambda: robustness([str(H2_JW_UCCSD)], out, progress=False,
                                                      **{name: value}))
            if name != "blas_threads" else   # robustness varies threads on its own axis
            _refusal(lambda: robustness([str(H2_JW_UCCSD)], out, threads=[0], progress=False))}
    assert {d for _, d in said.values()} == {detail}, said
    assert {p for p, _ in said.values()} == (
        {"blas_threads", "threads"} if name == "blas_threads" else {name}), said
    assert not out.exists(), "refused before anything was written"
    flag = {"engine": "--engine", "blas_threads": "--threads", "mode": "--mode",
            "hamiltonian": "--hamiltonian"}[name]
    cli = subprocess.run([sys.executable, "-m", "qencode_nb.cli", "audit", str(H2_JW_UCCSD),
                          flag, str(value), "--out", str(tmp_path / "cli.ipynb")],
                         capture_output=True, text=True, cwd=ROOT)
    assert cli.returncode == 2 and cli.stderr.strip() == f"qencode-nb: {flag} {detail}"
    assert not (tmp_path / "cli.ipynb").exists()
    nb = tmp_path / "nb.ipynb"
    with pytest.raises(RunFailed, match=re.escape(f"ParameterError: {name} {detail}")):
        run_notebook(AUDIT_NB, nb, {"entry": "h2", name: value})
    error = read_records(nb)["error"]
    assert (error["stage"], error["type"], error["message"]) == (
        "parameters", "ParameterError", f"{name} {detail}")


def test_hamiltonian_and_evaluation_log_are_refused_naming_them(tmp_path):
    """issue 59: ``hamiltonian`` is one of :data:`HAMILTONIANS`; ``evaluation_log`` None or
    the path of a file whose folder exists; each refusal names the parameter, the value
    and the accepted set, in the notebook frame's check too."""
    assert HAMILTONIANS == ("stored", "rebuilt")
    assert [check_hamiltonian(h) for h in HAMILTONIANS] == list(HAMILTONIANS)
    for bad in ("Rebuilt", "", None, 1, "of_bridge"):
        assert _refusal(lambda: check_hamiltonian(bad)) == (
            "hamiltonian", f"{bad!r} is not accepted; accepted: stored, rebuilt")
    accepted = "None (no log) or the path of a file whose folder exists"
    assert check_evaluation_log(None) is None
    assert check_evaluation_log(tmp_path / "log.jsonl") == str(tmp_path / "log.jsonl")
    assert check_evaluation_log("log.jsonl") == "log.jsonl"     # the kernel's folder
    for bad, why in ((5, ""), ("", ""), ("  ", ""), (True, ""), (["a"], ""),
                     (str(tmp_path), " (it is a folder)"),
                     (str(tmp_path / "no" / "log.jsonl"), " (its folder does not exist)")):
        assert _refusal(lambda: check_evaluation_log(bad)) == (
            "evaluation_log", f"{bad!r} is not accepted; accepted: {accepted}{why}")
    base = dict(mode="full", engine=None, blas_threads=1, blas_coretype=None,
                proof_budget=60, stack="current")
    checked = audit_parameters(**base)
    assert (checked["hamiltonian"], checked["evaluation_log"]) == ("stored", None)
    assert _refusal(lambda: audit_parameters(**base, evaluation_log=7))[0] == "evaluation_log"
    assert _refusal(lambda: audit_parameters(**base, hamiltonian="x"))[0] == "hamiltonian"


def test_an_unknown_optimizer_is_refused_by_one_class_with_one_accepted_set(tmp_path):
    """``optimizer`` is checked with the other parameters (issue 52, item 4): the options'
    check, the re-run, the VQE loop and the optimisers study refuse an unknown or ADAPT
    optimiser alike, a ParameterError naming ``optimizer``, the value and
    :data:`qencode_nb.options.OPTIMIZERS`."""
    from types import SimpleNamespace

    from qencode_nb.options import OPTIMIZERS, check_optimizer, parse_optimizer
    from qencode_nb.rerun import rerun as rerun_module
    from qencode_nb.rerun.vqe import run_vqe
    from qencode_nb.studies.optimizers import check_optimizers

    said = {}
    for bad in ("nelder-mead", "ADAPT-VQE (COBYLA inner)"):
        places = {
            "parse_optimizer": lambda: parse_optimizer(bad),
            "check_optimizer": lambda: check_optimizer(bad),
            "audit_parameters": lambda: audit_parameters(
                mode="rerun", engine=None, blas_threads=1, blas_coretype=None,
                proof_budget=60, stack="current", optimizer=bad),
            "rerun": lambda: rerun_module._dispatch(   # before the problem is used
                SimpleNamespace(optimizer=None), SimpleNamespace(is_adapt=False), bad,
                None, None, None),
            "run_vqe": lambda: run_vqe(lambda p: 0.0, 1, optimizer=bad, max_iterations=1,
                                       restarts=1, seed=0),
            "optimizers study": lambda: check_optimizers([bad]),
        }
        for place, call in places.items():
            with pytest.raises(ParameterError) as info:
                call()
            said[place, bad] = (info.value.parameter, str(info.value))
        assert {s for (_, b), s in said.items() if b == bad} == {
            ("optimizer", f"optimizer {bad!r} is not accepted; accepted: {OPTIMIZERS}")}
    assert check_optimizer(None) is None and check_optimizer("Adam(lr=0.1)") == "Adam(lr=0.1)"
    assert parse_optimizer("bfgs").name == "l-bfgs-b"


@pytest.mark.notebook
def test_the_notebook_refuses_an_unknown_optimizer_with_the_same_sentence(tmp_path):
    from qencode_nb.executor.execute import run_notebook
    from qencode_nb.options import OPTIMIZERS

    with pytest.raises(RunFailed, match=re.escape(
            f"ParameterError: optimizer 'nelder-mead' is not accepted; accepted: {OPTIMIZERS}")):
        run_notebook(AUDIT_NB, tmp_path / "nb.ipynb",
                     {"entry": "h2", "mode": "rerun", "optimizer": "nelder-mead"})
