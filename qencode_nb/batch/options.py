"""How every run of a sweep, a study or a robustness study runs: :class:`RunOptions`.

One frozen value, built once (by a command from its arguments,
:func:`qencode_nb.commands.run_args.run_options`, or from the keywords of
:func:`qencode_nb.batch.sweep.sweep`, :func:`qencode_nb.studies.run` and
:func:`qencode_nb.studies.robustness.robustness` by :func:`with_changes`) and passed
down to the runs.  The values are checked where they are used, before any run
(:func:`qencode_nb.notebook.parameters.check_mode`,
:func:`qencode_nb.engines.selection.check_engine`, the pins).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from qencode_nb.rules import PROOF_BUDGET_S


@dataclass(frozen=True)
class RunOptions:
    """The audit.ipynb parameters and the dispatch every run of a batch shares.

    Attributes:
        mode: audit mode: "full", "replay" or "rerun" (studies and robustness
            studies: "rerun" or "full").
        engine: audit.ipynb ``engine``: None (the recorded backend), "sector", "fast".
        blas_threads: BLAS threads of every run (an int >= 1; a threads study varies
            it, a kernels study runs at 1).
        blas_coretype: BLAS kernels of every run (a profile, ``host`` or one
            ``OPENBLAS_CORETYPE``); None: audit.ipynb's default.
        db: folder of QEncode JSON files completing bundled entries, or None.
        stack: the package stack every audit runs in
            (:mod:`qencode_nb.batch.stack_choice`): None or "current" (this
            environment), "recorded" (each entry's own, built once), or a stack name.
        workers: local processes, each running one notebook (own kernel) at a time.
        scheduler: a Dask distributed scheduler address (``tcp://host:port``); None
            runs on the local pool.
        timeout: per-run wall-clock limit in seconds (None: none).
        cell_timeout: per-cell limit in seconds (None: none).
        proof_budget: audit.ipynb ``proof_budget``: seconds a cold build of another
            Hamiltonian path may be estimated to take (default
            :data:`qencode_nb.rules.PROOF_BUDGET_S`; passed to the notebook only when
            it differs).
        progress: show a progress bar over the runs on stderr.
        plot: write the figure(s).
    """

    mode: str = "full"
    engine: str | None = None
    blas_threads: int = 1
    blas_coretype: str | None = None
    db: str | None = None
    stack: str | None = None
    workers: int = 1
    scheduler: str | None = None
    timeout: float | None = None
    cell_timeout: int | None = None
    proof_budget: float | None = PROOF_BUDGET_S
    progress: bool = True
    plot: bool = True


def with_changes(options: RunOptions | None, changes: dict, **defaults) -> RunOptions:
    """``options`` with the fields in ``changes`` replaced; without ``options``, a
    :class:`RunOptions` of ``defaults`` (e.g. ``mode="rerun"`` for a study) and
    ``changes``.  The keyword form of the entry points:
    ``sweep(targets, out, mode="replay")`` is ``sweep(targets, out,
    RunOptions(mode="replay"))``.

    Raises:
        TypeError: a name in ``changes`` that is not a field of :class:`RunOptions`.
    """
    return replace(options if options is not None else RunOptions(**defaults), **changes)


def proof_budget_parameter(options: RunOptions) -> dict:
    """audit.ipynb's ``proof_budget`` for a run of ``options``: ``{}`` at the default
    (a run's inputs, and so its resume key, are unchanged), else
    ``{"proof_budget": seconds}``."""
    budget = options.proof_budget
    return {} if budget == PROOF_BUDGET_S else {"proof_budget": budget}
