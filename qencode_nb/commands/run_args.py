"""What the run commands (``audit``, ``sweep``, ``study``, ``robustness``) share: the
help texts of ``--engine`` (from the engines registry), ``--coretype`` and ``--stack``,
and :func:`run_options`, the :class:`~qencode_nb.options.RunOptions` of a
command's parsed arguments."""

from __future__ import annotations

from dataclasses import fields

from qencode_nb.options import RunOptions

def engine_help() -> str:
    """``--engine``'s help, from the engines registry
    (:func:`qencode_nb.engines.registry.described`): the registered engines at the
    time the parser is built."""
    from qencode_nb.engines import registry

    return ("the engine that re-runs and replays, one of " + ", ".join(registry.names())
            + ". " + registry.described() + ". An entry an engine cannot take runs on "
            "its recorded backend, the reason recorded, and tier 1 fails on a backend "
            "deviation; default: the recorded backend")


def coretype_help() -> str:
    """``--coretype``'s help (audit.ipynb's ``blas_coretype``), from the kernel profiles
    (:mod:`qencode_nb.notebook.blas_profiles`): the profiles with their triples, ``host``
    and the OpenBLAS coretypes :func:`qencode_nb.options.check_coretype` accepts."""
    from qencode_nb.notebook import blas_profiles as bp

    profiles = ", ".join(f"{name} ({bp.triple_text(p.coretypes)})"
                         for name, p in bp.PROFILES.items())
    return (f"BLAS kernels: a profile, {profiles} (default {bp.default()}: the audited "
            "entry's release triple, portable where the CPU cannot run it), "
            f"{bp.HOST} (the host's kernels, its preset included), or one OPENBLAS_CORETYPE "
            f"({', '.join(bp.CORETYPE_CPU_FLAGS)})")


def mode_help(default: str = "full", *, study: bool = False) -> str:
    """``--mode``'s help: the modes :func:`qencode_nb.options.check_mode` accepts
    (:data:`~qencode_nb.options.MODES`, a study's :data:`~qencode_nb.options.STUDY_MODES`),
    ``default`` marked."""
    from qencode_nb.options import MODES, STUDY_MODES

    return "audit mode: " + ", ".join(f"{m} (default)" if m == default else m
                                      for m in (STUDY_MODES if study else MODES))


#: --stack's help (audit.ipynb's stack; qencode_nb.batch.stack_choice).
STACK_HELP = ("package stack: current (default: this environment), recorded (each entry's "
              "own recorded stack, built once under the user's stacks folder and reused; "
              "none is built where this environment already holds its pins; where it "
              "cannot be built the audit runs here and tier 3 says why), or the name of a "
              "stack (`qencode-nb stack list`)")


def add_stack_argument(parser) -> None:
    """``--stack`` (``dest="stack"``, :data:`STACK_HELP`) on a run command's parser."""
    parser.add_argument("--stack", default=None, metavar="STACK", help=STACK_HELP)


def add_proof_budget_argument(parser) -> None:
    """``--proof-budget SECONDS`` (``dest="proof_budget"``, audit.ipynb's ``proof_budget``)
    on a run command's parser; default :data:`qencode_nb.rules.PROOF_BUDGET_S`."""
    from qencode_nb.rules import PROOF_BUDGET_S

    parser.add_argument("--proof-budget", type=float, default=PROOF_BUDGET_S,
                        dest="proof_budget", metavar="SECONDS",
                        help="seconds a cold build of another Hamiltonian path (PennyLane's "
                             "native) may be estimated to take; over it the Hamiltonian "
                             "check reads unverified: native build skipped (default "
                             f"{PROOF_BUDGET_S:g})")


def run_options(args) -> RunOptions:
    """The :class:`~qencode_nb.options.RunOptions` of a run command's parsed
    arguments, built once: each field from the argument whose ``dest`` is the field's
    name (``--threads`` of ``sweep`` and of ``study optimizers | environments`` is
    ``dest="blas_threads"``, ``--coretype`` ``dest="blas_coretype"``); a field the
    command has no argument for keeps its default (``progress`` and ``plot``: True).
    """
    return RunOptions(**{f.name: getattr(args, f.name) for f in fields(RunOptions)
                         if hasattr(args, f.name)})
