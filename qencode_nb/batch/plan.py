"""A plan before the bill: each entry's predicted wall time, measured (issue 53).

``qencode-nb sweep TARGETS --plan`` (:func:`qencode_nb.batch.plan_table.plan_sweep`)
predicts what each run of a sweep will take on this host, without running an audit.
The prediction of one entry comes from a measurement (:func:`measure`): a child
process of the run's kernel's Python (its ``--stack``), pinned as the run's kernel is
(BLAS threads and the entry's release kernels at launch,
:func:`qencode_nb.executor.papermill_engine.kernel_environment`; numpy not imported
before the pin) goes through the audit's stages on the entry -- pin, load,
Hamiltonian rebuild and check, the engines bound as the sweep would bind them
(``--engine``, default the recorded engine), one cold replay of the stored optimal
parameters -- then times the function the re-run calls once per optimiser evaluation,
cold (its setup) and warm (median of at least three calls, at least
:data:`~qencode_nb.rules.PLAN_WARM_MIN_S` and at most
:data:`~qencode_nb.rules.PLAN_WARM_BUDGET_S`), ADAPT's pool screening, and COBYLA's own
work per evaluation (:mod:`qencode_nb.batch.plan_probe`).  Then (:func:`predict`)::

    predicted = fixed + evaluations x seconds_per_evaluation + screenings x seconds_per_screening
    fixed     = interpreter start + pin + load + rebuild and check + engines bound
                + replay (modes full, replay) + re-run setup (modes full, rerun)
                + PLAN_NOTEBOOK_S (kernel start, verdict, figure, saves)

The evaluations follow from what the entry publishes, as the re-run code counts them
(:func:`evaluations`): COBYLA's ``results.vqe.nfev`` is its energy calls summed over the
restarts run (``rerun/vqe.py``); L-BFGS-B's is scipy's nfev x (1 + 2n) (the generator's
parameter-shift count), so the re-run makes nfev / (1 + 2n) energy-and-gradient calls;
Adam's is its steps (one energy-and-gradient each) plus one energy per restart; ADAPT
with COBYLA inside sums each inner COBYLA's nfev (``rerun/adapt_loop.py``), each at the
selection's size then (1 to N operators: taken as ``t(1) + 2/3 (t(N) - t(1))``, the mean
when a call's cost grows linearly with the operators and an inner optimisation's
evaluations in proportion to them); ADAPT with L-BFGS-B counts nfev x (1 + n) per outer
iteration, and a call's cost grows with 1 + n too, so it costs ``nfev x t(N) / (1 + N)``.
ADAPT also screens the whole pool once per outer iteration
(``adapt_metadata.n_iterations``; ``-4 Im<H psi|G_k psi>`` per pool operator on the QNode
engine, ``engines/qnode/adapt.py``: a state, then one sparse product per operator),
taken as the mean of a screening at the empty and at the recorded selection, plus the
new selection's QNode's first call.  Without a published nfev (an entry of one's own) the
budget is the bound: ``max_iterations x restarts`` (ADAPT: ``x max_operators``).

What the model ignores: a re-run that takes another path than the published one (other
restarts, an early stop that fires or not, another ADAPT selection: evaluations differ);
COBYLA paths kept from an earlier run (:mod:`qencode_nb.rerun.cobyla_path`: the re-run
then recomputes the energies without COBYLA's own work) and a checkpoint a run resumes
from; the progress bar and the checkpoints' writes (microseconds a call, milliseconds a
restart); other runs on the host (a sweep with ``--workers`` N is taken to have a core
per worker) and the host's load, while measuring and while running (on a shared host
both vary by up to a factor of three: the plan says so under its total, below
:data:`~qencode_nb.rules.PLAN_SHARED_CPU_SHARE` of a core); the rebuild cache (a
measurement made on a cold cache keeps the cold rebuild, what a fresh host or Dask worker
pays; on a warm one, the warm); a kernel that starts as a new interpreter (a stack's,
``--stack recorded``) rather than forked (the child's own start stands for it); the
sweep's own start and finish
(:data:`~qencode_nb.rules.PLAN_SWEEP_S`, added once to a plan's total).

Each measurement is kept (:func:`measure`) under the rebuild cache's root, ``plans/``
(or ``$QENCODE_NB_PLANS``: a folder identical hosts share, or a fresh one), keyed by the
entry file's SHA-256, the engine, the host's CPU model, the kernelspec and the run
options that change it (threads, kernels, proof budget, ``db``): planning again is free.
Delete the folder (or name another) to measure again.  Importing this module imports no
numpy.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

#: Bump when a measurement's content or meaning changes (kept ones are then re-measured).
FORMAT = 2

#: The folder of kept measurements under the rebuild cache's root.
SUBDIR = "plans"

#: The environment variable naming another folder of kept measurements (one several
#: identical hosts share, or a fresh one to measure again).
ENV_PLANS = "QENCODE_NB_PLANS"


def material(target, options, kernelspec: str | None = None) -> dict:
    """What a measurement of ``target`` under ``options`` (:class:`~qencode_nb.options.RunOptions`)
    in ``kernelspec`` (the run's package stack; None: this environment) depends on: the
    key of the kept one."""
    import platform

    from qencode_nb.batch.sweep import inputs_of
    from qencode_nb.hamiltonian.cache_key import cpu_model
    from qencode_nb.notebook import blas_profiles

    digest = inputs_of(target, {})["entry_sha256"]
    return {"format": FORMAT, "entry_sha256": digest,
            "engine": options.engine or "recorded", "cpu": cpu_model(),
            "machine": platform.machine(), "blas_threads": options.blas_threads,
            "blas_coretype": options.blas_coretype or blas_profiles.default(),
            "proof_budget": options.proof_budget,
            "db": None if options.db is None else str(Path(options.db).resolve()),
            "target": str(target) if digest is None else None, "kernelspec": kernelspec}


def kept_path(key_material: dict) -> Path:
    """The file of a kept measurement: ``<folder>/<key>.json``, the folder
    ``$QENCODE_NB_PLANS`` (:data:`ENV_PLANS`) or ``<cache root>/plans``."""
    import os

    from qencode_nb.hamiltonian.cache import cache_root

    key = hashlib.sha256(json.dumps(key_material, sort_keys=True).encode()).hexdigest()
    folder = os.environ.get(ENV_PLANS) or cache_root() / SUBDIR
    return Path(folder) / f"{key[:24]}.json"


def measure(target, options, *, kernelspec: str | None = None,
            timeout: float | None = None) -> dict:
    """The measurement of ``target`` (module docstring; :mod:`qencode_nb.batch.plan_probe`'s
    keys plus ``start_s``, the interpreter's start, ``measured_utc`` and ``kept``: True
    when it was read from the kept ones), kept for the next plan.

    Args:
        target: an entry file or bundled name.
        options: the sweep's :class:`~qencode_nb.options.RunOptions` (``engine``,
            ``blas_threads``, ``blas_coretype``, ``db``, ``proof_budget``).
        kernelspec: the Jupyter kernelspec the run runs in (``--stack``:
            :func:`qencode_nb.environment.choice.kernels_for`); the child is that
            kernel's Python (:func:`qencode_nb.environment.store.kernel_python`), so a
            stack's own imports are measured; None: this Python.
        timeout: seconds the child may take (default
            :data:`~qencode_nb.rules.PLAN_MEASURE_TIMEOUT_S`).

    Returns:
        the measurement, or ``{"failure": why}`` when the child failed or timed out
        (not kept: the next plan tries again).
    """
    import subprocess

    from qencode_nb.atomic import write_atomic
    from qencode_nb.environment.choice import release_of_entry
    from qencode_nb.environment.releases import kernel_profile
    from qencode_nb.executor.papermill_engine import kernel_environment
    from qencode_nb.notebook import blas_profiles
    from qencode_nb.paths import ROOT
    from qencode_nb.rules import PLAN_MEASURE_TIMEOUT_S

    key = material(target, options, kernelspec)
    path = kept_path(key)
    try:
        kept = json.loads(path.read_text())
        if kept.get("material") == key:
            return {**kept["measured"], "kept": True}
    except (OSError, ValueError, AttributeError):
        pass
    release = release_of_entry(target, options.db)
    coretype = options.blas_coretype or blas_profiles.default()
    args = json.dumps({"target": str(target), "db": key["db"], "engine": options.engine,
                       "threads": options.blas_threads, "coretype": coretype,
                       "release": release, "proof_budget": options.proof_budget})
    spawned = time.time()
    try:
        done = subprocess.run([run_python(kernelspec), "-m", "qencode_nb.batch.plan_probe", args],
                              env=kernel_environment(options.blas_threads, coretype,
                                                     release=kernel_profile(release)),
                              cwd=str(ROOT), capture_output=True, text=True, check=False,
                              timeout=timeout or PLAN_MEASURE_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        return {"failure": f"the measurement took over {exc.timeout:g} s and was stopped"}
    if done.returncode != 0:
        tail = [ln for ln in done.stderr.strip().splitlines() if ln.strip()][-1:]
        return {"failure": f"the measurement failed: {' '.join(tail)[:300]}"}
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    if measured.get("numpy_before_pin"):
        return {"failure": "numpy was imported before the pin in the measuring process "
                           "(a site hook?): its BLAS kernels and threads are not a run's"}
    measured["start_s"] = max(0.0, measured.pop("started_unix") - spawned)
    measured["measured_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({"material": key, "measured": measured},
                                      indent=1).encode())
    except OSError:   # a plan is advice: an unwritable cache only costs the next plan
        pass
    return {**measured, "kept": False}


def run_python(kernelspec: str | None) -> str:
    """The Python a run in ``kernelspec`` runs (this one for None, or for a kernelspec
    naming a bare ``python``, which Jupyter replaces by this interpreter)."""
    import sys

    from qencode_nb.environment.store import kernel_python

    found = kernel_python(kernelspec) if kernelspec else None
    return found if found and Path(found).is_absolute() else sys.executable


def evaluations(entry, measured: dict) -> tuple[int, str]:
    """``(evaluations, how they follow from the entry)``: the calls of the measured
    function (``measured["evaluation"]``) a re-run of ``entry`` makes (module docstring).
    ``n`` is the parameter count (ADAPT: the recorded selection's length)."""
    opt = entry.optimizer
    nfev = entry.published_nfev
    n = int(measured.get("num_params") or len(entry.optimal_params or ()) or 1)
    restarts = int(entry.published_restarts_run or entry.restarts_requested or 1)
    if nfev is None:
        budget = int(entry.max_iterations or 0) * int(entry.restarts_requested or 1)
        if opt.name == "adapt":
            budget = int(entry.max_iterations or 0) * int((entry.adapt or {}).get(
                "max_operators") or 1)
        return budget, "budget (no published nfev): max_iterations x restarts"
    nfev = int(nfev)
    if opt.name == "l-bfgs-b":
        return math.ceil(nfev / (1 + 2 * n)), "results.vqe.nfev / (1 + 2n)"
    if opt.name == "adam":
        return nfev + restarts, "results.vqe.nfev + one energy per restart"
    if opt.name == "adapt" and (opt.inner or "cobyla") == "l-bfgs-b":
        return math.ceil(nfev / (1 + n)), "results.vqe.nfev / (1 + N), at N operators"
    return nfev, "results.vqe.nfev"


def screenings(entry) -> int:
    """ADAPT's outer iterations, one pool screening each
    (``adapt_metadata.n_iterations``, else the selection's length + 1); 0 otherwise."""
    if entry.optimizer.name != "adapt":
        return 0
    meta = entry.adapt or {}
    if meta.get("n_iterations") is not None:
        return int(meta["n_iterations"])
    return len(meta.get("selected_operator_indices") or ()) + 1


@dataclass
class Prediction:
    """One entry's predicted run (seconds are wall seconds on the measuring host).

    Attributes:
        engine: the engine that re-runs (its label: a PennyLane device, ``qnode`` ...).
        optimizer: the recorded optimiser (ADAPT: ``adapt/<inner>``).
        evaluations: optimiser evaluations the re-run makes (:func:`evaluations`);
            ``evaluations_from`` how; ``evaluation`` what one costs.
        seconds_per_evaluation: the engine's warm call plus COBYLA's own work.
        screenings, seconds_per_screening: ADAPT's pool screenings (0 otherwise).
        fixed_seconds: what the run pays once (module docstring).
        predicted_seconds: the prediction (None: no measurement, ``failure`` says why).
        measured: the measurement (:func:`measure`).
    """

    engine: str | None = None
    optimizer: str | None = None
    evaluations: int = 0
    evaluations_from: str | None = None
    evaluation: str | None = None
    seconds_per_evaluation: float = 0.0
    screenings: int = 0
    seconds_per_screening: float = 0.0
    fixed_seconds: float | None = None
    predicted_seconds: float | None = None
    failure: str | None = None
    measured: dict = field(default_factory=dict)


def predict(entry, measured: dict, mode: str = "full") -> Prediction:
    """The prediction of ``entry``'s run in ``mode`` from its measurement (module
    docstring's formula).  Mode ``replay`` re-runs nothing (no evaluations, no re-run
    setup), ``rerun`` replays nothing."""
    from qencode_nb.rules import PLAN_NOTEBOOK_S

    opt = entry.optimizer
    label = opt.name if opt.name != "adapt" else f"adapt/{opt.inner or 'cobyla'}"
    if measured.get("failure"):
        return Prediction(optimizer=label, failure=measured["failure"], measured=measured)
    fixed = PLAN_NOTEBOOK_S + sum(measured.get(k) or 0.0 for k in (
        "start_s", "pin_s", "load_s", "hamiltonian_s", "problem_s"))
    if mode in ("full", "replay"):
        fixed += measured.get("replay_s") or 0.0
    out = Prediction(engine=measured.get("label"), optimizer=label, measured=measured)
    if mode == "replay" or measured.get("not_rerun"):
        out.evaluations_from = measured.get("not_rerun") or "mode replay: no re-run"
    else:
        fixed += measured.get("setup_s") or 0.0
        out.evaluations, out.evaluations_from = evaluations(entry, measured)
        out.evaluation = measured.get("evaluation")
        per = measured.get("eval_s") or 0.0
        if opt.name == "adapt" and measured.get("evaluation") == "energy":
            one = measured.get("eval_one_s", per)
            per = one + 2.0 / 3.0 * (per - one)
        out.seconds_per_evaluation = per + (measured.get("cobyla_step_s") or 0.0)
        out.screenings = screenings(entry)
        if out.screenings:
            out.seconds_per_screening = (measured.get("qnode_s") or 0.0) + 0.5 * (
                (measured.get("screen_empty_s") or 0.0) + (measured.get("screen_full_s") or 0.0))
    out.fixed_seconds = fixed
    out.predicted_seconds = (fixed + out.evaluations * out.seconds_per_evaluation
                             + out.screenings * out.seconds_per_screening)
    return out


def makespan(seconds, workers: int) -> float:
    """The wall time of runs taking ``seconds`` (in the order given: the pool's) on
    ``workers`` workers that each take the next run when free: what a local pool does."""
    import heapq

    free = [0.0] * max(1, int(workers))
    for s in seconds:
        heapq.heappush(free, heapq.heappop(free) + float(s))
    return max(free) if free else 0.0


def human(seconds) -> str:
    """``seconds`` in words a person reads at a glance: ``0.8 s``, ``42 s``,
    ``3 min 05 s``, ``2 h 07 min``; ``?`` for None."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "?"
    s = float(seconds)
    if s < 9.95:
        return f"{s:.1f} s"
    if s < 59.5:
        return f"{s:.0f} s"
    if s < 3599.5:
        return "{} min {:02d} s".format(*divmod(round(s), 60))
    return "{} h {:02d} min".format(*divmod(round(s / 60), 60))
