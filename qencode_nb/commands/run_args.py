"""What the run commands (``audit``, ``sweep``, ``study``, ``robustness``) share: the
help texts of ``--engine`` and ``--coretype``."""

from __future__ import annotations

ENGINE_HELP = ("sector: run the ADAPT entries that map (qencode_nb.rerun.ci_space_map) on the "
               "sector engine; fast: every entry on the fastest engine computing the same "
               "energies (the sector engine where the entry maps, else the compiled "
               "statevector engine, qencode_nb.rerun.fast_engine); tier 1 then fails on the "
               "backend deviation; default: the recorded backend")

#: --coretype's help (audit.ipynb's blas_coretype; qencode_nb.notebook.blas_profiles).
CORETYPE_HELP = ("BLAS kernels: reference (default: the QEncode v4 entries' kernel triple; "
                 "portable where the CPU lacks AVX-512), portable, host (the host's kernels, "
                 "its preset included), or one OPENBLAS_CORETYPE such as Haswell")
