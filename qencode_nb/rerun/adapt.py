"""ADAPT-VQE as QEncode's generator runs it: replay and re-run.

Reproduces, from ``scripts/generate_entry_v4.py`` of qencode-benchmark
(commit e1f44cd):

- ``run_vqe_adapt`` (engine ``"qnode"``, used up to 12 tapered qubits): the
  energy is ``qml.expval(H)`` of a PennyLane circuit (``qml.BasisState`` of
  the tapered HF state, then :func:`qencode_nb.rerun.ansatz.apply_tapered_op` for
  each selected operator), operators are screened with commutator gradients
  ``-4 Im <H psi| G_k psi>`` on sparse matrices, the inner optimiser is
  COBYLA (``rhobeg`` 0.5).
- ``run_vqe_adapt_statevector`` (engine ``"statevector"``, above 12 tapered
  qubits): :mod:`qencode_nb.rerun.statevector`; screening ``|Re <H psi| B_k psi>|``
  with ``B_k = 2i G_k``, inner L-BFGS-B with the exact adjoint gradient
  (``ftol`` 1e-12, ``gtol`` 1e-8) or COBYLA.

Both: the pool is :func:`qencode_nb.rerun.ansatz.tapered_uccsd_ops`; each outer
iteration screens every unselected pool operator, stops (``converged``) when
the largest |gradient| is below ``gradient_threshold`` (ties go to the lowest
index: strict ``>``), otherwise appends the winner at angle 0 and re-optimises
all parameters from the previous optimum; after the inner optimisation it
stops early when ``|E - e_target| < 0.01`` Ha (``e_target`` is the CASCI
energy, compared with the *uncorrected* tapered energy); at most
``max_operators`` outer iterations.  No random numbers are drawn: the
generator accepts a seed and ignores it.

Energies in Hartree (Ha) before any tapering constant correction
(``encoding.tapering.bk_constant_correction_ha``); angles in radians.
Numpy, scipy and PennyLane are imported inside the functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from qencode_nb.errors import QencodeNbError

QNODE_MAX_QUBITS = 12
"""Largest tapered qubit count the generator's ``--adapt-engine auto`` runs on
the QNode engine; above it the statevector engine is used."""

CERTIFICATION_HA = 0.01
"""Early-stop threshold of the generator: ``|E - e_target| < 0.01`` Ha."""

COBYLA_RHOBEG = 0.5
LBFGSB_FTOL = 1e-12
LBFGSB_GTOL = 1e-8

ENGINES = ("qnode", "statevector")
"""The generator's engines (:func:`run_adapt`); the sector engine is
:func:`run_adapt_sector`."""
INNER_OPTIMIZERS = ("cobyla", "l-bfgs-b")


class AdaptEmpty(QencodeNbError, RuntimeError):
    """ADAPT selected no operator (the generator raises and writes no entry)."""


@dataclass
class AdaptResult:
    """Outcome of :func:`run_adapt`, in the generator's terms.

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
        engine, inner: ``"qnode"``/``"statevector"``, ``"cobyla"``/``"l-bfgs-b"``.
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
    engine: str = "qnode"
    inner: str = "cobyla"
    n_pool: int = 0
    gradient_threshold: float = 1e-3
    max_operators: int = 100
    max_iterations: int = 500
    seed: Any = None
    e_target: float | None = None
    wall_s: float = 0.0

    @property
    def hit_max_operators(self) -> bool:
        """Neither converged nor stopped early: the ``max_operators`` cap ended it."""
        return not self.converged and not self.stopped_early

    @property
    def tied_iterations(self) -> list:
        """1-based outer iterations whose winner tied (relative gap < 1e-12)
        with another operator's |gradient|: the lowest index won."""
        return [i + 1 for i, (a, b) in enumerate(zip(self.max_gradients,
                                                     self.runner_up_gradients))
                if a > 0 and (a - b) <= 1e-12 * a]

    @property
    def optimizer_label(self) -> str:
        """The generator's ``results.vqe.optimizer`` string for this run (the
        sector engine is labelled as such: it is not one of the generator's)."""
        if self.engine == "sector":
            name = "L-BFGS-B" if self.inner == "l-bfgs-b" else "COBYLA"
            return f"ADAPT-VQE ({name} inner, sector engine)"
        if self.engine == "statevector":
            name = "L-BFGS-B" if self.inner == "l-bfgs-b" else "COBYLA"
            return f"ADAPT-VQE ({name} inner, statevector engine)"
        return "ADAPT-VQE (COBYLA inner)"

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
        if self.engine in ("statevector", "sector"):
            meta["engine"] = self.engine
            meta["inner_optimizer"] = "L-BFGS-B" if self.inner == "l-bfgs-b" else "COBYLA"
        return meta


def engine_for(n_tapered_qubits: int) -> str:
    """The generator's ``--adapt-engine auto`` rule.

    Returns ``"qnode"`` for ``n_tapered_qubits <= 12``, else ``"statevector"``.
    (Not the pool rule: the pool switches on the *untapered* count, see
    :func:`qencode_nb.rerun.ansatz.tapered_uccsd_ops`.)
    """
    return "qnode" if int(n_tapered_qubits) <= QNODE_MAX_QUBITS else "statevector"


def _check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise ValueError(f"ADAPT engine {engine!r} is not accepted; accepted: "
                         f"{', '.join(ENGINES)}")
    return engine


def _check_inner(inner: str) -> str:
    name = str(inner).lower()
    if name == "bfgs":  # the generator's --adapt-inner spelling
        name = "l-bfgs-b"
    if name not in INNER_OPTIMIZERS:
        raise ValueError(f"ADAPT inner optimiser {inner!r} is not accepted; accepted: "
                         f"{', '.join(INNER_OPTIMIZERS)} (or 'bfgs')")
    return name


def check_selection(pool, selected_indices, params):
    selected = [int(k) for k in selected_indices]
    if len(selected) != len(params):
        raise ValueError(f"{len(selected)} selected operators but {len(params)} parameters")
    bad = [k for k in selected if not 0 <= k < len(pool)]
    if bad:
        raise ValueError(f"selected operator indices {bad} lie outside the pool "
                         f"of {len(pool)} operators")
    return selected


def _qnode_energy_fn(H, pool, hf_state, wires, backend):
    """``f(selected, params) -> E`` through a PennyLane QNode (one device)."""
    import numpy as np
    import pennylane as qml

    from qencode_nb.rerun.ansatz import apply_tapered_op

    hf = np.array(hf_state, dtype=int)
    wires = list(wires)
    dev = qml.device(backend, wires=wires)

    def make(selected):
        ops = [pool[k] for k in selected]

        @qml.qnode(dev)
        def energy(p):
            qml.BasisState(hf, wires=wires)
            for i, op in enumerate(ops):
                apply_tapered_op(op, p[i])
            return qml.expval(H)

        return energy

    return dev, make


def replay_energy(H, pool, hf_state, selected_indices, params, wires, *,
                  engine: str = "qnode", backend: str = "default.qubit") -> float:
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
        engine: ``"qnode"`` or ``"statevector"`` (see :func:`engine_for`).
        backend: PennyLane device name for the QNode engine.

    Returns:
        the energy in Ha; add ``bk_constant_correction_ha`` (if any) to
        compare with ``results.vqe.best_energy_hartree``.

    Raises:
        ValueError: unknown engine, index outside the pool, or lengths differ.
    """
    import numpy as np

    _check_engine(engine)
    selected = check_selection(pool, selected_indices, params)
    theta = np.array([float(p) for p in params], dtype=float)
    if engine == "qnode":
        _, make = _qnode_energy_fn(H, pool, hf_state, wires, backend)
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
              inner: str = "cobyla", engine: str = "qnode",
              backend: str = "default.qubit",
              callback: Callable[[dict], None] | None = None) -> AdaptResult:
    """Re-run ADAPT-VQE with the generator's procedure and order.

    Engine ``"qnode"`` reproduces ``run_vqe_adapt`` with
    ``grad_method="commutator"`` (inner COBYLA only); engine
    ``"statevector"`` reproduces ``run_vqe_adapt_statevector``.

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
        engine: ``"qnode"`` or ``"statevector"`` (see :func:`engine_for`).
        backend: PennyLane device for the QNode engine.
        callback: called after every outer iteration with a dict
            (iteration, max_gradient, selected index, energy, nfev so far).

    Returns:
        :class:`AdaptResult`.

    Raises:
        ValueError: unknown engine or inner optimiser, QNode with L-BFGS-B,
            empty pool.
        AdaptEmpty: no operator was selected (the generator raises too).
    """
    import time

    _check_engine(engine)
    inner = _check_inner(inner)
    if engine == "qnode" and inner != "cobyla":
        raise ValueError("the generator's QNode ADAPT engine (run_vqe_adapt) runs "
                         "COBYLA only; L-BFGS-B exists on the statevector engine")
    if not pool:
        raise ValueError("the ADAPT pool is empty; the generator falls back to HEA (reps=2)")
    start = time.perf_counter()
    result = _new_result(engine, inner, len(pool), gradient_threshold, max_operators,
                         max_iterations, seed, e_target)
    if engine == "qnode":
        _run_qnode(result, H, pool, hf_state, list(wires), backend, early_stop, callback)
    else:
        _run_statevector(result, H, pool, hf_state, list(wires), early_stop, callback)
    return _finish(result, start)


def _new_result(engine, inner, n_pool, gradient_threshold, max_operators, max_iterations,
                seed, e_target) -> AdaptResult:
    """An empty :class:`AdaptResult` carrying the settings of a run."""
    return AdaptResult(best_energy=float("inf"), params=[], selected_indices=[], nfev=0,
                       converged=False, n_iterations=0, stopped_early=False,
                       engine=engine, inner=inner, n_pool=n_pool,
                       gradient_threshold=gradient_threshold,
                       max_operators=int(max_operators),
                       max_iterations=int(max_iterations), seed=seed, e_target=e_target)


def _finish(result: AdaptResult, start: float) -> AdaptResult:
    """Record the wall time; raise :class:`AdaptEmpty` when nothing was selected."""
    import time

    result.wall_s = time.perf_counter() - start
    if not result.selected_indices:
        raise AdaptEmpty(f"ADAPT-VQE selected 0 operators (pool of {result.n_pool}, "
                         f"threshold {result.gradient_threshold:.0e}, largest |gradient| "
                         f"{result.max_gradients[-1] if result.max_gradients else 0.0:.3e})")
    return result


def _inner_step(result: AdaptResult, params, energy, energy_and_grad):
    """The inner optimisation of the statevector procedure, from ``params``.

    L-BFGS-B (``ftol`` 1e-12, ``gtol`` 1e-8) on ``energy_and_grad(p) -> (E, grad)``
    or COBYLA (``rhobeg`` 0.5) on ``energy(p) -> E``, ``maxiter`` the run's
    ``max_iterations``.  Returns ``(scipy result, nfev as the generator counts
    it)``: L-BFGS-B ``nfev * (1 + n_params)`` (its adjoint count), COBYLA ``nfev``.
    """
    import numpy as np
    from scipy.optimize import minimize

    x0 = np.array(params, dtype=float)
    if result.inner == "l-bfgs-b":
        res = minimize(energy_and_grad, x0, jac=True, method="L-BFGS-B",
                       options={"maxiter": result.max_iterations, "ftol": LBFGSB_FTOL,
                                "gtol": LBFGSB_GTOL})
        return res, int(res.nfev) * (1 + len(params))
    res = minimize(energy, x0, method="COBYLA",
                   options={"maxiter": result.max_iterations, "rhobeg": COBYLA_RHOBEG})
    return res, int(res.nfev)


def _screen(gradient, n_pool, selected, runner_up: list):
    """Largest |gradient| over unselected indices; ties to the lowest index.

    Appends the second-largest |gradient| (any other index) to ``runner_up``.
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


def _after_inner(result, energy, params, raw_nfev, counted_nfev, early_stop, callback,
                 iteration, best_abs, best_idx):
    result.params = [float(x) for x in params]
    result.best_energy = energy
    result.nfev += counted_nfev
    result.energies.append(energy)
    result.inner_nfev.append(raw_nfev)
    if callback is not None:
        callback({"iteration": iteration + 1, "max_gradient": best_abs,
                  "selected": best_idx, "n_operators": len(result.selected_indices),
                  "energy": energy, "nfev": result.nfev})
    if (early_stop and result.e_target is not None
            and abs(energy - result.e_target) < CERTIFICATION_HA):
        result.stopped_early = True
        return True
    return False


def _run_qnode(result, H, pool, hf_state, wires, backend, early_stop, callback):
    import numpy as np
    import pennylane as qml
    from scipy.optimize import minimize

    from qencode_nb.rerun import statevector as sv
    from qencode_nb.rerun.ansatz import apply_tapered_op

    dev, make_energy = _qnode_energy_fn(H, pool, hf_state, wires, backend)
    hf = np.array(hf_state, dtype=int)
    H_sp = sv.hamiltonian_csr(H, wires)
    G_sps = [sv.pauli_csr(sv.generator_of(op), wires) for op in pool]
    selected = result.selected_indices
    params: list = []

    for iteration in range(result.max_operators):
        result.n_iterations = iteration + 1
        ops = [pool[k] for k in selected]

        @qml.qnode(dev)
        def state(p):
            qml.BasisState(hf, wires=wires)
            for i, op in enumerate(ops):
                apply_tapered_op(op, p[i])
            return qml.state()

        psi = np.asarray(state(np.array(params, dtype=float)), dtype=complex).ravel()
        Hpsi = H_sp @ psi
        # dE/dtheta = -2 * 2 * Im<H psi|G psi> (the generator's _COMM_FACTOR 2.0)
        best_abs, best_idx = _screen(
            lambda k: -2.0 * 2.0 * float(np.imag(np.vdot(Hpsi, G_sps[k] @ psi))),
            len(pool), selected, result.runner_up_gradients)
        result.max_gradients.append(best_abs)
        if best_idx < 0 or best_abs < result.gradient_threshold:
            result.converged = True
            return
        selected.append(best_idx)
        params.append(0.0)
        energy_fn = make_energy(list(selected))
        res = minimize(lambda p: float(energy_fn(p)), np.array(params, dtype=float),
                       method="COBYLA",
                       options={"maxiter": result.max_iterations, "rhobeg": COBYLA_RHOBEG})
        params = res.x.tolist()
        if _after_inner(result, float(res.fun), params, int(res.nfev), int(res.nfev),
                        early_stop, callback, iteration, best_abs, best_idx):
            return


def _run_statevector(result, H, pool, hf_state, wires, early_stop, callback):
    import numpy as np

    from qencode_nb.rerun import statevector as sv

    H_sp = H.sparse_matrix(wire_order=wires).tocsr()
    Bs, B2s = sv.pool_matrices(pool, wires)
    psi0 = sv.hf_statevector(hf_state)
    selected = result.selected_indices
    params: list = []
    result.best_energy = sv.energy(H_sp, psi0)  # the generator starts from E_HF

    for iteration in range(result.max_operators):
        result.n_iterations = iteration + 1
        psi = sv.build_state(psi0, Bs, B2s, selected, params)
        Hpsi = H_sp @ psi
        best_abs, best_idx = _screen(
            lambda k: float(np.real(np.vdot(Hpsi, Bs[k] @ psi))), len(pool), selected,
            result.runner_up_gradients)
        result.max_gradients.append(best_abs)
        if best_idx < 0 or best_abs < result.gradient_threshold:
            result.converged = True
            return
        selected.append(best_idx)
        params.append(0.0)
        res, counted = _inner_step(
            result, params,
            lambda p: sv.energy(H_sp, sv.build_state(psi0, Bs, B2s, selected, list(p))),
            lambda p: sv.energy_and_grad(H_sp, Bs, B2s, psi0, selected, list(p)))
        params = list(np.asarray(res.x, dtype=float).ravel())
        if _after_inner(result, float(res.fun), params, int(res.nfev), counted,
                        early_stop, callback, iteration, best_abs, best_idx):
            return


def run_adapt_sector(sector, gens, *, gradient_threshold: float, max_operators: int,
                     max_iterations: int, seed=None, e_target: float | None,
                     early_stop: bool = True, inner: str = "l-bfgs-b",
                     callback: Callable[[dict], None] | None = None) -> AdaptResult:
    """ADAPT-VQE on the sector engine (:mod:`qencode_nb.rerun.ci_space`), with the
    procedure of ``run_vqe_adapt_statevector``.

    Same order and rules as :func:`run_adapt` with ``engine="statevector"``:
    start from E_HF; screen ``|<H psi|B_k psi>|`` over the unselected pool
    (ties to the lowest index); stop when the largest is below
    ``gradient_threshold``; append the winner at angle 0; re-optimise all
    angles from the previous optimum with L-BFGS-B (``ftol`` 1e-12, ``gtol``
    1e-8, exact adjoint gradient :func:`qencode_nb.rerun.ci_space.energy_and_grad`) or
    COBYLA (``rhobeg`` 0.5); early stop when ``|E - e_target| < 0.01`` Ha;
    nfev counted as the generator counts it.  Only the arithmetic differs:
    real sector vectors and PySCF's H·ψ instead of the ``2**n`` CSR matrices,
    so energies agree to rounding, not bit for bit.

    Args:
        sector: :class:`qencode_nb.rerun.ci_space.Sector` (its energies include the
            core energy: comparable with the uncorrected tapered energy of a
            jordan_wigner entry).
        gens: the pool as :class:`qencode_nb.rerun.ci_space.Generator`, in pool order.
        gradient_threshold, max_operators, max_iterations, seed, e_target,
        early_stop, inner, callback: as :func:`run_adapt`.

    Returns:
        :class:`AdaptResult` with ``engine="sector"``.

    Raises:
        ValueError: empty pool or unknown inner optimiser.
        AdaptEmpty: no operator was selected.
    """
    import time

    import numpy as np

    from qencode_nb.rerun import ci_space as S

    inner = _check_inner(inner)
    if not gens:
        raise ValueError("the ADAPT pool is empty; the generator falls back to HEA (reps=2)")
    start = time.perf_counter()
    result = _new_result("sector", inner, len(gens), gradient_threshold, max_operators,
                         max_iterations, seed, e_target)
    selected = result.selected_indices
    params: list = []
    hf = sector.hf()
    result.best_energy = sector.energy(hf)
    for iteration in range(result.max_operators):
        result.n_iterations = iteration + 1
        psi = S.build_state(sector, gens, selected, params)
        Hpsi = sector.hop(psi.reshape(sector.shape)).reshape(-1)
        best_abs, best_idx = _screen(lambda k: gens[k].expval(Hpsi, psi), len(gens),
                                     selected, result.runner_up_gradients)
        result.max_gradients.append(best_abs)
        if best_idx < 0 or best_abs < result.gradient_threshold:
            result.converged = True
            break
        selected.append(best_idx)
        params.append(0.0)
        res, counted = _inner_step(
            result, params,
            lambda p: sector.energy(S.build_state(sector, gens, selected, p)
                                    .reshape(sector.shape)),
            lambda p: S.energy_and_grad(sector, gens, selected, p))
        params = list(np.asarray(res.x, dtype=float).ravel())
        if _after_inner(result, float(res.fun), params, int(res.nfev), counted, early_stop,
                        callback, iteration, best_abs, best_idx):
            break
    return _finish(result, start)
