"""Studies room: the study designs, each many runs of one entry or of a database.

- :mod:`~qencode_nb.studies.study`: :func:`run`, the one entry point of a study
  (CLI ``qencode-nb study`` and ``notebooks/threading.ipynb``), and its
  :class:`StudyResult`;
- :mod:`~qencode_nb.studies.blas` (BLAS thread count, OpenBLAS CPU kernel),
  :mod:`~qencode_nb.studies.optimizers`, :mod:`~qencode_nb.studies.environments`
  (Jupyter kernelspecs with other package stacks, :mod:`qencode_nb.environment.store`): the
  studies;
- :mod:`~qencode_nb.studies.robustness`: every entry of a database under every
  perturbation (threads x coretypes x numpy dispatch x kernelspecs), resumable; its axes
  in :mod:`~qencode_nb.studies.robustness_axes`;
- :mod:`~qencode_nb.studies.curve` (:func:`~qencode_nb.studies.curve.audit_curve`) and
  :mod:`~qencode_nb.studies.curve_points`: a QEncode dissociation curve audited point by
  point, each point an entry of one's own;
- :mod:`~qencode_nb.studies.history_sweep`: a benchmark's whole record (every release's
  entries, its curves, its claims; groups from :mod:`qencode_nb.batch.history`).

The runs go through :mod:`qencode_nb.batch`; their tables and figures are
:mod:`qencode_nb.readout`'s.  Importing this package imports no numpy or pandas
(they load when a study runs).
"""

from qencode_nb.studies.study import STUDY_KINDS, StudyResult, run

__all__ = ["STUDY_KINDS", "StudyResult", "run"]
