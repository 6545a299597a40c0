"""The VQE optimisers, run exactly as QEncode runs them.

Source: ``run_vqe``, ``_run_vqe_bfgs`` and ``_run_vqe_adam`` of the public
generator ``scripts/generate_entry_v4.py`` (QEncode v4.4, commit e1f44cd).

- Restart 0 starts from zeros; restart k>0 from
  ``default_rng(seed).uniform(-pi, pi, num_params)`` drawn in order.
- COBYLA: ``scipy.optimize.minimize(method="COBYLA", options={"maxiter":
  max_iterations, "rhobeg": 0.5})``; nfev is scipy's count.
- L-BFGS-B: analytic gradients (``qml.grad``), ``ftol=1e-12, gtol=1e-8``;
  QEncode reports nfev as ``steps * (1 + 2 * num_params)`` (parameter-shift
  count), and so do we.
- Adam: ``qml.AdamOptimizer(stepsize=lr)``, ``max_iterations`` steps.
- Early stop after each restart when ``|best - e_target| < 0.01`` Ha, with
  ``e_target`` the CASCI energy.  The generator compares the energy *before*
  the tapering constant correction is added, so for entries with a
  correction early stop never fires (a quirk reproduced here and reported).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qencode_nb.rules import COBYLA_RHOBEG, EARLY_STOP_HA, LBFGSB_FTOL, LBFGSB_GTOL


@dataclass
class VQEResult:
    """Outcome of a multistart VQE.  Energies in Ha, before any constant correction."""

    best_energy: float
    best_params: list
    nfev: int
    restarts_run: int
    stopped_early: bool
    restart_energies: list = field(default_factory=list)
    restart_nfev: list = field(default_factory=list)
    optimizer: str = "cobyla"
    max_iterations: int = 0
    restarts_requested: int = 0
    seed: int = 0


def run_vqe(energy, num_params: int, *, optimizer: str = "cobyla", max_iterations: int,
            restarts: int, seed: int, e_target: float | None = None,
            early_stop: bool = True, learning_rate: float = 0.05,
            progress=None, checkpoint=None, paths=None) -> VQEResult:
    """Multistart VQE as the generator's ``run_vqe``.

    Args:
        energy: callable ``params -> float`` (Ha); for l-bfgs-b and adam it
            must be a PennyLane QNode-backed :class:`~qencode_nb.engines.qnode.energy.Energy`
            or have an exact ``energy_and_grad`` (:class:`qencode_nb.engines.fast.compiled.Energy`).
        num_params: number of ansatz parameters.
        optimizer: "cobyla", "l-bfgs-b" or "adam" (or another spelling
            :func:`qencode_nb.options.parse_optimizer` accepts).
        max_iterations: the entry's ``run_config.max_iterations`` (never capped).
        restarts: the entry's ``run_config.multistart_requested``.
        seed: the entry's ``run_config.seed``.
        e_target: early-stop target (Ha), QEncode uses the CASCI energy.
        early_stop: stop once ``|best - e_target| < 0.01`` Ha.
        learning_rate: Adam's step size.
        progress: a :class:`qencode_nb.rerun.progress.Progress` told when each
            restart begins (``energy`` is then its wrapped function), or None.
        checkpoint: a :class:`qencode_nb.rerun.checkpoint.Checkpoint`: each finished
            restart is saved to it, and a restart it already holds is taken from it
            (energy, angles, nfev exactly as run) instead of being run again; the
            start points are drawn in order either way, so the result is the same.
        paths: a :class:`qencode_nb.rerun.cobyla_path.CobylaPaths`: each COBYLA restart
            runs through it (a stored path whose every energy is recomputed here to the
            bit is taken without running COBYLA), or None.

    Raises:
        ParameterError: an unknown optimiser (:func:`qencode_nb.options.parse_optimizer`:
            names the accepted ones).
    """
    import numpy as np

    from qencode_nb.options import parse_optimizer

    runners = {"cobyla": _cobyla, "l-bfgs-b": _lbfgsb, "adam": _adam}
    if optimizer not in runners:      # the one check (its class and accepted set)
        optimizer = parse_optimizer(optimizer).name
    rng = np.random.default_rng(seed)
    best_energy, best_params = np.inf, None
    out = VQEResult(best_energy=np.inf, best_params=[], nfev=0, restarts_run=0,
                    stopped_early=False, optimizer=optimizer, max_iterations=max_iterations,
                    restarts_requested=restarts, seed=seed)
    for run in range(restarts):
        x0 = np.zeros(num_params) if run == 0 else rng.uniform(-np.pi, np.pi, num_params)
        if progress is not None:
            progress.start_restart(run)
        saved = checkpoint.part(run) if checkpoint is not None else None
        if saved is not None:
            e_run, x_run, nfev, stop_inside = (saved["energy"], saved["x"], saved["nfev"],
                                               saved["stop_inside"])
            if progress is not None:
                progress.restore(saved["trace"])
        else:
            first = len(progress.energies) if progress is not None else 0
            calls = getattr(energy, "calls", 0)
            if optimizer == "cobyla" and paths is not None:
                e_run, x_run, nfev = paths.run(run, energy, x0, _cobyla_options(max_iterations))
                stop_inside = False
            else:
                e_run, x_run, nfev, stop_inside = runners[optimizer](
                    energy, x0, max_iterations, e_target if early_stop else None,
                    learning_rate)
            if checkpoint is not None:
                checkpoint.save(run, {
                    "energy": float(e_run), "x": [float(v) for v in np.ravel(x_run)],
                    "nfev": int(nfev), "stop_inside": bool(stop_inside),
                    "calls": getattr(energy, "calls", 0) - calls,
                    "trace": [] if progress is None else progress.energies[first:]})
        out.nfev += nfev
        out.restart_energies.append(float(e_run))
        out.restart_nfev.append(int(nfev))
        out.restarts_run = run + 1
        if e_run < best_energy:
            best_energy, best_params = e_run, np.array(x_run, dtype=float).copy()
        if stop_inside or (early_stop and e_target is not None
                           and abs(best_energy - e_target) < EARLY_STOP_HA):
            out.stopped_early = True
            break
    out.best_energy = float(best_energy)
    out.best_params = [float(x) for x in best_params]
    return out


def _cobyla(energy, x0, max_iterations, e_target, learning_rate):
    res = _cobyla_options(max_iterations)(lambda p: float(energy(p)), x0)
    return res.fun, res.x, int(res.nfev), False


def _cobyla_options(max_iterations: int):
    """``(f, x0) -> OptimizeResult``: scipy's COBYLA with the generator's options."""
    from scipy.optimize import minimize

    def run(f, x0):
        return minimize(f, x0, method="COBYLA",
                        options={"maxiter": max_iterations, "rhobeg": COBYLA_RHOBEG})

    return run


#: The optimisers whose every energy is a QNode's value on trainable parameters
#: (``pennylane.numpy`` arrays, ``requires_grad=True``): L-BFGS-B takes the energy with its
#: ``qml.grad`` on them, Adam its ``step_and_cost`` and final ``cost(params)``
#: (``_run_vqe_bfgs``, ``_run_vqe_adam`` of the generator).
GRADIENT_OPTIMIZERS = ("l-bfgs-b", "adam")


def trainable_value(qnode, params) -> float:
    """The energy (Ha) of ``qnode`` at ``params`` (radians, shape ``(num_params,)``) called
    as a gradient optimiser calls it: on trainable parameters.  PennyLane's
    ``default.qubit`` sums a trainable call's expectation in another order than a plain
    one's, so the two differ in the last bits: measured 2026-12-07 on QEncode v4's
    L-BFGS-B HEA entries (v4 kernel triple, v4 pins), the plain call 4 ulps from the
    published energy for H6 JW/HEA ``fa91a2bc`` and 2 for N2 JW/HEA ``17841ede``, this one
    equal to it in both.  The one place a trainable energy is computed (L-BFGS-B's calls,
    :func:`qencode_nb.rerun.replay.replay`)."""
    import pennylane.numpy as pnp

    return float(qnode(pnp.array(params, requires_grad=True)))


def gradient_fn(energy):
    """``f(p) -> (E, dE/dp)``: the energy's own exact gradient when it has one
    (the compiled statevector engine's adjoint), else ``qml.grad`` of its QNode: what
    L-BFGS-B calls once per step (``scipy`` nfev).  A plan times it
    (:mod:`qencode_nb.batch.plan_probe`)."""
    if hasattr(energy, "energy_and_grad"):
        return energy.energy_and_grad
    import numpy as np
    import pennylane as qml
    import pennylane.numpy as pnp

    qnode = energy.qnode

    observe = getattr(energy, "observe", None)  # a Progress-wrapped energy counts it

    def f_and_grad(p):
        e = trainable_value(qnode, p)
        g = np.array(qml.grad(qnode)(pnp.array(p, requires_grad=True)))
        if observe is not None:
            observe(e, p)
        return e, g

    return f_and_grad


def _lbfgsb(energy, x0, max_iterations, e_target, learning_rate):
    from scipy.optimize import minimize

    f_and_grad = gradient_fn(energy)

    res = minimize(f_and_grad, x0, jac=True, method="L-BFGS-B",
                   options={"maxiter": max_iterations, "ftol": LBFGSB_FTOL,
                            "gtol": LBFGSB_GTOL})
    # QEncode counts circuit evaluations: 1 forward + 2 per parameter per step.
    return res.fun, res.x, int(res.nfev) * (1 + 2 * len(x0)), False


def _adam(energy, x0, max_iterations, e_target, learning_rate):
    import numpy as np
    import pennylane as qml
    import pennylane.numpy as pnp

    params = pnp.array(x0, requires_grad=True)
    opt = qml.AdamOptimizer(stepsize=learning_rate)
    steps, stopped = 0, False
    if hasattr(energy, "energy_and_grad"):   # the fast engine: its adjoint gradient
        cost = energy
        kwargs = {"grad_fn": lambda p: energy.energy_and_grad(np.asarray(p, dtype=float))[1]}
    else:
        cost, kwargs = energy.qnode, {}
    for _ in range(max_iterations):
        x = np.array(params, dtype=float)     # e_step is the energy here, before the step
        params, e_step = opt.step_and_cost(cost, params, **kwargs)
        steps += 1
        if cost is not energy and hasattr(energy, "observe"):
            energy.observe(float(e_step), x)
        if e_target is not None and abs(float(e_step) - e_target) < EARLY_STOP_HA:
            stopped = True
            break
    return float(cost(params)), np.array(params), steps, stopped
