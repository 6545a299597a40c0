"""What the run commands (``audit``, ``sweep``, ``study``, ``robustness``) share: their
one group of run options (:func:`add_run_options`, built from the run specification
:data:`qencode_nb.batch.run_spec.RUN_SPEC`), the help texts of ``--mode``, ``--engine``
(from the engines registry), ``--coretype`` and ``--stack``, and :func:`run_options`,
the :class:`~qencode_nb.options.RunOptions` of a command's parsed arguments."""

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


#: --stack's help (audit.ipynb's stack; qencode_nb.environment.choice).
STACK_HELP = ("package stack: current (default: this environment), recorded (each entry's "
              "own recorded stack: its pins and every other package as PyPI served them "
              "at the entry's created_utc, locked, built once by uv under the user's "
              "stacks folder and reused; none is built where this environment holds the "
              "lock; where it cannot be resolved or built the audit runs here and tier 3 "
              "says why), recorded-today (the same pins resolved today), or the name of a "
              "stack (`qencode-nb stack list`)")


#: The argument group's title and description (``--help``; the CLI reference page).
RUN_OPTIONS_TITLE = "run options"
RUN_OPTIONS_DESCRIPTION = ("how each audit runs, the same options with the same meaning in "
                           "every command that runs audits (qencode_nb.batch.run_spec); a "
                           "study's own axis replaces the option it varies")


def add_run_options(parser, *, mode: str = "full", study: bool = False, replaced=(),
                    dispatch: bool = True):
    """The one argument group of the run options (:data:`qencode_nb.batch.run_spec.RUN_SPEC`)
    on a run command's parser: each flag with its ``dest`` the
    :class:`~qencode_nb.options.RunOptions` field and its default the field's
    (``--mode``'s ``mode``).

    Args:
        parser: the command's parser (a :class:`~qencode_nb.commands.flags.FlagParser`).
        mode: ``--mode``'s default; ``study``: the modes that re-run the optimiser.
        replaced: the fields a command's own axis replaces (``study threads``:
            ``blas_threads``; ``study kernels``: ``blas_coretype``).
        dispatch: offer ``--workers`` and ``--scheduler`` (the commands that run many
            audits; ``audit`` runs one).

    Returns:
        the argument group.
    """
    from qencode_nb.batch.run_spec import RUN_SPEC
    from qencode_nb.rules import PROOF_BUDGET_S

    defaults = {f.name: f.default for f in fields(RunOptions)}
    defaults["mode"] = mode
    helps = {"mode": mode_help(mode, study=study), "engine": engine_help(),
             "blas_coretype": coretype_help(), "stack": STACK_HELP}
    group = parser.add_argument_group(RUN_OPTIONS_TITLE, RUN_OPTIONS_DESCRIPTION)
    for option in RUN_SPEC:
        if option.field in replaced or (option.dispatch and not dispatch):
            continue
        text = helps.get(option.field, option.meaning)
        if option.field == "proof_budget":
            text += f" (default {PROOF_BUDGET_S:g})"
        kwargs = {"default": defaults[option.field], "dest": option.field, "help": text}
        kwargs.update({k: v for k, v in (("type", option.type), ("metavar", option.metavar))
                       if v is not None})
        group.add_argument(option.flag, **kwargs)
    return group


def run_options(args) -> RunOptions:
    """The :class:`~qencode_nb.options.RunOptions` of a run command's parsed
    arguments, built once: each field from the argument whose ``dest`` is the field's
    name (``--threads`` of ``sweep`` and of ``study optimizers | environments`` is
    ``dest="blas_threads"``, ``--coretype`` ``dest="blas_coretype"``); a field the
    command has no argument for keeps its default (``progress`` and ``plot``: True).
    """
    return RunOptions(**{f.name: getattr(args, f.name) for f in fields(RunOptions)
                         if hasattr(args, f.name)})
