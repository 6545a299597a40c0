"""Progress of a re-run as it runs, and the trace the audit's figure draws.

A :class:`Progress` wraps the re-run's energy function (VQE) or receives the
ADAPT loop's callback.  It keeps every evaluated energy (Ha, tapering constant
included) and the evaluation at which each restart began, and shows a tqdm bar
on stdout: restart i/n (ADAPT: operators selected / cap), evaluations, the
current best error against the exact ground energy (mHa) and tqdm's ETA.  Stdout,
not stderr: JupyterLab draws stderr on a pink background, which reads as a failure.

The bar is tqdm's plain text bar, which JupyterLab redraws in place (carriage
returns in a stream output) and papermill ``--log-output`` passes through; it
refreshes at most every :data:`MIN_INTERVAL_S` seconds, so a long re-run
leaves a few hundred short updates, not one line per evaluation.  The total
is the budget (restarts x ``max_iterations``, an upper bound: early stop and
COBYLA's own stopping end sooner), so the ETA is an upper bound too; when the run
ends, the bar is redrawn at its real end, full, saying how it ended ("early stop at
evaluation 1000", :meth:`Progress.close`).
``QENCODE_NB_PROGRESS=0`` turns the bar off (the trace is kept).

Every evaluation passes through here (:meth:`Progress.evaluated`, from the wrapped
function, from an L-BFGS-B or Adam step through :meth:`_Counted.observe`, or from a kept
COBYLA path verified: :meth:`Progress.replayed`), so here too the evaluation log is
written (audit.ipynb ``evaluation_log``, :mod:`qencode_nb.rerun.evaluation_log`): one
line per evaluation with its restart (:meth:`Progress.start_restart`), the parameters
and the energy returned to the optimiser (before the constant).  A restart restored
from a checkpoint (:meth:`Progress.restore`) is not evaluated again and writes nothing;
the ADAPT loop reports operators, not its inner optimiser's evaluations
(:meth:`Progress.adapt_step`); an ADAPT re-run writes its inner evaluations to the log
through :class:`qencode_nb.rerun.evaluation_log.LoggedBackend` instead.
"""

from __future__ import annotations

import math
import os
import sys

#: Seconds between two redraws of the bar (tqdm ``mininterval``).
MIN_INTERVAL_S = 2.0

#: The bar's layout (tqdm ``bar_format``): a 20-character bar and no width limit, so
#: the closing words ("early stop at evaluation 1000") and the error are never cut.
BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar:20}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}{postfix}]"

#: Environment variable that turns the bar off when "0".
PROGRESS_ENV = "QENCODE_NB_PROGRESS"


class Progress:
    """Counts a re-run's evaluations, keeps their energies, shows a bar.

    Args:
        e_ref: the exact ground energy the error is measured against (Ha).
        constant_ha: the tapering constant added to the optimiser's energy (Ha).
        restarts: restarts requested (VQE) or the operator cap (ADAPT).
        max_iterations: ``run_config.max_iterations`` per restart (VQE; None for ADAPT).
        label: the bar's description (the entry's name).
        enabled: show the bar; default: unless ``$QENCODE_NB_PROGRESS`` is "0".
        log: an :class:`~qencode_nb.rerun.evaluation_log.EvaluationLog` each evaluation
            is written to (None: none).
    """

    def __init__(self, e_ref: float, constant_ha: float, restarts: int,
                 max_iterations: int | None, label: str = "re-run",
                 enabled: bool | None = None, log=None):
        self.e_ref = float(e_ref)
        self.log = log
        self.constant_ha = float(constant_ha)
        self.restarts = int(restarts)
        self.max_iterations = max_iterations
        self.energies: list[float] = []        # every evaluation (VQE), Ha
        self.restart_starts: list[int] = []    # evaluation index where restart k began
        self.best = math.inf
        self._restart = 0
        if enabled is None:
            enabled = os.environ.get(PROGRESS_ENV, "1") != "0"
        self._bar = None
        if enabled:
            from tqdm import tqdm

            total = self.restarts * max_iterations if max_iterations else self.restarts
            unit = "eval" if max_iterations else "operator"
            self._bar = tqdm(total=total, desc=label, unit=unit, file=sys.stdout,
                             mininterval=MIN_INTERVAL_S, bar_format=BAR_FORMAT, leave=True)

    def error_mha(self, energy: float) -> float:
        """|energy + constant - e_ref| in mHa (``energy`` before the constant, Ha)."""
        return abs(energy + self.constant_ha - self.e_ref) * 1e3

    def start_restart(self, index: int) -> None:
        """Restart ``index`` (0-based) begins; the bar jumps to its budget's start."""
        self._restart = index
        self.restart_starts.append(len(self.energies))
        if self._bar is not None and self.max_iterations:
            self._bar.n = index * self.max_iterations
            self._postfix(force=True)

    def wrap(self, energy):
        """``energy`` (a callable ``params -> float`` with ``calls``, maybe
        ``energy_and_grad`` and ``qnode``) with every evaluation counted."""
        return _Counted(energy, self)

    def evaluated(self, energy: float, params=None) -> None:
        """One evaluation at ``params`` (radians) gave ``energy`` (Ha, before the
        constant); written to the evaluation log when there is one.

        Raises:
            ValueError: an evaluation without its parameters while a log is written.
        """
        e = float(energy)
        if self.log is not None:
            if params is None:
                raise ValueError("an evaluation reported without its parameters cannot "
                                 "be written to the evaluation log")
            self.log.write(self._restart, params, e)
        self.energies.append(e + self.constant_ha)
        self.best = min(self.best, e)
        if self._bar is not None:
            if self.max_iterations and self._bar.n < (self._restart + 1) * self.max_iterations:
                self._bar.update(1)
            self._postfix()

    def restore(self, energies: list) -> None:
        """A finished part taken from a checkpoint: its evaluated energies (Ha,
        constant included, as :attr:`energies` holds them) join the trace; nothing is
        evaluated again, so nothing is written to the evaluation log."""
        for e in energies:
            self.energies.append(float(e))
            self.best = min(self.best, float(e) - self.constant_ha)
        if self._bar is not None:
            self._bar.update(len(energies) if self.max_iterations else 1)
            self._postfix()

    def replayed(self, points, energies) -> None:
        """A kept COBYLA path verified (:mod:`qencode_nb.rerun.cobyla_path`): each
        energy (Ha, before the constant) was evaluated here at its point (radians), in
        order, equal to the bit to what COBYLA was given; they join the trace and the
        evaluation log as a run of COBYLA would have left them."""
        if self.log is not None:
            for x, e in zip(points, energies):
                self.log.write(self._restart, x, float(e))
        self.restore([float(e) + self.constant_ha for e in energies])

    def adapt_step(self, info: dict) -> None:
        """The ADAPT loop's callback (:func:`qencode_nb.rerun.adapt_loop.run_loop`), once
        per selected operator (its inner optimiser's evaluations do not pass here; they
        reach the evaluation log through
        :class:`~qencode_nb.rerun.evaluation_log.LoggedBackend`)."""
        self.energies.append(float(info["energy"]) + self.constant_ha)
        self.best = min(self.best, float(info["energy"]))
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix_str(f"evals {info['nfev']}, error {self._best_text()}",
                                      refresh=False)

    def close(self, ended: str | None = None) -> None:
        """End the bar with one last redraw.

        Args:
            ended: how the run ended ("early stop at evaluation 1000",
                :meth:`ending`): the bar is redrawn full at its real end (the
                evaluations, or operators, actually made) with these words; None (the
                run failed): the bar stays where it stopped.
        """
        if self._bar is not None:
            if ended:
                self._bar.total = self._bar.n = len(self.energies)
                where = (f", restart {self._restart + 1}/{self.restarts}"
                         if self.max_iterations else "")
                self._bar.set_postfix_str(f"{ended}{where}, error {self._best_text()}",
                                          refresh=True)
            else:
                self._postfix(force=True)
            self._bar.close()
            self._bar = None

    def ending(self, stopped_early: bool) -> str:
        """How a finished run ended, in the bar's words: "early stop at evaluation N"
        (ADAPT: "at operator N"), else "N evaluations of a budget of M" (COBYLA's own
        stopping ends a restart before ``max_iterations``) or "N operators of a cap of M"."""
        n = len(self.energies)
        if self.max_iterations:
            if stopped_early:
                return f"early stop at evaluation {n}"
            return f"{n} evaluations of a budget of {self.restarts * self.max_iterations}"
        if stopped_early:
            return f"early stop at operator {n}"
        return f"{n} operators of a cap of {self.restarts}"

    def trace(self) -> dict:
        """The ``rerun_trace`` record: energies per evaluation (Ha), restart starts,
        the reference energy (Ha)."""
        return {"energies_ha": list(self.energies), "restart_starts": list(self.restart_starts),
                "e_ref_ha": self.e_ref, "per": "evaluation" if self.max_iterations else "operator"}

    def _best_text(self) -> str:
        return "-" if self.best == math.inf else f"{self.error_mha(self.best):.4g} mHa"

    def _postfix(self, force: bool = False) -> None:
        if self.max_iterations:
            text = (f"restart {self._restart + 1}/{self.restarts}, evals "
                    f"{len(self.energies)}, error {self._best_text()}")
        else:   # ADAPT: the bar counts operators (of the cap), the postfix the error
            text = f"operators {len(self.energies)}/{self.restarts}, error {self._best_text()}"
        self._bar.set_postfix_str(text, refresh=force)


class _Counted:
    """An energy function that reports each evaluation to a :class:`Progress`;
    everything else (``calls``, ``backend``, ``qnode``) is the wrapped one's."""

    def __init__(self, energy, progress: Progress):
        self._energy = energy
        self._progress = progress
        if hasattr(energy, "energy_and_grad"):
            self.energy_and_grad = self._energy_and_grad

    def __call__(self, params):
        value = self._energy(params)
        self._progress.evaluated(float(value), params)
        return value

    @property
    def inner(self):
        """The wrapped energy function (its evaluations are not reported)."""
        return self._energy

    @property
    def progress(self) -> Progress:
        """The :class:`Progress` told of each evaluation."""
        return self._progress

    def observe(self, value: float, params=None) -> None:
        """An evaluation at ``params`` (radians) made through the wrapped function's
        ``qnode`` (the optimiser's gradient path), reported by the optimiser."""
        self._progress.evaluated(float(value), params)

    def _energy_and_grad(self, params):
        value, grad = self._energy.energy_and_grad(params)
        self._progress.evaluated(float(value), params)
        return value, grad

    def __getattr__(self, name):
        return getattr(self._energy, name)
