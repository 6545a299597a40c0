"""ADAPT-VQE as QEncode's generator runs it: replay and re-run (the entry points).

Reproduces, from ``scripts/generate_entry_v4.py`` of qencode-benchmark
(commit e1f44cd), ``run_vqe_adapt`` (ADAPT engine ``"qnode"``, used up to
:data:`~qencode_nb.rules.ADAPT_QNODE_MAX_QUBITS` = 12 tapered qubits, inner
COBYLA) and ``run_vqe_adapt_statevector`` (ADAPT engine ``"statevector"``,
above 12 tapered qubits, inner L-BFGS-B or COBYLA), and runs the latter's
procedure on the sector engine (:func:`run_adapt_sector`).  The loop is
:func:`qencode_nb.rerun.adapt_loop.run_loop` (rules, ties, early stop, nfev);
the engines' arithmetic is :mod:`qencode_nb.rerun.adapt_backends`.  The pool
is :func:`qencode_nb.rerun.ansatz.tapered_uccsd_ops`.

The ADAPT engine (``adapt_engine``) is not the PennyLane device
(``backend``): the QNode engine runs on ``backend``; the statevector engine
needs no device.  Energies in Hartree (Ha) before any tapering constant
correction (``encoding.tapering.bk_constant_correction_ha``); angles in
radians.  Numpy, scipy and PennyLane are imported inside the functions.
"""

from __future__ import annotations

from typing import Callable

from qencode_nb.rerun.adapt_loop import (
    AdaptEmpty,
    AdaptResult,
    check_engine,
    check_inner,
    check_pool,
    check_selection,
    engine_for,
    new_result,
    run_loop,
)

__all__ = ["AdaptEmpty", "AdaptResult", "check_selection", "engine_for", "replay_energy",
           "run_adapt", "run_adapt_sector"]


def replay_energy(H, pool, hf_state, selected_indices, params, wires, *,
                  adapt_engine: str = "qnode", backend: str = "default.qubit") -> float:
    """Energy of the selected operators at the stored angles (Ha, uncorrected).

    Builds the final ansatz exactly as the generator's engine evaluates it:

    - ``"qnode"`` (``run_vqe_adapt``'s ``energy_fn``): ``qml.BasisState``,
      then :func:`~qencode_nb.rerun.ansatz.apply_tapered_op` per selected operator
      (its double-queueing quirk included), ``qml.expval(H)`` on
      ``qml.device(backend, wires=wires)``.
    - ``"statevector"`` (``_sv_energy`` of ``_sv_build_state``):
      ``H.sparse_matrix`` and ``B = 2i G`` CSR matrices, closed-form
      exponentials; ``backend`` is ignored.

    Args:
        H: tapered qubit Hamiltonian (PennyLane operator, Ha), e.g.
            :func:`qencode_nb.problem.pauli.from_pauli_terms` of the stored terms.
        pool: the ADAPT pool (:func:`qencode_nb.rerun.ansatz.tapered_uccsd_ops`).
        hf_state: tapered HF bits, shape ``(n,)``.
        selected_indices: pool indices in circuit order, shape ``(m,)``.
        params: angles (radians), shape ``(m,)``.
        wires: the sorted Hamiltonian wires, length ``n``.
        adapt_engine: ``"qnode"`` or ``"statevector"`` (see :func:`engine_for`).
        backend: PennyLane device name for the QNode engine.

    Returns:
        the energy in Ha; add ``bk_constant_correction_ha`` (if any) to
        compare with ``results.vqe.best_energy_hartree``.

    Raises:
        ValueError: unknown engine, index outside the pool, or lengths differ.
    """
    import numpy as np

    from qencode_nb.rerun.adapt_backends import qnode_energy_fn

    check_engine(adapt_engine)
    selected = check_selection(pool, selected_indices, params)
    theta = np.array([float(p) for p in params], dtype=float)
    if adapt_engine == "qnode":
        _, make = qnode_energy_fn(H, pool, hf_state, wires, backend)
        return float(make(selected)(theta))

    from qencode_nb.rerun import statevector as sv

    wires = list(wires)
    H_sp = H.sparse_matrix(wire_order=wires).tocsr()
    psi = sv.hf_statevector(hf_state)
    for k, angle in zip(selected, list(theta)):  # _sv_build_state, one B at a time
        (B,), (B2,) = sv.pool_matrices([pool[k]], wires)
        psi = sv.apply_exp(B, B2, angle, psi)
    return sv.energy(H_sp, psi)


def run_adapt(H, pool, hf_state, wires, *, gradient_threshold: float,
              max_operators: int, max_iterations: int, seed=None,
              e_target: float | None, early_stop: bool = True,
              inner: str = "cobyla", adapt_engine: str = "qnode",
              backend: str = "default.qubit",
              callback: Callable[[dict], None] | None = None,
              checkpoint=None) -> AdaptResult:
    """Re-run ADAPT-VQE with the generator's procedure and order.

    ADAPT engine ``"qnode"`` reproduces ``run_vqe_adapt`` with
    ``grad_method="commutator"`` (inner COBYLA only); ``"statevector"``
    reproduces ``run_vqe_adapt_statevector``.

    Args:
        H: tapered qubit Hamiltonian (PennyLane operator, Ha).
        pool: the ADAPT pool, ``n_pool`` operators.
        hf_state: tapered HF bits, shape ``(n,)``.
        wires: sorted Hamiltonian wires, length ``n``.
        gradient_threshold: stop when max |gradient| < this (Ha/rad;
            ``adapt_metadata.gradient_threshold``).
        max_operators: cap on outer iterations (``adapt_metadata.max_operators``).
        max_iterations: ``maxiter`` of every inner optimisation
            (``run_config.max_iterations``).
        seed: recorded only; the generator's ADAPT draws no random numbers.
        e_target: CASCI energy (Ha) for the early stop, or ``None``.
        early_stop: stop once ``|E - e_target| < 0.01`` Ha.
        inner: ``"cobyla"`` or ``"l-bfgs-b"`` (``"bfgs"`` accepted);
            the QNode engine accepts only COBYLA.
        adapt_engine: ``"qnode"`` or ``"statevector"`` (see :func:`engine_for`).
        backend: PennyLane device for the QNode engine.
        callback: called after every outer iteration with a dict
            (iteration, max_gradient, selected index, energy, nfev so far).
        checkpoint: a :class:`qencode_nb.rerun.checkpoint.Checkpoint` of the
            finished steps (:func:`qencode_nb.rerun.adapt_loop.run_loop`), or None.

    Returns:
        :class:`AdaptResult`.

    Raises:
        ValueError: unknown engine or inner optimiser, QNode with L-BFGS-B,
            empty pool.
        AdaptEmpty: no operator was selected (the generator raises too).
    """
    import time

    from qencode_nb.rerun.adapt_backends import QNodeBackend, StatevectorBackend

    check_engine(adapt_engine)
    inner = check_inner(inner)
    if adapt_engine == "qnode" and inner != "cobyla":
        raise ValueError("the generator's QNode ADAPT engine (run_vqe_adapt) runs "
                         "COBYLA only; L-BFGS-B exists on the statevector engine")
    check_pool(len(pool))
    start = time.perf_counter()
    result = new_result(adapt_engine, inner, len(pool), gradient_threshold, max_operators,
                        max_iterations, seed, e_target)
    if adapt_engine == "qnode":
        engine = QNodeBackend(H, pool, hf_state, wires, backend)
    else:
        engine = StatevectorBackend(H, pool, hf_state, wires)
    return run_loop(engine, result, early_stop=early_stop, callback=callback, start=start,
                    checkpoint=checkpoint)


def run_adapt_sector(ci_space, gens, *, gradient_threshold: float, max_operators: int,
                     max_iterations: int, seed=None, e_target: float | None,
                     early_stop: bool = True, inner: str = "l-bfgs-b",
                     callback: Callable[[dict], None] | None = None,
                     checkpoint=None) -> AdaptResult:
    """ADAPT-VQE on the sector engine (the CI space, :mod:`qencode_nb.rerun.ci_space`),
    with the procedure of ``run_vqe_adapt_statevector``.

    Same loop and rules as :func:`run_adapt` with ``adapt_engine="statevector"``;
    the exact adjoint gradient is :func:`qencode_nb.rerun.ci_space.energy_and_grad`.
    Only the arithmetic differs: real CI-space vectors and PySCF's H·ψ
    instead of the ``2**n`` CSR matrices, so energies agree to rounding, not
    bit for bit.

    Args:
        ci_space: :class:`qencode_nb.rerun.ci_space.CISpace` (its energies include
            the core energy: comparable with the uncorrected tapered energy of a
            jordan_wigner entry).
        gens: the pool as :class:`qencode_nb.rerun.ci_space_generators.Generator`,
            in pool order.
        gradient_threshold, max_operators, max_iterations, seed, e_target,
        early_stop, inner, callback: as :func:`run_adapt`.

    Returns:
        :class:`AdaptResult` with ``adapt_engine="sector"``.

    Raises:
        ValueError: empty pool or unknown inner optimiser.
        AdaptEmpty: no operator was selected.
    """
    import time

    from qencode_nb.rerun.adapt_backends import CISpaceBackend

    inner = check_inner(inner)
    check_pool(len(gens))
    start = time.perf_counter()
    result = new_result("sector", inner, len(gens), gradient_threshold, max_operators,
                        max_iterations, seed, e_target)
    return run_loop(CISpaceBackend(ci_space, gens), result, early_stop=early_stop,
                    callback=callback, start=start,
                    checkpoint=checkpoint)


def run_adapt_fast(fast_problem, *, gradient_threshold: float, max_operators: int,
                   max_iterations: int, seed=None, e_target: float | None,
                   early_stop: bool = True, inner: str = "cobyla",
                   callback: Callable[[dict], None] | None = None,
                   checkpoint=None) -> AdaptResult:
    """The recorded ADAPT engine's procedure (QNode: ``run_vqe_adapt``,
    commutator screening, COBYLA inner; statevector: ``run_vqe_adapt_statevector``)
    on the compiled statevector engine
    (:class:`qencode_nb.rerun.adapt_backends.FastBackend`): same loop, pool
    order, rules and budgets as :func:`run_adapt` with that ``adapt_engine``;
    energies agree with the recorded engine's to rounding, not bit for bit.

    Args:
        fast_problem: :class:`qencode_nb.rerun.fast_problem.FastProblem` of an
            ADAPT entry (its ``words`` are the pool).
        gradient_threshold, max_operators, max_iterations, seed, e_target,
        early_stop, inner, callback: as :func:`run_adapt`.

    Returns:
        :class:`AdaptResult` with ``adapt_engine`` the procedure reproduced
        (``fast_problem.convention``).

    Raises:
        ValueError: empty pool, or an inner optimiser other than COBYLA for the
            QNode procedure (its only one).
        AdaptEmpty: no operator was selected.
    """
    import time

    inner = check_inner(inner)
    procedure = fast_problem.convention
    if procedure == "qnode" and inner != "cobyla":
        raise ValueError("the generator's QNode ADAPT engine (run_vqe_adapt) runs "
                         "COBYLA only; L-BFGS-B exists on the statevector engine")
    backend = fast_problem.adapt_backend()
    check_pool(backend.n_pool)
    start = time.perf_counter()
    result = new_result(procedure, inner, backend.n_pool, gradient_threshold, max_operators,
                        max_iterations, seed, e_target)
    return run_loop(backend, result, early_stop=early_stop, callback=callback, start=start,
                    checkpoint=checkpoint)
