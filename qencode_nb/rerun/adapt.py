"""ADAPT-VQE as QEncode's generator runs it, on any engine: the budget and the entry point.

Reproduces, from ``scripts/generate_entry_v4.py`` of qencode-benchmark (commit
e1f44cd), ``run_vqe_adapt`` (ADAPT engine ``"qnode"``, used up to
:data:`~qencode_nb.rules.ADAPT_QNODE_MAX_QUBITS` = 12 tapered qubits, inner COBYLA)
and ``run_vqe_adapt_statevector`` (ADAPT engine ``"statevector"``, above 12 tapered
qubits, inner L-BFGS-B or COBYLA).  The loop is
:func:`qencode_nb.rerun.adapt_loop.run_loop` (rules, ties, early stop, nfev); the
arithmetic is an engine's :class:`~qencode_nb.engines.base.AdaptBackend`
(``Bound.adapt_backend``).  Energies in Ha before any tapering constant correction;
angles in radians.  Importing this module imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from qencode_nb.rerun.adapt_loop import AdaptResult, check_inner, check_pool, new_result, run_loop


@dataclass(frozen=True)
class AdaptBudget:
    """What bounds an ADAPT run, as the entry records it.

    Attributes:
        gradient_threshold: stop when max |gradient| < this (Ha/rad;
            ``encoding.adapt_metadata.gradient_threshold``).
        max_operators: cap on outer iterations (``adapt_metadata.max_operators``).
        max_iterations: ``maxiter`` of every inner optimisation
            (``run_config.max_iterations``).
        seed: recorded only; the generator's ADAPT draws no random numbers.
        e_target: CASCI energy (Ha) for the early stop, or ``None``.
        early_stop: stop once ``|E - e_target| <`` :data:`~qencode_nb.rules.EARLY_STOP_HA`.
        inner: ``"cobyla"`` or ``"l-bfgs-b"`` (``"bfgs"`` accepted).
    """

    gradient_threshold: float
    max_operators: int
    max_iterations: int
    seed: Any
    e_target: float | None
    early_stop: bool = True
    inner: str = "cobyla"

    @classmethod
    def of(cls, entry, e_target: float | None) -> "AdaptBudget":
        """The budget an ADAPT entry records (``encoding.adapt_metadata``,
        ``run_config``); ``e_target`` the early-stop target (Ha)."""
        meta = entry.adapt
        return cls(gradient_threshold=meta["gradient_threshold"],
                   max_operators=meta["max_operators"], max_iterations=entry.max_iterations,
                   seed=entry.seed, e_target=e_target, early_stop=entry.early_stop,
                   inner=entry.optimizer.inner or "cobyla")


def run_adapt(engine, budget: AdaptBudget, *, callback: Callable[[dict], None] | None = None,
              checkpoint=None, log=None) -> AdaptResult:
    """Re-run ADAPT-VQE with the generator's procedure and order on one engine.

    Args:
        engine: a :class:`~qencode_nb.engines.base.Bound` of an ADAPT entry (its
            ``adapt_backend(inner)`` gives the arithmetic, its ``adapt_procedure``
            names the procedure in the result).
        budget: the :class:`AdaptBudget`.
        callback: called after every outer iteration with a dict (iteration,
            max_gradient, selected index, energy, nfev so far).
        checkpoint: a :class:`qencode_nb.rerun.checkpoint.Checkpoint` of the finished
            steps, or None.
        log: an :class:`~qencode_nb.rerun.evaluation_log.EvaluationLog` every inner
            evaluation is written to (:class:`~qencode_nb.rerun.evaluation_log.LoggedBackend`),
            or None.

    Returns:
        :class:`~qencode_nb.rerun.adapt_loop.AdaptResult`.

    Raises:
        ValueError: an unknown inner optimiser, one the engine's procedure does not
            run (the QNode procedure runs COBYLA only), or an empty pool.
        AdaptEmpty: no operator was selected (the generator raises too).
    """
    import time

    start = time.perf_counter()
    inner = check_inner(budget.inner)
    backend = engine.adapt_backend(inner)
    if log is not None:
        from qencode_nb.rerun.evaluation_log import LoggedBackend

        backend = LoggedBackend(backend, log)
    check_pool(backend.n_pool)
    result = new_result(engine.adapt_procedure, inner, backend.n_pool,
                        budget.gradient_threshold, budget.max_operators,
                        budget.max_iterations, budget.seed, budget.e_target)
    return run_loop(backend, result, early_stop=budget.early_stop, callback=callback,
                    start=start, checkpoint=checkpoint)
