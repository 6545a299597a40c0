"""A plan's measurement of one entry, in a child process pinned as an audit's kernel is.

Run as ``python -m qencode_nb.batch.plan_probe ARGS`` (``ARGS``: a JSON object of
``target``, ``db``, ``engine``, ``threads``, ``coretype``, ``release``,
``proof_budget``) by :func:`qencode_nb.batch.plan.measure`, with the launch
environment of the run's kernel (:func:`qencode_nb.executor.papermill_engine.kernel_environment`:
BLAS threads and the entry's release kernels).  It pins first, as ``audit.ipynb``'s
frame cell does (:func:`qencode_nb.notebook.pins.pin`; numpy is not imported before),
then goes through the audit's stages on the entry and times each (wall seconds,
``time.perf_counter``), and prints one JSON object, its last line:

- ``started_unix``: when its ``main`` began (the parent subtracts its own spawn time:
  the interpreter's start); ``numpy_before_pin``: numpy was loaded before the pin (never,
  unless a site hook imports it: the parent then refuses the measurement);
- ``pin_s``: the pin (numpy, scipy and PySCF's OpenBLAS loaded), ``blas_threads`` and
  ``kernels`` (``{copy: kernel}``) as it measured them, what the run's ``blas_profile``
  record says; ``load_s``: the entry
  read, its recorded environment, the provenance and the integrity check;
- ``hamiltonian_s``: :func:`~qencode_nb.hamiltonian.check.rebuild` and
  :func:`~qencode_nb.hamiltonian.check.hamiltonian_check` (``proof_budget``), with
  ``cache_hit``; ``problem_s``: :func:`~qencode_nb.rerun.problem.build_problem`
  (the engines bound, PennyLane imported); ``replay_s``: one cold
  :func:`~qencode_nb.rerun.replay.replay` of the stored optimal parameters;
- ``engine``: the engine that re-runs (``Bound.engine``), ``label``, ``num_params``;
- ``evaluation``: what the re-run calls once per optimiser evaluation,
  ``"energy"`` (COBYLA) or ``"energy+gradient"`` (L-BFGS-B, Adam);
- ``setup_s``: building that function (a QNode; ADAPT: the engine's loop arithmetic,
  ``adapt_backend``) plus its first call less a warm one; ``eval_s``: the median warm
  call at the stored parameters (ADAPT: at the recorded selection), ``eval_calls``, and
  ``cpu_share``: the share of a core those calls got (below 1: a shared host, whose
  timings vary with its load);
- ADAPT only: ``eval_one_s`` (the same at the selection's first operator alone),
  ``qnode_s`` (a new selection's first call less a warm one: paid once per outer
  iteration), ``screen_empty_s`` and ``screen_full_s`` (one screening of the whole pool,
  :func:`~qencode_nb.rerun.adapt_loop.screen`, at the empty and at the recorded
  selection);
- ``cobyla_step_s``: COBYLA's own seconds per evaluation (scipy's Fortran, the
  generator's options) on a quadratic of ``num_params`` parameters, past its first
  ``n + 1`` evaluations (the initial simplex); 0 for another optimiser;
- ``not_rerun``: why the entry has no re-run (its record allows none), else None.

An entry whose stage fails ends the child with exit status 1 and the error's last line
on stderr (the plan then has no prediction for it, saying why).  Importing this module
imports no numpy.
"""

from __future__ import annotations

import json
import sys
import time


def warm_time(fn, *args) -> tuple[float, int, float]:
    """``(median seconds, calls, share of a core)`` of warm calls ``fn(*args)``: at least
    :data:`~qencode_nb.rules.PLAN_WARM_MIN_CALLS` and :data:`~qencode_nb.rules.PLAN_WARM_MIN_S`,
    stopping once :data:`~qencode_nb.rules.PLAN_WARM_BUDGET_S` is spent (one call at
    least); the share is this process's CPU seconds over the wall seconds of the calls
    (1: a core of its own; 0.5: a host whose other work took half of it)."""
    import statistics

    from qencode_nb.rules import PLAN_WARM_BUDGET_S, PLAN_WARM_MIN_CALLS, PLAN_WARM_MIN_S

    times, start, cpu = [], time.perf_counter(), time.process_time()
    while True:
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
        spent = time.perf_counter() - start
        enough = len(times) >= PLAN_WARM_MIN_CALLS and spent >= PLAN_WARM_MIN_S
        if enough or spent >= PLAN_WARM_BUDGET_S:
            share = (time.process_time() - cpu) / spent if spent > 0 else 1.0
            return statistics.median(times), len(times), share


def cold_and_warm(fn, *args) -> tuple[float, float, int, float]:
    """``(first call s, median warm call s, warm calls, share of a core)`` of
    ``fn(*args)`` (:func:`warm_time`)."""
    t = time.perf_counter()
    fn(*args)
    first = time.perf_counter() - t
    return (first, *warm_time(fn, *args))


class _Budget(Exception):
    """Raised inside COBYLA's objective when the measurement's time is spent."""


def cobyla_step(n: int) -> float:
    """COBYLA's own seconds per evaluation at ``n`` parameters: scipy's COBYLA with the
    generator's options (``rhobeg`` :data:`~qencode_nb.rules.COBYLA_RHOBEG`) on
    ``sum((x - 0.3)**2)``, timed between consecutive evaluations past the first ``n + 1``
    (the initial simplex, whose steps do no linear algebra), for at most
    :data:`~qencode_nb.rules.PLAN_WARM_BUDGET_S`; the objective's own time (a few
    microseconds) is included."""
    import numpy as np
    from scipy.optimize import minimize

    from qencode_nb.rules import COBYLA_RHOBEG, PLAN_WARM_BUDGET_S

    stamps = []
    start = time.perf_counter()

    def f(x):
        stamps.append(time.perf_counter())
        if stamps[-1] - start > PLAN_WARM_BUDGET_S:
            raise _Budget
        return float(np.sum((x - 0.3) ** 2))

    try:
        minimize(f, np.zeros(n), method="COBYLA",
                 options={"maxiter": 2 * n + 50, "rhobeg": COBYLA_RHOBEG})
    except _Budget:
        pass
    steps = np.diff(stamps[n + 1:] if len(stamps) > n + 3 else stamps)
    return float(np.median(steps)) if len(steps) else 0.0


def measure_rerun(entry, problem) -> dict:
    """The re-run's part of the measurement (module docstring): ``evaluation``,
    ``setup_s``, ``eval_s``, ``eval_calls`` and, for ADAPT, ``eval_one_s``, ``qnode_s``,
    ``screen_empty_s``, ``screen_full_s``; ``cobyla_step_s``."""
    engine = problem.engines.rerun
    opt = entry.optimizer
    out = {"engine": engine.engine, "label": engine.label, "num_params": problem.num_params}
    if problem.is_adapt:
        from qencode_nb.rerun.adapt_loop import check_inner, screen

        inner = check_inner(opt.inner or "cobyla")
        t = time.perf_counter()
        backend = engine.adapt_backend(inner)
        built = time.perf_counter() - t
        selected = [int(k) for k in entry.adapt["selected_operator_indices"]]
        params = [float(x) for x in entry.optimal_params]
        make = backend.energy_and_grad if inner == "l-bfgs-b" else backend.energy
        import numpy as np

        first, warm, calls, share = cold_and_warm(make(selected), np.array(params))
        out.update(evaluation="energy+gradient" if inner == "l-bfgs-b" else "energy",
                   setup_s=built + max(0.0, first - warm), eval_s=warm, eval_calls=calls,
                   cpu_share=share, qnode_s=max(0.0, first - warm))
        out["eval_one_s"] = warm_time(make(selected[:1]), np.array(params[:1]))[0]
        out["screen_empty_s"] = warm_time(
            lambda: screen(backend.pool_gradient([], []), backend.n_pool, [], []))[0]
        out["screen_full_s"] = warm_time(
            lambda: screen(backend.pool_gradient(selected, params), backend.n_pool,
                           selected, []))[0]
        out["cobyla_step_s"] = cobyla_step(len(selected)) if inner == "cobyla" else 0.0
        return out
    import numpy as np

    from qencode_nb.rerun.vqe import gradient_fn

    t = time.perf_counter()
    energy = engine.energy()
    fn = energy if opt.name == "cobyla" else gradient_fn(energy)
    built = time.perf_counter() - t
    first, warm, calls, share = cold_and_warm(fn, np.array(entry.optimal_params,
                                                           dtype=float))
    out.update(evaluation="energy" if opt.name == "cobyla" else "energy+gradient",
               setup_s=built + max(0.0, first - warm), eval_s=warm, eval_calls=calls,
               cpu_share=share,
               cobyla_step_s=cobyla_step(problem.num_params) if opt.name == "cobyla"
               else 0.0)
    return out


def main(argv=None) -> int:
    """Measure the entry ``argv[0]`` (JSON, module docstring) names; print the result."""
    started = time.time()
    args = json.loads((argv if argv is not None else sys.argv[1:])[0])
    from qencode_nb.environment.releases import kernel_profile
    from qencode_nb.notebook.pins import pin

    out = {"started_unix": started, "numpy_before_pin": "numpy" in sys.modules}
    t = time.perf_counter()
    pinned = pin(args["threads"], args["coretype"], release=kernel_profile(args["release"]))
    out["pin_s"] = time.perf_counter() - t
    out["blas_threads"] = pinned["blas_threads"]
    out["kernels"] = pinned["profile"].get("kernels")

    from qencode_nb.entry import load
    from qencode_nb.environment.recorded import of_entry
    from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild
    from qencode_nb.notebook import provenance
    from qencode_nb.rerun.problem import build_problem
    from qencode_nb.rerun.replay import replay
    from qencode_nb.trust.integrity import integrity

    t = time.perf_counter()
    entry = load(args["target"], db=args["db"])
    of_entry(entry)
    provenance.collect(entry.tool_versions)
    integrity(entry, None)
    out["load_s"] = time.perf_counter() - t
    t = time.perf_counter()
    rebuilt = rebuild(entry)
    checked = hamiltonian_check(entry, rebuilt, proof_budget=args["proof_budget"])
    out["hamiltonian_s"] = time.perf_counter() - t
    out["cache_hit"] = checked.to_record().get("cache_hit")
    t = time.perf_counter()
    problem = build_problem(entry, rebuilt, args["engine"], checked, rerun=True)
    out["problem_s"] = time.perf_counter() - t
    t = time.perf_counter()
    replay(entry, problem)
    out["replay_s"] = time.perf_counter() - t
    why_not = (getattr(entry, "not_checkable", {}) or {}).get("rerun")
    if why_not is None and problem.engines.rerun.label is None:
        why_not = problem.engines.reason
    out["not_rerun"] = why_not
    if why_not is None:
        out.update(measure_rerun(entry, problem))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
