"""The multistart VQE (qencode_nb/rerun/vqe.py) as QEncode's generator runs it, on energy
functions whose minimum is known in closed form: restart 0 from zeros and the others
from ``default_rng(seed)`` in order, each optimiser reaching the minimum, early stop at
0.01 Ha of the target, QEncode's nfev count for L-BFGS-B, and PennyLane's ``qml.grad``
path agreeing with an exact gradient."""

from __future__ import annotations

import re

import numpy as np
import pytest

from qencode_nb.rerun.vqe import run_vqe
from qencode_nb.rules import EARLY_STOP_HA

#: E(θ) = -cos(θ0 - 1) - 0.5 cos(θ1 + 0.5): minimum -1.5 Ha at θ = (1, -0.5).
E_MIN = -1.5
THETA_MIN = np.array([1.0, -0.5])


class Energy:
    """The closed-form energy with its exact gradient (``energy_and_grad``, as the fast
    engine's Energy has), counting calls and keeping every starting point."""

    def __init__(self):
        self.calls, self.points = 0, []

    def __call__(self, p):
        self.calls += 1
        self.points.append(np.array(p, dtype=float))
        return float(-np.cos(p[0] - 1) - 0.5 * np.cos(p[1] + 0.5))

    def energy_and_grad(self, p):
        p = np.asarray(p, dtype=float)
        return self(p), np.array([np.sin(p[0] - 1), 0.5 * np.sin(p[1] + 0.5)])


def test_restart_zero_starts_at_zeros_the_others_at_the_seeded_draws():
    energy = Energy()
    starts = []

    class Watch:      # told when each restart begins, as the re-run's Progress is
        energies: list = []

        def start_restart(self, run):
            starts.append(len(energy.points))

    out = run_vqe(energy, 2, optimizer="cobyla", max_iterations=40, restarts=3, seed=7,
                  e_target=None, progress=Watch())
    firsts = [energy.points[i] for i in starts]
    rng = np.random.default_rng(7)
    assert np.array_equal(firsts[0], np.zeros(2))
    for got in firsts[1:]:
        assert np.array_equal(got, rng.uniform(-np.pi, np.pi, 2))   # drawn in order, exact
    assert out.restarts_run == 3 and len(out.restart_energies) == 3
    assert out.nfev == sum(out.restart_nfev) == energy.calls


@pytest.mark.parametrize("optimizer,max_iterations,tol_ha", [
    ("cobyla", 500, 1e-8), ("l-bfgs-b", 200, 1e-12), ("adam", 800, 1e-6)])
def test_each_optimiser_reaches_the_known_minimum(optimizer, max_iterations, tol_ha):
    out = run_vqe(Energy(), 2, optimizer=optimizer, max_iterations=max_iterations,
                  restarts=2, seed=3, e_target=None, learning_rate=0.05)
    assert out.best_energy == pytest.approx(E_MIN, abs=tol_ha)
    wrapped = (np.array(out.best_params) - THETA_MIN + np.pi) % (2 * np.pi) - np.pi
    assert np.abs(wrapped).max() < 1e-2
    assert not out.stopped_early and out.optimizer == optimizer


def test_a_run_is_the_same_bits_twice():
    a = run_vqe(Energy(), 2, max_iterations=60, restarts=3, seed=11, e_target=None)
    b = run_vqe(Energy(), 2, max_iterations=60, restarts=3, seed=11, e_target=None)
    assert a.best_energy.hex() == b.best_energy.hex() and a.best_params == b.best_params
    assert a.restart_energies == b.restart_energies and a.nfev == b.nfev


def test_early_stop_after_the_first_restart_within_10_mha_of_the_target():
    target = E_MIN - EARLY_STOP_HA / 2
    out = run_vqe(Energy(), 2, max_iterations=500, restarts=5, seed=1, e_target=target)
    assert out.stopped_early and out.restarts_run == 1
    assert abs(out.best_energy - target) < EARLY_STOP_HA
    late = run_vqe(Energy(), 2, max_iterations=500, restarts=5, seed=1, e_target=target,
                   early_stop=False)
    assert not late.stopped_early and late.restarts_run == 5
    far = run_vqe(Energy(), 2, max_iterations=500, restarts=2, seed=1, e_target=E_MIN - 0.1)
    assert not far.stopped_early and far.restarts_run == 2


def test_adam_stops_inside_a_restart_at_the_target():
    energy = Energy()
    out = run_vqe(energy, 2, optimizer="adam", max_iterations=800, restarts=3, seed=1,
                  e_target=E_MIN, learning_rate=0.05)
    assert out.stopped_early and out.restarts_run == 1
    assert out.restart_nfev[0] < 800     # Adam's step count: it stopped before its cap
    assert abs(out.best_energy - E_MIN) < EARLY_STOP_HA


def test_lbfgsb_counts_nfev_as_qencode_does():
    """QEncode reports L-BFGS-B's nfev as steps x (1 + 2 x parameters)."""
    from scipy.optimize import minimize

    energy = Energy()
    out = run_vqe(energy, 2, optimizer="l-bfgs-b", max_iterations=200, restarts=1, seed=0,
                  e_target=None)
    res = minimize(Energy().energy_and_grad, np.zeros(2), jac=True, method="L-BFGS-B",
                   options={"maxiter": 200, "ftol": 1e-12, "gtol": 1e-8})
    assert out.nfev == res.nfev * (1 + 2 * 2) and out.best_energy == res.fun


def test_pennylanes_gradient_path_agrees_with_an_exact_gradient():
    """An energy without ``energy_and_grad`` (a QNode-backed one) is differentiated by
    ``qml.grad``: <Z> after RY(θ0) RX(θ1) is cos θ0 cos θ1, minimum -1 at (π, 0)."""
    import pennylane as qml

    dev = qml.device("default.qubit", wires=1)

    @qml.qnode(dev)
    def circuit(p):
        qml.RY(p[0], wires=0)
        qml.RX(p[1], wires=0)
        return qml.expval(qml.PauliZ(0))

    class QNodeEnergy:
        qnode = circuit

        def __call__(self, p):
            return float(circuit(np.asarray(p)))

    out = run_vqe(QNodeEnergy(), 2, optimizer="l-bfgs-b", max_iterations=100, restarts=2,
                  seed=5, e_target=None)
    assert out.best_energy == pytest.approx(-1.0, abs=1e-12)
    c0, c1 = np.cos(out.best_params)
    assert c0 * c1 == pytest.approx(-1.0, abs=1e-12)


def test_an_unknown_optimiser_names_the_accepted_ones():
    from qencode_nb.errors import ParameterError
    from qencode_nb.options import OPTIMIZERS

    with pytest.raises(ParameterError, match=re.escape(
            f"optimizer 'nelder-mead' is not accepted; accepted: {OPTIMIZERS}")):
        run_vqe(Energy(), 2, optimizer="nelder-mead", max_iterations=1, restarts=1, seed=0)
