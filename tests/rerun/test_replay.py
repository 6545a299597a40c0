"""The replay of stored parameters (qencode_nb/rerun/replay.py) on real QEncode v4 entries
in ../shared: the published energy comes back within the replay tolerance
(REPLAY_TOL_HA) on the recorded backend and on the fast engine, a moved angle fails
it, a non-finite angle fails it naming the field without running, and a parameter count
that is not the ansatz's is refused naming the field."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from conftest import H2_JW_UCCSD, LIH_PAR_HEA, SHARED_DB, pinned_env, reference_only
from qencode_nb.entry import load
from qencode_nb.errors import EntryError
from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild
from qencode_nb.rerun.problem import build_problem
from qencode_nb.rerun.replay import Replay, replay
from qencode_nb.rules import REPLAY_TOL_HA

H6_LBFGSB = SHARED_DB / "H6_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_fa91a2bc19cff218.json"


def _problem(path, engine=None):
    entry = load(path)
    rebuilt = rebuild(entry)
    return entry, build_problem(entry, rebuilt, engine, hamiltonian_check(entry, rebuilt),
                                rerun=False)


@pytest.mark.parametrize("path,engine", [(H2_JW_UCCSD, None), (H2_JW_UCCSD, "fast"),
                                         (LIH_PAR_HEA, None)])
def test_stored_parameters_give_back_the_published_energy(path, engine):
    entry, problem = _problem(path, engine)
    r = replay(entry, problem)
    rec = r.to_record()
    assert r.status == "pass" and rec["abs_delta_ha"] <= REPLAY_TOL_HA, rec
    assert rec["published"] == entry.published_energy
    assert rec["engine"] == problem.engines.replay.label
    assert rec["hamiltonian"] == problem.hamiltonian_origin


def test_a_moved_angle_fails_the_replay():
    entry, problem = _problem(LIH_PAR_HEA)
    moved = [*entry.optimal_params]
    moved[0] += 0.5
    r = replay(dataclasses.replace(entry, optimal_params=moved), problem)
    assert r.status == "fail" and r.comparison["abs_delta_ha"] > REPLAY_TOL_HA


def test_a_non_finite_angle_fails_naming_the_field_without_running():
    entry, problem = _problem(H2_JW_UCCSD)
    bad = [float("nan")] + [*entry.optimal_params][1:]
    r = replay(dataclasses.replace(entry, optimal_params=bad), problem)
    assert r.status == "fail" and r.energy is None
    assert r.reason.startswith("results.vqe.optimal_params[0] is nan (1 of ")


def test_a_parameter_count_that_is_not_the_ansatzs_is_refused():
    entry, problem = _problem(LIH_PAR_HEA)
    with pytest.raises(EntryError, match="stored parameters but the hea ansatz has") as err:
        replay(dataclasses.replace(entry, optimal_params=[*entry.optimal_params, 0.0]),
               problem)
    assert err.value.field == "results.vqe.optimal_params"


def test_not_run_is_na_with_its_reason():
    entry, _ = _problem(H2_JW_UCCSD)
    rec = Replay.not_run(entry, "mode=rerun").to_record()
    assert rec == {"status": "n/a", "energy": None, "published": entry.published_energy,
                   "delta_ha": None, "reason": "mode=rerun"}


_TRAINABLE_CODE = """\
import json, sys
from qencode_nb.environment.releases import kernel_profile
from qencode_nb.notebook.pins import pin
kernels = pin(1, "reference", release=kernel_profile("v4"))["profile"].get("kernels")
import numpy as np
from qencode_nb.entry import load
from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild
from qencode_nb.rerun.compare import compare
from qencode_nb.rerun.problem import build_problem
from qencode_nb.rerun.replay import replay
entry = load(sys.argv[1])
rebuilt = rebuild(entry)
problem = build_problem(entry, rebuilt, None, hamiltonian_check(entry, rebuilt), rerun=False)
rec = replay(entry, problem).to_record()
plain = problem.engines.replay.energy()(np.array(entry.optimal_params, dtype=float))
print(json.dumps({"kernels": kernels, "replay": rec,
                  "plain": compare(plain, entry.published_energy)}))
"""


@pytest.mark.bitlevel
@reference_only
def test_an_lbfgsb_entry_replays_its_published_bits_called_as_the_optimiser_called_it():
    """QEncode v4 H6 JW/HEA ``fa91a2bc`` (L-BFGS-B): its published energy is the QNode's
    value on trainable parameters.  Under the v4 triple (numpy SkylakeX, scipy SkylakeX,
    PySCF Prescott; measured 2026-12-07 on an AMD EPYC Zen 4, v4 pins) the replay, called
    so, gives the published bits; a plain call of the same QNode is 4 ulps off
    (1.8e-15 Ha)."""
    out = subprocess.run([sys.executable, "-c", _TRAINABLE_CODE, str(H6_LBFGSB)],
                         capture_output=True, text=True, env=pinned_env(1, "reference"),
                         timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["kernels"] == {"numpy": "SkylakeX", "scipy": "SkylakeX", "pyscf": "Prescott"}
    assert got["replay"]["identical"] is True and got["replay"]["ulps"] == 0, got["replay"]
    assert got["plain"]["identical"] is False and got["plain"]["ulps"] == 4, got["plain"]
