"""The run specification: the run options every command that runs audits offers, and the
one builder of a run's audit.ipynb parameters.

:data:`RUN_SPEC` is one row per option of :class:`~qencode_nb.options.RunOptions` a user
can set: its flag, its type and what it means, the same in every command (``--timeout``
is the wall clock of one whole run, ``--cell-timeout`` of one cell, everywhere).  The
command line builds its one argument group from it
(:func:`qencode_nb.commands.run_args.add_run_options`); a study's own axis (the thread
counts of ``study threads``, the kernels of ``study kernels``) replaces the option it
varies.

:func:`notebook_parameters` turns checked run options, the entry and a study's axis
values into the parameters of one audit.ipynb run; ``audit``, ``sweep`` (and the record
sweep), every study, the robustness study and the explain search all call it, and
:func:`job` puts those parameters with the run's two limits (``timeout``,
``cell_timeout``) into the job a pool runs (:func:`qencode_nb.batch.sweep.run_one`).
Importing this module imports no numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from qencode_nb.engines.selection import HAMILTONIANS
from qencode_nb.options import RunOptions, proof_budget_parameter


@dataclass(frozen=True)
class RunOption:
    """One run option: a field of :class:`~qencode_nb.options.RunOptions` and its flag.

    Attributes:
        field: the :class:`~qencode_nb.options.RunOptions` field (the argparse ``dest``).
        flag: the flag, the same in every command.
        type: the flag's argparse type (None: a string).
        metavar: the flag's metavar (None: argparse's).
        meaning: what it means, the flag's help where the command line adds none of its
            own (``--mode``, ``--engine``, ``--coretype`` and ``--stack`` list their
            accepted values from where they live, :mod:`qencode_nb.commands.run_args`).
        parameter: the audit.ipynb parameter it becomes (None: it decides how a run
            is executed or dispatched, not what the notebook computes).
        dispatch: how many runs go at once and where (``--workers``,
            ``--scheduler``): offered by the commands that run many audits.
    """

    field: str
    flag: str
    type: type | None = None
    metavar: str | None = None
    meaning: str = ""
    parameter: str | None = None
    dispatch: bool = False


#: The run options, in the order the command line lists them.
RUN_SPEC = (
    RunOption("mode", "--mode", meaning="audit mode", parameter="mode"),
    RunOption("engine", "--engine", meaning="the engine that re-runs and replays",
              parameter="engine"),
    RunOption("hamiltonian", "--hamiltonian", None, "|".join(HAMILTONIANS),
              parameter="hamiltonian",
              meaning="the qubit Hamiltonian the replay and the re-run run on: stored "
                      "(default: the entry's stored terms; the rebuild where it stores "
                      "none) or rebuilt (the one the audit's chemistry stage rebuilds "
                      "here, as QEncode's own generator would optimise it; refused for "
                      "an entry that cannot be rebuilt)"),
    RunOption("blas_threads", "--threads", int, "THREADS",
              "BLAS threads of every run (default 1)", parameter="blas_threads"),
    RunOption("blas_coretype", "--coretype", None, "CORETYPE", "BLAS kernels of every run",
              parameter="blas_coretype"),
    RunOption("stack", "--stack", None, "STACK", "package stack", parameter="stack"),
    RunOption("db", "--db", None, "DIR", "folder of QEncode JSON files completing bundled "
              "entries (params/)", parameter="db"),
    RunOption("proof_budget", "--proof-budget", float, "SECONDS", parameter="proof_budget",
              meaning="seconds a cold build of another Hamiltonian path (PennyLane's "
                      "native) may be estimated to take; over it the Hamiltonian check "
                      "reads unverified: native build skipped"),
    RunOption("timeout", "--timeout", float, "SECONDS",
              "wall-clock limit of each whole run in seconds; past it the run and its "
              "kernel are killed and the run is failed (default: none)"),
    RunOption("cell_timeout", "--cell-timeout", int, "SECONDS",
              "limit of each notebook cell in seconds (default: none)"),
    RunOption("workers", "--workers", int, "N", "parallel runs, each its own process "
              "(default 1)", dispatch=True),
    RunOption("scheduler", "--scheduler", None, "ADDR", "Dask distributed scheduler "
              "address, e.g. tcp://127.0.0.1:8786 (default: a local process pool)",
              dispatch=True),
)

#: ``{field: RunOption}`` of :data:`RUN_SPEC`.
BY_FIELD = {o.field: o for o in RUN_SPEC}


def notebook_parameters(options: RunOptions, entry, axis: dict | None = None, *,
                        resume: bool = False, public_key=None) -> dict:
    """audit.ipynb's parameters of one run: the one builder.

    Args:
        options: checked run options (:class:`~qencode_nb.options.RunOptions`).
        entry: the entry file or bundled name (checked by the caller).
        axis: a study's own values for this run, replacing the options' (``{"blas_threads":
            2}``, ``{"blas_coretype": "Haswell"}``, ``{"optimizer": "COBYLA"}``, the
            explain search's ``stack``, ``{"hamiltonian": "rebuilt", "evaluation_log":
            PATH}``); a value None leaves the notebook's default.
        resume: add ``resume=True`` (continue an interrupted re-run from its checkpoint).
        public_key: a PEM file verifying the entry's own signature (resolved).

    Returns:
        ``{"entry", "mode", "blas_threads"}`` and, where they differ from the notebook's
        defaults, ``blas_coretype``, ``engine``, ``hamiltonian`` (nothing for "stored",
        so a run's inputs and resume key stay as they were), ``db`` (resolved), ``stack`` (nothing
        for "current": :func:`qencode_nb.environment.choice.stack_parameter`),
        ``proof_budget`` (:func:`qencode_nb.options.proof_budget_parameter`: nothing at
        the default, so a run's inputs and resume key stay as they were), ``resume``,
        ``public_key``, then ``axis``.
    """
    from qencode_nb.environment.choice import stack_parameter

    params = {"entry": entry, "blas_threads": options.blas_threads, "mode": options.mode}
    if resume:
        params["resume"] = True
    if options.engine is not None:
        params["engine"] = options.engine
    if options.hamiltonian != "stored":
        params["hamiltonian"] = options.hamiltonian
    if options.blas_coretype:
        params["blas_coretype"] = options.blas_coretype
    if options.db is not None:
        params["db"] = str(Path(options.db).resolve())
    if public_key:
        params["public_key"] = str(Path(public_key).resolve())
    params.update(stack_parameter(options.stack))
    params.update(proof_budget_parameter(options))
    for name, value in (axis or {}).items():
        if value is None:
            params.pop(name, None)
        else:
            params[name] = value
    return params


def job(options: RunOptions, target, out_dir, parameters: dict, name: str | None = None,
        kernel: str | None = None) -> tuple:
    """One run as a pool runs it: :func:`qencode_nb.batch.sweep.run_one`'s positional
    arguments ``(target, out_dir, parameters, timeout, cell_timeout, name, kernel)``,
    the two limits from ``options`` (``timeout`` per whole run, ``cell_timeout`` per
    cell)."""
    return (target, str(out_dir), parameters, options.timeout, options.cell_timeout, name,
            kernel)
