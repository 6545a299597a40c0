"""The ADAPT-VQE outer loop, written once, over a small backend protocol.

The generator (``scripts/generate_entry_v4.py`` of qencode-benchmark, commit
e1f44cd) runs the same outer loop in ``run_vqe_adapt`` (QNode engine) and
``run_vqe_adapt_statevector`` (statevector engine); the sector engine runs it
too.  Here it is :func:`run_loop`; only the arithmetic is a backend's
(:class:`qencode_nb.engines.base.AdaptBackend`, implemented by each engine).

Each outer iteration: the backend gives the pool gradient at the current
state; every unselected pool operator is screened and the largest |gradient|
wins (ties go to the lowest index: strict ``>``); the loop stops
(``converged``) when it is below ``gradient_threshold``; otherwise the winner
is appended at angle 0 and all angles are re-optimised from the previous
optimum (:func:`inner_step`: COBYLA, ``rhobeg``
:data:`~qencode_nb.rules.COBYLA_RHOBEG`, or L-BFGS-B with the exact gradient,
``ftol`` / ``gtol`` :data:`~qencode_nb.rules.LBFGSB_FTOL` /
:data:`~qencode_nb.rules.LBFGSB_GTOL`, ``maxiter`` the run's
``max_iterations``); after it the loop stops early when ``|E - e_target| <``
:data:`~qencode_nb.rules.EARLY_STOP_HA` (0.01 Ha; ``e_target`` the CASCI
energy, compared with the *uncorrected* tapered energy); at most
``max_operators`` outer iterations.  No random numbers are drawn: the
generator accepts a seed and ignores it.

Energies in Hartree (Ha) before any tapering constant correction; angles in
radians; gradients in Ha/rad.  Importing this module imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from qencode_nb.engines.base import AdaptBackend
from qencode_nb.errors import AdaptEmpty
from qencode_nb.rules import (
    ADAPT_INNER_OPTIMIZERS,
    ADAPT_QNODE_MAX_QUBITS,
    COBYLA_RHOBEG,
    EARLY_STOP_HA,
    LBFGSB_FTOL,
    LBFGSB_GTOL,
)


@dataclass
class AdaptResult:
    """Outcome of an ADAPT run, in the generator's terms.

    Attributes:
        best_energy: final inner-optimiser energy (Ha, uncorrected)
            (``results.vqe.best_energy_hartree`` minus the constant correction).
        params: final angles (radians), one per selected operator
            (``results.vqe.optimal_params``).
        selected_indices: pool indices in circuit order
            (``adapt_metadata.selected_operator_indices``).
        nfev: evaluations counted as the generator counts them: the sum of
            COBYLA's ``nfev``; for L-BFGS-B ``nfev * (1 + n_params)`` per
            outer iteration (``results.vqe.nfev``).
        converged: stopped because max |gradient| < threshold.
        n_iterations: outer iterations including the one that found
            convergence (``adapt_metadata.n_iterations``).
        stopped_early: stopped because ``|E - e_target| < 0.01`` Ha.
        max_gradients: largest |gradient| of each outer iteration (Ha/rad),
            ``n_iterations`` values (the last may be the sub-threshold one).
        runner_up_gradients: second-largest |gradient| of each outer
            iteration; equal to ``max_gradients`` where the choice was a tie
            settled by the lowest index (a choice that ulps can flip).
        energies: energy after each inner optimisation (Ha), one per
            selected operator.
        inner_nfev: raw ``nfev`` of each inner optimisation.
        adapt_engine: the engine that ran: ``"qnode"``, ``"statevector"``
            (the generator's) or ``"sector"`` (ours, the CI space).
        inner: ``"cobyla"`` or ``"l-bfgs-b"``.
        n_pool: pool size (``adapt_metadata.n_operators_pool``).
        gradient_threshold, max_operators, max_iterations, seed, e_target:
            the settings used (``seed`` is recorded only: unused).
        wall_s: wall-clock seconds of the run.
    """

    best_energy: float
    params: list
    selected_indices: list
    nfev: int
    converged: bool
    n_iterations: int
    stopped_early: bool
    max_gradients: list = field(default_factory=list)
    runner_up_gradients: list = field(default_factory=list)
    energies: list = field(default_factory=list)
    inner_nfev: list = field(default_factory=list)
    adapt_engine: str = "qnode"
    inner: str = "cobyla"
    n_pool: int = 0
    gradient_threshold: float = 1e-3
    max_operators: int = 100
    max_iterations: int = 500
    seed: Any = None
    e_target: float | None = None
    wall_s: float = 0.0

    @property
    def tied_iterations(self) -> list:
        """1-based outer iterations whose winner tied (relative gap < 1e-12)
        with another operator's |gradient|: the lowest index won."""
        return [i + 1 for i, (a, b) in enumerate(zip(self.max_gradients,
                                                     self.runner_up_gradients))
                if a > 0 and (a - b) <= 1e-12 * a]

    @property
    def optimizer_label(self) -> str:
        """The generator's ``results.vqe.optimizer`` string for this run: its QNode
        procedure's string names no engine; every other procedure names its inner
        optimiser and its engine (the sector engine is labelled as such: it is not one
        of the generator's)."""
        if self.adapt_engine == "qnode":
            return "ADAPT-VQE (COBYLA inner)"
        name = "L-BFGS-B" if self.inner == "l-bfgs-b" else "COBYLA"
        return f"ADAPT-VQE ({name} inner, {self.adapt_engine} engine)"

    def adapt_metadata(self) -> dict:
        """``encoding.adapt_metadata`` as the generator writes it for this run."""
        meta = {
            "n_operators_pool": self.n_pool,
            "selected_operator_indices": list(self.selected_indices),
            "gradient_threshold": self.gradient_threshold,
            "max_operators": self.max_operators,
            "converged": self.converged,
            "n_iterations": self.n_iterations,
        }
        if self.adapt_engine != "qnode":    # the QNode procedure records neither
            meta["engine"] = self.adapt_engine
            meta["inner_optimizer"] = "L-BFGS-B" if self.inner == "l-bfgs-b" else "COBYLA"
        return meta


def engine_for(n_tapered_qubits: int) -> str:
    """The generator's ``--adapt-engine auto`` rule.

    Returns ``"qnode"`` for ``n_tapered_qubits <=``
    :data:`~qencode_nb.rules.ADAPT_QNODE_MAX_QUBITS` (12), else ``"statevector"``.
    (Not the pool rule: the pool switches on the *untapered* count, see
    :func:`qencode_nb.engines.ansatz.tapered_uccsd_ops`.)
    """
    return "qnode" if int(n_tapered_qubits) <= ADAPT_QNODE_MAX_QUBITS else "statevector"


def check_inner(inner: str) -> str:
    """The canonical inner optimiser name (``"bfgs"``, the generator's
    ``--adapt-inner`` spelling, is ``"l-bfgs-b"``).

    Raises:
        ValueError: not in :data:`~qencode_nb.rules.ADAPT_INNER_OPTIMIZERS`.
    """
    name = str(inner).lower()
    if name == "bfgs":
        name = "l-bfgs-b"
    if name not in ADAPT_INNER_OPTIMIZERS:
        raise ValueError(f"ADAPT inner optimiser {inner!r} is not accepted; accepted: "
                         f"{', '.join(ADAPT_INNER_OPTIMIZERS)} (or 'bfgs')")
    return name


def check_pool(n_pool: int) -> None:
    """Raises ValueError for an empty pool (the generator then builds HEA)."""
    if not n_pool:
        raise ValueError("the ADAPT pool is empty; the generator falls back to HEA (reps=2)")


def new_result(adapt_engine, inner, n_pool, gradient_threshold, max_operators,
               max_iterations, seed, e_target) -> AdaptResult:
    """An empty :class:`AdaptResult` carrying the settings of a run."""
    return AdaptResult(best_energy=float("inf"), params=[], selected_indices=[], nfev=0,
                       converged=False, n_iterations=0, stopped_early=False,
                       adapt_engine=adapt_engine, inner=inner, n_pool=n_pool,
                       gradient_threshold=gradient_threshold,
                       max_operators=int(max_operators),
                       max_iterations=int(max_iterations), seed=seed, e_target=e_target)


def screen(gradient, n_pool, selected, runner_up: list):
    """Largest |gradient| over unselected indices; ties to the lowest index.

    Returns ``(largest |gradient|, its index)`` (``-1`` when none is above 0)
    and appends the second-largest |gradient| (any other index) to ``runner_up``.
    """
    best_abs, best_idx, second = 0.0, -1, 0.0
    taken = set(selected)
    for k in range(n_pool):
        if k in taken:
            continue
        g = abs(gradient(k))
        if g > best_abs:
            best_abs, best_idx, second = g, k, best_abs
        elif g > second:
            second = g
    runner_up.append(second)
    return best_abs, best_idx


def inner_step(backend: AdaptBackend, result: AdaptResult, selected, params):
    """The inner optimisation of all angles from ``params`` (the generator's calls).

    L-BFGS-B (``jac=True``, ``ftol`` 1e-12, ``gtol`` 1e-8) on
    ``backend.energy_and_grad(selected)`` or COBYLA (``rhobeg`` 0.5) on
    ``backend.energy(selected)``, ``maxiter`` the run's ``max_iterations``,
    ``x0 = np.array(params, dtype=float)``.

    Returns:
        ``(energy (Ha), angles (list of float), raw nfev, nfev as the
        generator counts it)``: L-BFGS-B ``nfev * (1 + n_params)`` (its
        adjoint count), COBYLA ``nfev``.
    """
    import numpy as np
    from scipy.optimize import minimize

    x0 = np.array(params, dtype=float)
    if result.inner == "l-bfgs-b":
        res = minimize(backend.energy_and_grad(selected), x0, jac=True, method="L-BFGS-B",
                       options={"maxiter": result.max_iterations, "ftol": LBFGSB_FTOL,
                                "gtol": LBFGSB_GTOL})
        counted = int(res.nfev) * (1 + len(params))
    else:
        res = minimize(backend.energy(selected), x0, method="COBYLA",
                       options={"maxiter": result.max_iterations, "rhobeg": COBYLA_RHOBEG})
        counted = int(res.nfev)
    angles = [float(x) for x in np.asarray(res.x, dtype=float).ravel()]
    return float(res.fun), angles, int(res.nfev), counted


def run_loop(backend: AdaptBackend, result: AdaptResult, *, early_stop: bool,
             callback: Callable[[dict], None] | None, start: float,
             checkpoint=None) -> AdaptResult:
    """Run the outer loop of the module docstring into ``result``.

    Args:
        backend: an :class:`AdaptBackend` over a pool of ``result.n_pool``.
        result: from :func:`new_result` (settings; filled in place).
        early_stop: stop once ``|E - e_target| < 0.01`` Ha (needs ``e_target``).
        callback: called after every inner optimisation with a dict
            (iteration, max_gradient, selected index, n_operators, energy,
            nfev so far).
        start: ``time.perf_counter()`` when the run began (for ``wall_s``).
        checkpoint: a :class:`qencode_nb.rerun.checkpoint.Checkpoint`: each finished
            step (screening and inner optimisation) is saved; a step it holds is
            taken from it exactly as it ran instead of being computed again.

    Returns:
        ``result``.

    Raises:
        AdaptEmpty: no operator was selected (the generator raises too).
    """
    import time

    selected = result.selected_indices
    params: list = []
    for iteration in range(result.max_operators):
        result.n_iterations = iteration + 1
        saved = checkpoint.part(iteration) if checkpoint is not None else None
        if saved is not None:
            best_abs, best_idx = saved["max_gradient"], saved["selected"]
            result.runner_up_gradients.append(saved["runner_up"])
        else:
            best_abs, best_idx = screen(backend.pool_gradient(selected, params),
                                        result.n_pool, selected, result.runner_up_gradients)
        result.max_gradients.append(best_abs)
        if best_idx < 0 or best_abs < result.gradient_threshold:
            result.converged = True
            break
        selected.append(best_idx)
        params.append(0.0)
        if saved is not None:
            energy, params, raw_nfev, counted_nfev = (saved["energy"], list(saved["params"]),
                                                      saved["raw_nfev"], saved["nfev"])
        else:
            energy, params, raw_nfev, counted_nfev = inner_step(backend, result, selected,
                                                                params)
            if checkpoint is not None:
                checkpoint.save(iteration, {
                    "max_gradient": float(best_abs), "selected": int(best_idx),
                    "runner_up": float(result.runner_up_gradients[-1]),
                    "energy": float(energy), "params": [float(x) for x in params],
                    "raw_nfev": int(raw_nfev), "nfev": int(counted_nfev)})
        result.params = list(params)
        result.best_energy = energy
        result.nfev += counted_nfev
        result.energies.append(energy)
        result.inner_nfev.append(raw_nfev)
        if callback is not None:
            callback({"iteration": iteration + 1, "max_gradient": best_abs,
                      "selected": best_idx, "n_operators": len(selected),
                      "energy": energy, "nfev": result.nfev})
        if (early_stop and result.e_target is not None
                and abs(energy - result.e_target) < EARLY_STOP_HA):
            result.stopped_early = True
            break
    result.wall_s = time.perf_counter() - start
    if not result.selected_indices:
        raise AdaptEmpty(f"ADAPT-VQE selected 0 operators (pool of {result.n_pool}, "
                         f"threshold {result.gradient_threshold:.0e}, largest |gradient| "
                         f"{result.max_gradients[-1] if result.max_gradients else 0.0:.3e})")
    return result
