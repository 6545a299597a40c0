"""Readout room: executed audits read back into tables, figures and the report.

- :mod:`~qencode_nb.readout.collect`: executed notebooks -> DataFrames (``summary.csv``'s
  :func:`~qencode_nb.readout.collect.audit_table`);
- :mod:`~qencode_nb.readout.counts`: a summary table as counts (tiers, replays,
  boundary warnings, failures);
- :mod:`~qencode_nb.readout.run_rows`: one study run's row from its records;
- :mod:`~qencode_nb.readout.summaries`: a study's per-group summary and its finding;
- :mod:`~qencode_nb.readout.environment_tables`: an environment study's versions,
  differences and finding;
- :mod:`~qencode_nb.readout.robustness_tables`: a robustness study's rows, per-entry
  summary (``fragile_measured``) and drift counts;
- :mod:`~qencode_nb.readout.plots` (margin plot, study strips, optimiser figure),
  :mod:`~qencode_nb.readout.adapt_plot` (ADAPT operators against system size) ,
  :mod:`~qencode_nb.readout.robustness_plot` (the robustness figure) and
  :mod:`~qencode_nb.readout.curve_plot` (a dissociation curve's figure), each drawn and saved
  by :mod:`qencode_nb.figstyle`;
- :mod:`~qencode_nb.readout.cross_host`: two folders of audits compared entry by entry;
- :mod:`~qencode_nb.readout.report` (``qencode-nb report``: one self-contained HTML
  page, ``templates/``), :mod:`~qencode_nb.readout.report_tables` (its table),
  :mod:`~qencode_nb.readout.report_columns` (its columns and cells),
  and :mod:`~qencode_nb.readout.report_header` (its header: dataset, environments,
  toolkit); :mod:`~qencode_nb.readout.published`: a run table as a published file
  writes it (no absolute path of the machine, the rule of :mod:`qencode_nb.paths`).

Nothing here starts a run (:mod:`qencode_nb.batch` does).  Importing this package
imports no numpy, pandas or matplotlib (they load when a table or figure is made).
"""
