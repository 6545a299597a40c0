"""The re-run: the recorded optimiser with the recorded budgets, as a :class:`Rerun`.

HEA and UCCSD run :func:`qencode_nb.rerun.vqe.run_vqe` on the energy of the engine
the problem chose (``problem.engines.rerun``); ADAPT runs
:func:`qencode_nb.rerun.adapt.run_adapt` on that engine's arithmetic.
``run_config.max_iterations`` is never capped; restarts, seed, early stop (against
the CASCI energy, on the energy *before* the tapering constant correction) follow
the generator.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qencode_nb.errors import EntryError
from qencode_nb.engines.qnode.energy import qnode_energy
from qencode_nb.rules import ADAM_DEFAULT_LR, EARLY_STOP_HA


@dataclass
class Rerun:
    """One re-run.  Energies in Ha.

    Attributes:
        energy: best energy, tapering constant included.
        raw_energy: best energy before the constant correction.
        constant_ha: the tapering constant correction.
        params: the best parameters (radians), shape (num_params,).
        nfev: energy evaluations as the optimiser counts them.
        restarts_run: restarts that ran (1 for ADAPT).
        stopped_early: the early stop fired.
        config: what the optimiser received (tier 1 reads it).
        published: the entry's published counterparts (nfev, restarts, ...).
        findings: quirks of the generator's procedure this run reproduced.
        details: optimiser-specific values: restart energies and nfev (VQE),
            selected operators, gradients, ties and wall time (ADAPT).
        engine_fallback: why the requested engine (sector, fast) did not run.
        trace: the ``rerun_trace`` record (:meth:`qencode_nb.rerun.progress.Progress.trace`):
            energy per evaluation (ADAPT: per selected operator), Ha.
    """

    energy: float
    raw_energy: float
    constant_ha: float
    params: object
    nfev: int
    restarts_run: int
    stopped_early: bool
    config: dict
    published: dict
    findings: list
    details: dict = field(default_factory=dict)
    engine_fallback: str | None = None
    trace: dict | None = None

    def to_record(self) -> dict:
        """The ``rerun`` record (keys as audits have always written them)."""
        out = {"energy": self.energy, "raw_energy": self.raw_energy,
               "constant_ha": self.constant_ha, "params": self.params, "nfev": self.nfev,
               "restarts_run": self.restarts_run, "stopped_early": self.stopped_early}
        extra = dict(self.details)
        build = extra.pop("sector_build_seconds", None)
        out.update(extra)
        out.update({"config": self.config, "published": self.published,
                    "findings": self.findings})
        if build is not None:
            out["sector_build_seconds"] = build
        if self.engine_fallback is not None:
            out["engine_fallback"] = self.engine_fallback
        return out


def rerun(entry, problem, optimizer: str | None = None, resume: bool = False,
          checkpoint_dir=None, evaluation_log=None) -> Rerun:
    """Re-run the recorded optimiser with the recorded budgets.

    On the engine the problem chose to re-run (``problem.engines.rerun``; the
    configuration's ``backend`` names it, so tier 1 lists a deviation from the
    recorded one), with ``engine_fallback`` giving the reason when another engine
    was asked for and did not run.

    Args:
        entry: the :class:`~qencode_nb.entry.model.Entry`.
        problem: the :class:`~qencode_nb.rerun.problem.Problem`.
        optimizer: a study's override (e.g. "l-bfgs-b" or "Adam(lr=0.1)";
            vocabulary as ``run_config.optimizer``) replacing the recorded
            optimiser of a hea or uccsd entry; the configuration records what
            ran, so tier 1 reports the deviation.
        resume: continue from the checkpoint of an interrupted run of the same
            entry, procedure and environment (:mod:`qencode_nb.rerun.checkpoint`);
            finished restarts / ADAPT steps are taken from it, the result is
            bit-identical to an uninterrupted run.  Checkpoints are written
            either way and deleted when the run completes.  A checkpoint that
            cannot be used is set aside with a warning and the run starts over
            (``checkpoint_discarded`` in the record says why).
        checkpoint_dir: cache root of the checkpoints and of the COBYLA paths
            (:mod:`qencode_nb.rerun.cobyla_path`: a long COBYLA restart verified from a
            kept path instead of run; ``details.cobyla_paths`` counts them) (default:
            the rebuild cache's).
        evaluation_log: a file (audit.ipynb ``evaluation_log``, checked:
            :func:`qencode_nb.options.check_evaluation_log`) the re-run writes every
            objective evaluation to, in order, as JSON lines
            (:mod:`qencode_nb.rerun.evaluation_log`; the parameters and the energy
            returned to the optimiser, before the tapering constant); truncated first.
            Restarts restored from a checkpoint are not evaluated again and write
            nothing; an ADAPT re-run writes its inner evaluations (``restart``: the
            outer iteration).  The record's ``evaluation_log`` gives the path and the
            lines written.  None: no log.

    Returns:
        the :class:`Rerun`, or None when the record does not allow one
        (``entry.not_checkable["rerun"]``: the verdict's tiers 2 and 3 read n/a with it).

    Raises:
        EntryError: an override for an ADAPT entry, or ADAPT as an override.
    """
    from qencode_nb.options import check_evaluation_log
    from qencode_nb.rerun.checkpoint import Checkpoint, material
    from qencode_nb.rerun.cobyla_path import CobylaPaths
    from qencode_nb.rerun.evaluation_log import EvaluationLog
    from qencode_nb.rerun.progress import Progress

    evaluation_log = check_evaluation_log(evaluation_log)
    if "rerun" in getattr(entry, "not_checkable", {}):      # no ansatz: tiers 2, 3 n/a
        return None

    is_adapt = problem.is_adapt and optimizer is None
    run_material = material(entry, problem, str(optimizer or entry.optimizer.name),
                            "adapt" if is_adapt else "vqe")
    checkpoint = Checkpoint(run_material, resume=resume, cache_dir=checkpoint_dir)
    paths = CobylaPaths(run_material, cache_dir=checkpoint_dir)
    log = None if evaluation_log is None else EvaluationLog(evaluation_log)
    progress = Progress(entry.reference_energy, problem.constant_ha,
                        entry.adapt["max_operators"] if is_adapt else entry.restarts_requested,
                        None if is_adapt else entry.max_iterations, label=entry.name, log=log)
    out = None
    try:
        out = _dispatch(entry, problem, optimizer, progress, checkpoint, paths)
    finally:      # the bar's real end; where it stopped when the run failed
        progress.close(None if out is None else progress.ending(out.stopped_early))
        if log is not None:
            log.close()
    checkpoint.done()
    if log is not None:
        out.details["evaluation_log"] = _log_record(evaluation_log, log, is_adapt, checkpoint)
    out.details["resumed_parts"] = checkpoint.resumed
    if checkpoint.discarded:
        out.details["checkpoint_discarded"] = checkpoint.discarded
    out.trace = progress.trace()
    if problem.engines.requested is not None:
        out.engine_fallback = problem.engines.reason
    return out


def _log_record(path: str, log, is_adapt: bool, checkpoint) -> dict:
    """The ``rerun`` record's ``evaluation_log``: the path as given, the lines written,
    and why there are fewer than the evaluations (restored restarts or ADAPT steps; an
    ADAPT re-run writes its inner evaluations, ``restart`` the outer iteration)."""
    out = {"path": path, "lines": log.lines}
    if checkpoint.resumed:
        out["note"] = (f"{checkpoint.resumed} part(s) restored from the checkpoint were not "
                       "evaluated again; their evaluations are not written")
    return out


def _dispatch(entry, problem, optimizer: str | None, progress, checkpoint, paths) -> Rerun:
    opt = entry.optimizer
    if optimizer is not None:
        from qencode_nb.options import parse_optimizer

        opt = parse_optimizer(optimizer)   # the one check: ParameterError, the one set
        if problem.is_adapt:
            raise EntryError(f"{optimizer!r} is not accepted for an ADAPT entry (it "
                             "refuses an optimiser override); accepted: an override on "
                             "a hea or uccsd entry", field="optimizer")
    if problem.is_adapt:
        return _rerun_adapt(entry, problem, progress.adapt_step, checkpoint, progress.log)
    return _rerun_vqe(entry, problem, opt, progress, checkpoint, paths)


def _rerun_vqe(entry, problem, opt, progress, checkpoint, paths) -> Rerun:
    """HEA or UCCSD: :func:`qencode_nb.rerun.vqe.run_vqe` on the engine's energy."""
    from qencode_nb.rerun.vqe import run_vqe

    engine = problem.engines.rerun
    energy = engine.energy()
    res = run_vqe(progress.wrap(energy), problem.num_params, optimizer=opt.name,
                  max_iterations=entry.max_iterations, restarts=entry.restarts_requested,
                  seed=entry.seed, e_target=problem.e_target, early_stop=entry.early_stop,
                  learning_rate=opt.learning_rate or ADAM_DEFAULT_LR, progress=progress,
                  checkpoint=checkpoint, paths=paths)
    findings = _constant_finding(
        problem, f"; early stop cannot fire: {res.restarts_run} of "
                 f"{entry.restarts_requested} restarts ran")
    findings += engine.findings(None)
    return Rerun(
        **_outcome(problem, res.best_energy, res.best_params, res.nfev, res.restarts_run,
                   res.stopped_early),
        details={"energy_calls": energy.calls + checkpoint.restored_calls(),
                 "restart_energies": res.restart_energies,
                 "restart_nfev": res.restart_nfev,
                 "cobyla_paths": paths.record()},
        config={"optimizer": res.optimizer, "max_iterations": res.max_iterations,
                "restarts_requested": res.restarts_requested, "seed": res.seed,
                "early_stop": entry.early_stop,
                "backend": energy.backend, "early_stop_target_ha": problem.e_target,
                "early_stop_threshold_ha": EARLY_STOP_HA, "num_params": problem.num_params,
                "hamiltonian": problem.hamiltonian_origin},
        published={"nfev": entry.published_nfev, "restarts_run": entry.published_restarts_run,
                   "early_stopped": entry.published_early_stopped},
        findings=findings,
    )


def _outcome(problem, raw_energy: float, params, nfev: int, restarts_run: int,
             stopped_early: bool) -> dict:
    """The fields of a :class:`Rerun` every optimiser shares (energies in Ha)."""
    return {"energy": raw_energy + problem.constant_ha, "raw_energy": raw_energy,
            "constant_ha": problem.constant_ha, "params": params, "nfev": nfev,
            "restarts_run": restarts_run, "stopped_early": stopped_early}


def _constant_finding(problem, consequence: str = "") -> list[str]:
    """The generator's early-stop quirk, when the entry has a constant correction."""
    if not abs(problem.constant_ha) > 0:
        return []
    return ["the generator's early-stop check compares the energy before the tapering "
            f"constant correction ({problem.constant_ha:+.6f} Ha) with the CASCI energy"
            + consequence]


def _rerun_adapt(entry, problem, callback=None, checkpoint=None, log=None) -> Rerun:
    """ADAPT-VQE with the recorded threshold, operator cap, inner optimiser and
    ``max_iterations`` (:class:`qencode_nb.rerun.adapt.AdaptBudget`) on the engine
    that re-runs (:func:`qencode_nb.rerun.adapt.run_adapt`)."""
    from qencode_nb.rerun.adapt import AdaptBudget, run_adapt

    engine = problem.engines.rerun
    res = run_adapt(engine, AdaptBudget.of(entry, problem.e_target), callback=callback,
                    checkpoint=checkpoint, log=log)
    meta = entry.adapt
    recorded = meta.get("selected_operator_indices")
    findings = ["the generator's ADAPT draws no random numbers: the recorded seed has no "
                f"effect (run_config.seed={entry.seed}, multistart_requested="
                f"{entry.restarts_requested} unused)"]
    findings += _constant_finding(problem)
    if res.tied_iterations:
        findings.append("operator selection tied at outer iteration(s) "
                        f"{res.tied_iterations}; the lowest pool index won, a choice "
                        "last-digit differences can flip")
    if res.inner == "l-bfgs-b":     # only procedures with a gradient run it
        findings.append(f"the {res.adapt_engine} engine's nfev counts optimiser steps x (1 + "
                        "n_params), not energy evaluations; not comparable with COBYLA nfev")
    findings += engine.findings(res.inner)
    return Rerun(
        **_outcome(problem, res.best_energy, res.params, res.nfev, 1, res.stopped_early),
        details={"selected_operator_indices": res.selected_indices,
                 "selection_matches": (None if recorded is None
                                       else res.selected_indices == recorded),
                 "converged": res.converged, "n_iterations": res.n_iterations,
                 "max_gradients": res.max_gradients, "tied_iterations": res.tied_iterations,
                 "optimizer_label": res.optimizer_label, "wall_s": res.wall_s,
                 **engine.details()},
        config={"optimizer": "adapt", "inner": res.inner, "engine": res.adapt_engine,
                "gradient_threshold": res.gradient_threshold,
                "max_operators": res.max_operators, "max_iterations": res.max_iterations,
                "seed": res.seed, "early_stop": entry.early_stop,
                "pool": res.n_pool, "backend": engine.backend,
                "early_stop_target_ha": problem.e_target,
                "early_stop_threshold_ha": EARLY_STOP_HA,
                "hamiltonian": engine.hamiltonian_label or problem.hamiltonian_origin},
        published={"nfev": entry.published_nfev, "early_stopped": entry.published_early_stopped,
                   "selected_operator_indices": recorded, "converged": meta.get("converged"),
                   "n_iterations": meta.get("n_iterations")},
        findings=findings,
    )
