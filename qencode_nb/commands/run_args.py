"""What the run commands (``audit``, ``sweep``, ``study``, ``robustness``) share: the
help texts of ``--engine`` and ``--coretype``, and :func:`run_options`, the
:class:`~qencode_nb.batch.options.RunOptions` of a command's parsed arguments."""

from __future__ import annotations

from dataclasses import fields

from qencode_nb.batch.options import RunOptions

ENGINE_HELP = ("sector: run the ADAPT entries that map (qencode_nb.rerun.ci_space_map) on the "
               "sector engine; fast: every entry on the fastest engine computing the same "
               "energies (the sector engine where the entry maps, else the compiled "
               "statevector engine, qencode_nb.rerun.fast_engine); tier 1 then fails on the "
               "backend deviation; default: the recorded backend")

#: --coretype's help (audit.ipynb's blas_coretype; qencode_nb.notebook.blas_profiles).
CORETYPE_HELP = ("BLAS kernels: reference (default: the QEncode v4 entries' kernel triple; "
                 "portable where the CPU lacks AVX-512), portable, host (the host's kernels, "
                 "its preset included), or one OPENBLAS_CORETYPE such as Haswell")


def run_options(args) -> RunOptions:
    """The :class:`~qencode_nb.batch.options.RunOptions` of a run command's parsed
    arguments, built once: each field from the argument whose ``dest`` is the field's
    name (``--threads`` of ``sweep`` and of ``study optimizers | environments`` is
    ``dest="blas_threads"``, ``--coretype`` ``dest="blas_coretype"``); a field the
    command has no argument for keeps its default (``progress`` and ``plot``: True).
    """
    return RunOptions(**{f.name: getattr(args, f.name) for f in fields(RunOptions)
                         if hasattr(args, f.name)})
