"""Every audit and run parameter checked in one place, and the run options built once.

The notebook frame (:func:`audit_parameters`), the command line
(:func:`qencode_nb.commands.run_args.run_options`), sweeps, studies and robustness
studies (:class:`RunOptions`, checked when it is built and whenever a field is
replaced) all call the checks here; nothing else re-checks a mode, an engine, a
thread count, a kernel, a timeout, a worker count or a stack.  Each refusal is a
:class:`~qencode_nb.errors.ParameterError` naming the parameter (the CLI names the
flag as typed, :func:`qencode_nb.commands.flags.as_typed`), the value and the
accepted set, taken from where that set lives:

- ``mode``: :data:`MODES` (studies: :data:`STUDY_MODES`);
- ``engine``: the engines registry (:func:`qencode_nb.engines.registry.names`);
- ``hamiltonian``: :data:`qencode_nb.engines.selection.HAMILTONIANS` (which qubit
  Hamiltonian the re-run and the replay run on; the entry's own refusal, no rebuild,
  is the problem stage's: :func:`qencode_nb.engines.selection.on_hamiltonian`);
- ``evaluation_log``: a file path or None (:func:`check_evaluation_log`);
- ``blas_coretype``: the kernel profiles
  (:func:`qencode_nb.notebook.blas_profiles.accepted_values`; on this CPU);
- ``stack``: :data:`qencode_nb.environment.store.STACK_WORDS` and the ready stacks
  in :func:`qencode_nb.paths.stacks_root`;
- ``optimizer``: :data:`OPTIMIZERS` (:func:`parse_optimizer`; the re-run and the
  optimisers study refuse with it too);
- counts (``blas_threads``, ``workers``, ``repeats``) and seconds (``timeout``,
  ``cell_timeout``, ``proof_budget``: :data:`qencode_nb.rules.PROOF_BUDGET_S`);
- ``shard`` (a sweep's ``--shard K/N``): :func:`check_shard`.

Importing this module imports nothing heavy (the pin cell calls it before numpy
loads).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields, replace

from qencode_nb.engines import registry
from qencode_nb.engines.selection import HAMILTONIANS
from qencode_nb.environment.store import STACK_WORDS, ready_stacks
from qencode_nb.errors import ParameterError, PinError
from qencode_nb.notebook import blas_profiles
from qencode_nb.paths import STACK_NAME_PATTERN
from qencode_nb.rules import PROOF_BUDGET_S

#: Audit modes (audit.ipynb ``mode``).
MODES = ("full", "replay", "rerun")

#: Modes that re-run the optimiser: a study or a robustness study compares re-run
#: energies, so "replay" has nothing to compare.
STUDY_MODES = ("rerun", "full")


def _refuse(value, accepted: str, parameter: str):
    raise ParameterError(f"{value!r} is not accepted; accepted: {accepted}",
                         parameter=parameter)


def env_choice(variable: str, accepted: tuple, default: str) -> str:
    """The value of the environment variable ``variable``, one of ``accepted``;
    ``default`` when it is unset or empty (``QENCODE_NB_KERNEL_START``,
    ``QENCODE_NB_COBYLA_PATHS``).

    Raises:
        ParameterError: another value (the message names the variable, the value and the
            accepted ones).
    """
    import os

    chosen = os.environ.get(variable) or default
    if chosen not in accepted:
        raise ParameterError(f"{variable} {chosen!r} is not accepted; accepted: "
                             + ", ".join(accepted))
    return chosen


def check_mode(mode, *, study: bool = False) -> str:
    """``mode`` checked: one of :data:`MODES` (``study=True``: :data:`STUDY_MODES`).

    Raises:
        ParameterError: anything else (parameter ``mode``; a study's message says
            that "replay" re-runs no optimiser).
    """
    allowed = STUDY_MODES if study else MODES
    if study and mode in MODES and mode not in allowed:
        raise ParameterError(f"{mode!r} does not re-run the optimiser (a study compares "
                             "re-run energies); accepted: " + ", ".join(allowed),
                             parameter="mode")
    if mode not in allowed:
        _refuse(mode, ", ".join(allowed), "mode")
    return mode


def check_engine(engine) -> str | None:
    """``engine`` checked: None (also "None" or "", as a command line gives it) runs
    the recorded engine; else a registered name, case-insensitive
    (:func:`qencode_nb.engines.registry.names`), returned in lower case.

    Raises:
        ParameterError: any other value (parameter ``engine``; lists the registered).
    """
    if engine is None or str(engine).strip().lower() in ("none", ""):
        return None
    name = str(engine).strip().lower()
    if name not in registry.names():
        _refuse(engine, "None (the recorded backend), " + ", ".join(registry.names()),
                "engine")
    return name


def check_hamiltonian(hamiltonian) -> str:
    """``hamiltonian`` checked: one of :data:`~qencode_nb.engines.selection.HAMILTONIANS`
    ("stored": the entry's stored terms where it has them, else the rebuild; "rebuilt":
    the qubit Hamiltonian the audit's chemistry stage rebuilds here, as QEncode's own
    generator would optimise it).

    Raises:
        ParameterError: anything else (parameter ``hamiltonian``; lists the accepted).
    """
    if not isinstance(hamiltonian, str) or hamiltonian not in HAMILTONIANS:
        _refuse(hamiltonian, ", ".join(HAMILTONIANS), "hamiltonian")
    return hamiltonian


def check_evaluation_log(path, parameter: str = "evaluation_log") -> str | None:
    """``evaluation_log`` checked: None (no log), or a file path (a non-empty string or
    :class:`os.PathLike`) whose folder exists and that is not a folder itself, returned
    as a string as given (relative paths are the kernel's working folder's).

    Raises:
        ParameterError: anything else, naming ``parameter``, the value and what is
            accepted.
    """
    import os
    from pathlib import Path

    if path is None:
        return None
    accepted = "None (no log) or the path of a file whose folder exists"
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str) or not path.strip():
        _refuse(path, accepted, parameter)
    target = Path(path)
    if target.is_dir() or not target.absolute().parent.is_dir():
        _refuse(path, accepted + (" (it is a folder)" if target.is_dir()
                                  else " (its folder does not exist)"), parameter)
    return path


def check_count(value, parameter: str, *, zero: str | None = None) -> int:
    """A count checked: an int >= 1 (a bool is refused), e.g. ``blas_threads``,
    ``workers``, ``repeats``; with ``zero`` (what 0 means, said in the error) an int >= 0.

    Raises:
        ParameterError: anything else, naming ``parameter``.
    """
    if (isinstance(value, bool) or not isinstance(value, int)
            or value < (0 if zero else 1)):
        _refuse(value, f"an integer >= 0 (0: {zero})" if zero else "an integer >= 1",
                parameter)
    return value


def check_threads(blas_threads, parameter: str = "blas_threads") -> int:
    """A BLAS thread count checked (:func:`check_count`)."""
    return check_count(blas_threads, parameter)


def check_shard(value, parameter: str = "shard") -> tuple[int, int] | None:
    """A sweep's shard checked: None stays None (no sharding); else ``"K/N"``, two whole
    numbers with ``1 <= K <= N``, returned as ``(K, N)``
    (:mod:`qencode_nb.batch.shards`).

    Raises:
        ParameterError: anything else (``0/3``, ``4/3``, ``x``, ``1/0``), naming
            ``parameter``, the value and the accepted form.
    """
    if value is None:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(value))
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        _refuse(value, "K/N, whole numbers with 1 <= K <= N (shard K of N, e.g. 1/3)",
                parameter)
    return int(match.group(1)), int(match.group(2))


def check_coretype(blas_coretype, parameter: str = "blas_coretype") -> str | None:
    """``blas_coretype`` checked for this CPU: None stays None (audit.ipynb's default);
    else a kernel profile, ``host``, an OpenBLAS coretype or a kernel per copy
    (:func:`qencode_nb.notebook.blas_profiles.resolve`), returned in its canonical
    spelling (``reference`` even where it falls back to ``portable``).

    Raises:
        ParameterError: an unknown value (lists
            :func:`~qencode_nb.notebook.blas_profiles.accepted_values`), or kernels
            this CPU cannot run (naming the copy, the kernel and the CPU flags).
    """
    if blas_coretype is None:
        return None
    try:
        return blas_profiles.resolve(blas_coretype).requested
    except PinError as exc:
        raise ParameterError(exc.detail or str(exc), parameter=parameter) from None


def check_seconds(value, parameter: str, *, zero: bool = False):
    """Seconds checked: None (no limit) or a finite-or-infinite number > 0 (``zero``:
    >= 0), returned as it is (an int stays an int).

    Raises:
        ParameterError: anything else (a negative number, NaN, a bool, a string).
    """
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or math.isnan(value) or not (value >= 0 if zero else value > 0)):
        _refuse(value, f"seconds {'>=' if zero else '>'} 0 or None (no limit)", parameter)
    return value


def check_timeout(timeout, parameter: str = "timeout"):
    """A wall-clock limit in seconds (:func:`check_seconds`, > 0 or None)."""
    return check_seconds(timeout, parameter)


def check_proof_budget(budget, parameter: str = "proof_budget"):
    """The Hamiltonian proof budget in seconds: >= 0 (0: never build a path cold) or
    None (no limit), as a float; default :data:`qencode_nb.rules.PROOF_BUDGET_S`."""
    budget = check_seconds(budget, parameter, zero=True)
    return None if budget is None else float(budget)


#: The optimisers that may replace an entry's recorded one (audit.ipynb ``optimizer``,
#: ``study optimizers``), as every refusal lists them: QEncode's names, case-insensitive
#: (:data:`qencode_nb.entry.vocabulary.OPTIMIZER_STRINGS`, BFGS read as L-BFGS-B);
#: ADAPT has no override.
OPTIMIZERS = "COBYLA, L-BFGS-B, BFGS (as L-BFGS-B), Adam, Adam(lr=<float>) (case-insensitive)"


def parse_optimizer(optimizer, parameter: str = "optimizer"):
    """``optimizer`` (an override of the recorded optimiser) parsed: a
    :class:`qencode_nb.entry.vocabulary.Optimizer` named ``cobyla``, ``l-bfgs-b`` or
    ``adam`` (with its learning rate, if given).

    Raises:
        ParameterError: anything else, an ADAPT optimiser too (parameter ``optimizer``;
            lists :data:`OPTIMIZERS`).  The one check of an optimiser: the notebook
            frame, :func:`qencode_nb.rerun.rerun.rerun`, :func:`qencode_nb.rerun.vqe.run_vqe`
            and the optimisers study all refuse with it.
    """
    from qencode_nb.entry import vocabulary
    from qencode_nb.errors import EntryError

    try:
        parsed = vocabulary.optimizer(optimizer, parameter)
    except EntryError:
        parsed = None
    if parsed is None or parsed.name == "adapt":
        _refuse(optimizer, OPTIMIZERS, parameter)
    return parsed


def check_optimizer(optimizer, parameter: str = "optimizer") -> str | None:
    """``optimizer`` checked (:func:`parse_optimizer`): None (the recorded optimiser)
    stays None, an accepted name is returned as given."""
    if optimizer is not None:
        parse_optimizer(optimizer, parameter)
    return optimizer


def check_stack(stack, *, ready: bool = True) -> str:
    """``stack`` checked: None is ``"current"``; a word of
    :data:`~qencode_nb.environment.store.STACK_WORDS`; else with ``ready`` (before a
    run is launched) a ready stack (:func:`ready_stacks`), without it (in the kernel,
    which the stack's own kernel runs) a possible stack name
    (:data:`qencode_nb.paths.STACK_NAME_PATTERN`).

    Raises:
        ParameterError: anything else (parameter ``stack``; lists the words and the
            ready stacks, or the name pattern).
    """
    if stack is None:
        return "current"
    if stack in STACK_WORDS:
        return stack
    if ready:
        names = ready_stacks()
        if stack not in names:
            _refuse(stack, ", ".join([*STACK_WORDS, *names])
                    + " (`qencode-nb stack create NAME` makes one)", "stack")
    elif not isinstance(stack, str) or not re.fullmatch(STACK_NAME_PATTERN, stack):
        _refuse(stack, ", ".join(STACK_WORDS) + ", or the name of a stack "
                "(`qencode-nb stack list`)", "stack")
    return stack


def audit_parameters(*, mode, engine, blas_threads, blas_coretype, proof_budget,
                     stack, optimizer=None, hamiltonian="stored",
                     evaluation_log=None) -> dict:
    """audit.ipynb's run parameters checked (its frame cell, before the pin): the
    values to use, keyed by parameter name (``engine`` lower case or None,
    ``blas_coretype`` canonical, ``proof_budget`` a float or None, ``stack`` as
    :func:`check_stack` gives it in a kernel, ``optimizer`` as given or None:
    :func:`check_optimizer`; ``hamiltonian``: :func:`check_hamiltonian`;
    ``evaluation_log`` a path string or None: :func:`check_evaluation_log`).

    Raises:
        ParameterError: the first value refused, in the order of the arguments.
    """
    return {"mode": check_mode(mode), "engine": check_engine(engine),
            "blas_threads": check_threads(blas_threads),
            "blas_coretype": check_coretype(blas_coretype),
            "proof_budget": check_proof_budget(proof_budget),
            "stack": check_stack(stack, ready=False),
            "optimizer": check_optimizer(optimizer),
            "hamiltonian": check_hamiltonian(hamiltonian),
            "evaluation_log": check_evaluation_log(evaluation_log)}


@dataclass(frozen=True)
class RunOptions:
    """The audit.ipynb parameters and the dispatch every run of a batch shares; checked
    when built and whenever :func:`with_changes` replaces a field (the first value
    refused raises :class:`~qencode_nb.errors.ParameterError`), its values normalised
    (``engine`` lower case or None, ``blas_coretype`` canonical, ``stack`` never None).

    Attributes:
        mode: audit mode, one of :data:`MODES` (studies and robustness studies:
            :data:`STUDY_MODES`, checked by them).
        engine: audit.ipynb ``engine``: None (the recorded backend) or a registered
            engine.
        hamiltonian: audit.ipynb ``hamiltonian``: "stored" (default: the entry's stored
            terms where it has them) or "rebuilt" (the qubit Hamiltonian rebuilt here;
            passed to the notebook only when it is not the default).
        blas_threads: BLAS threads of every run (an int >= 1; a threads study varies
            it, a kernels study runs at 1).
        blas_coretype: BLAS kernels of every run (a profile, ``host`` or one
            ``OPENBLAS_CORETYPE``); None: audit.ipynb's default.
        db: folder of QEncode JSON files completing bundled entries, or None.
        stack: the package stack every audit runs in
            (:mod:`qencode_nb.environment.choice`): "current" (this environment; None
            is read as it), "recorded" (each entry's own, built once), or a ready
            stack's name.
        workers: local processes, each running one notebook (own kernel) at a time
            (an int >= 1; not checked when ``scheduler`` is given).
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
    hamiltonian: str = "stored"
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

    def __post_init__(self):
        checked = {"mode": check_mode(self.mode), "engine": check_engine(self.engine),
                   "hamiltonian": check_hamiltonian(self.hamiltonian),
                   "blas_threads": check_threads(self.blas_threads),
                   "blas_coretype": check_coretype(self.blas_coretype),
                   "stack": check_stack(self.stack),
                   "timeout": check_timeout(self.timeout),
                   "cell_timeout": check_timeout(self.cell_timeout, "cell_timeout"),
                   "proof_budget": check_proof_budget(self.proof_budget)}
        if self.scheduler is None:
            checked["workers"] = check_count(self.workers, "workers")
        for name, value in checked.items():
            object.__setattr__(self, name, value)


def with_changes(options: RunOptions | None, changes: dict, **defaults) -> RunOptions:
    """``options`` with the fields in ``changes`` replaced (and checked); without
    ``options``, a :class:`RunOptions` of ``defaults`` (e.g. ``mode="rerun"`` for a
    study) and ``changes``.  The keyword form of the entry points:
    ``sweep(targets, out, mode="replay")`` is ``sweep(targets, out,
    RunOptions(mode="replay"))``.

    Raises:
        TypeError: a name in ``changes`` that is not a field of :class:`RunOptions`
            (lists the fields).
        ParameterError: a value refused (:class:`RunOptions`).
    """
    known = {f.name for f in fields(RunOptions)}
    unknown = sorted(set(changes) - known)
    if unknown:
        raise TypeError(f"{', '.join(unknown)} is not an option; accepted: "
                        + ", ".join(sorted(known)))
    if options is None:
        return RunOptions(**{**defaults, **changes})
    return replace(options, **changes)


def proof_budget_parameter(options: RunOptions) -> dict:
    """audit.ipynb's ``proof_budget`` for a run of ``options``: ``{}`` at the default
    (a run's inputs, and so its resume key, are unchanged), else
    ``{"proof_budget": seconds}``."""
    budget = options.proof_budget
    return {} if budget == PROOF_BUDGET_S else {"proof_budget": budget}
