"""The ADAPT outer loop (qencode_nb/rerun/adapt_loop.py), written once over the engines'
AdaptBackend, on a backend whose gradients and energies are known in closed form: the
screening (largest |gradient|, ties to the lowest index), convergence below the
threshold, early stop at 0.01 Ha of the target, QEncode's nfev count for each inner
optimiser, and the generator's auto engine rule.  The engines' own backends are tested
against entries in tests/engines/test_adapt.py."""

from __future__ import annotations

import time

import numpy as np
import pytest

from qencode_nb.errors import AdaptEmpty
from qencode_nb.rerun.adapt_loop import check_inner, engine_for, new_result, run_loop

#: Each pool operator's screening gradient (Ha/rad) and the energy it can win (Ha):
#: 1 and 2 tie at 0.5 (the lower index wins), 3 stays below any threshold used here.
GRADIENTS = (0.3, 0.5, 0.5, 0.01)
WEIGHTS = (1.0, 2.0, 4.0, 8.0)


class ToyBackend:
    """E(selected, θ) = -Σ_i w[selected_i] cos(θ_i - 1): the minimum after each selection
    is -Σ w over the selection, at θ_i = 1.  The pool gradient is :data:`GRADIENTS`."""

    def pool_gradient(self, selected, params):
        return lambda k: GRADIENTS[k]

    def energy(self, selected):
        w = np.array([WEIGHTS[k] for k in selected])
        return lambda p: float(-(w * np.cos(np.asarray(p) - 1)).sum())

    def energy_and_grad(self, selected):
        w = np.array([WEIGHTS[k] for k in selected])

        def f(p):
            p = np.asarray(p, dtype=float)
            return float(-(w * np.cos(p - 1)).sum()), w * np.sin(p - 1)
        return f


def _run(inner="cobyla", threshold=0.05, e_target=None, early_stop=True, max_operators=10):
    result = new_result("statevector", check_inner(inner), len(GRADIENTS), threshold,
                        max_operators, 200, 42, e_target)
    steps = []
    run_loop(ToyBackend(), result, early_stop=early_stop, callback=steps.append,
             start=time.perf_counter())
    return result, steps


def test_the_largest_gradient_wins_ties_go_to_the_lowest_index_until_converged():
    r, steps = _run()
    assert r.selected_indices == [1, 2, 0]           # 1 before 2 (tie), then 0; 3 below
    assert r.converged and not r.stopped_early and r.n_iterations == 4
    assert r.max_gradients == [0.5, 0.5, 0.3, 0.01]
    assert r.runner_up_gradients == [0.5, 0.3, 0.01, 0.0]   # the tie is visible
    assert r.energies == pytest.approx([-2.0, -6.0, -7.0], abs=1e-6)
    assert r.best_energy == r.energies[-1] and len(r.params) == 3
    assert np.allclose(r.params, 1.0, atol=1e-3)
    assert [s["selected"] for s in steps] == [1, 2, 0] and steps[-1]["nfev"] == r.nfev


def test_early_stop_after_an_inner_optimisation_within_10_mha():
    r, _ = _run(e_target=-6.005)
    assert r.stopped_early and not r.converged and r.selected_indices == [1, 2]
    r, _ = _run(e_target=-6.005, early_stop=False)
    assert not r.stopped_early and r.selected_indices == [1, 2, 0]


def test_max_operators_caps_the_outer_iterations():
    r, _ = _run(max_operators=2)
    assert r.selected_indices == [1, 2] and not r.converged and r.n_iterations == 2


@pytest.mark.parametrize("inner", ["cobyla", "l-bfgs-b", "bfgs"])
def test_nfev_is_counted_as_the_generator_counts_it(inner):
    """COBYLA: scipy's nfev; L-BFGS-B: nfev x (1 + parameters) per outer iteration."""
    r, _ = _run(inner=inner)
    assert r.energies == pytest.approx([-2.0, -6.0, -7.0], abs=1e-6)
    per_step = [1 if r.inner == "cobyla" else 1 + n for n in (1, 2, 3)]
    assert r.nfev == sum(raw * k for raw, k in zip(r.inner_nfev, per_step))
    assert r.adapt_metadata()["inner_optimizer"] == ("COBYLA" if inner == "cobyla" else "L-BFGS-B")


def test_nothing_above_the_threshold_raises_like_the_generator():
    with pytest.raises(AdaptEmpty, match="selected 0 operators"):
        _run(threshold=1.0)


def test_an_unknown_inner_optimiser_names_the_accepted_ones():
    with pytest.raises(ValueError, match="inner optimiser 'adam' is not accepted; accepted: "):
        check_inner("adam")


def test_engine_for_is_the_generators_auto_rule():
    assert [engine_for(n) for n in (4, 12, 13, 18)] == ["qnode", "qnode",
                                                        "statevector", "statevector"]
