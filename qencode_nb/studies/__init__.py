"""Many audits and what they show: sweeps, studies, tables and figures.

- :mod:`~qencode_nb.studies.sweep`: audit.ipynb once per entry of a folder (local
  pool or Dask), resumable; ``summary.csv``, tier counts, failures.
- :mod:`~qencode_nb.studies.pool` (the local pool: a dead worker fails only its own
  run) and :mod:`~qencode_nb.studies.run_folder` (the output folder checked writable,
  a lock per run, atomic ``summary.csv``): what keeps a sweep whole when a run breaks.
- :mod:`~qencode_nb.studies.study`: :func:`run`, the one entry point of a study
  (CLI ``qencode-nb study`` and ``notebooks/threading.ipynb``), and its
  :class:`StudyResult`.
- :mod:`~qencode_nb.studies.runner`: one study's runs (jobs through the sweep's
  local pool; one row per run from its records).
- :mod:`~qencode_nb.studies.blas` (BLAS thread count, OpenBLAS CPU kernel),
  :mod:`~qencode_nb.studies.optimizers`, :mod:`~qencode_nb.studies.environments`
  (Jupyter kernelspecs with other package stacks): the studies.
- :mod:`~qencode_nb.studies.summaries`: per-group summary and the one-sentence finding.
- :mod:`~qencode_nb.studies.robustness`: every entry of a database under every
  perturbation (threads x coretypes x kernelspecs), resumable;
  :mod:`~qencode_nb.studies.robustness_tables` (its rows and per-entry summary:
  ``fragile_measured``) and :mod:`~qencode_nb.studies.robustness_plot` (its figure).
- :mod:`~qencode_nb.studies.stacks`: package stacks registered as Jupyter kernelspecs.
- :mod:`~qencode_nb.studies.progress_bar`: the text progress bar over a sweep's or a
  study's runs (a terminal, JupyterLab and papermill alike).
- :mod:`~qencode_nb.studies.collect`: executed notebooks -> DataFrames.
- :mod:`~qencode_nb.studies.plots`: the figures.
- :mod:`~qencode_nb.studies.report` (``qencode-nb report``: one self-contained HTML page
  of a runs folder) and :mod:`~qencode_nb.studies.report_tables` (its table).

Importing this package imports no numpy or pandas (they load when a study runs).
"""

from qencode_nb.studies.study import STUDY_KINDS, StudyResult, run

__all__ = ["STUDY_KINDS", "StudyResult", "run"]
