"""Batch room: running many audits, each in its own process and pinned Jupyter kernel.

- :mod:`~qencode_nb.batch.sweep`: audit.ipynb once per entry of a folder (local pool
  or Dask), resumable; writes ``summary.csv``, the margin plot and the folder's crate;
  many folders planned first and run through one pool (the record sweep);
- :mod:`~qencode_nb.batch.targets`: a sweep's targets as entry files, the named subsets;
- :mod:`~qencode_nb.batch.pool`: the local pool of warm workers (a dead worker fails
  only its own run), longest runs first;
- :mod:`~qencode_nb.batch.run_folder`: the output folder checked writable before any
  run, a lock per run, ``.sweep.lock``, atomic ``summary.csv``;
- :mod:`~qencode_nb.batch.study_jobs`: one study's runs through the pool, one row each;
- :mod:`~qencode_nb.batch.run_spec`: the run specification (each run option's flag and
  meaning) and the one builder of a run's audit.ipynb parameters;
- :mod:`~qencode_nb.batch.progress_bar`: the text progress bar over the runs;
- :mod:`~qencode_nb.batch.history`: a record folder's releases as groups of targets;
- :mod:`~qencode_nb.batch.shards`: ``--shard K/N``, a stable split of a release;
  :mod:`~qencode_nb.batch.folder_rows`: the runs a folder's summary covers (every
  shard's, ``waiting`` rows, the folder's other runs under the same options);
- :mod:`~qencode_nb.batch.plan` (the model), :mod:`~qencode_nb.batch.plan_probe` (the
  measuring child), :mod:`~qencode_nb.batch.plan_table` (``--plan``) and
  :mod:`~qencode_nb.batch.plan_file` (``plan.csv``): each entry's predicted wall time.

How every run runs is :class:`qencode_nb.options.RunOptions` (checked once, built
once).  Reading the results back is :mod:`qencode_nb.readout`'s job; the study designs are
:mod:`qencode_nb.studies`'.  Importing this package imports no numpy or pandas.
"""
