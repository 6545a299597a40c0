"""Subcommands of ``qencode-nb``, registered by :mod:`qencode_nb.cli`: each module holds
its commands' handlers and an ``add_parsers(sub)`` that adds them to the command's
subparsers.

- :mod:`~qencode_nb.commands.audit`: ``audit`` (one executed audit notebook);
- :mod:`~qencode_nb.commands.show`: ``show`` (an executed audit's card as text);
- :mod:`~qencode_nb.commands.sweep`: ``sweep`` (:mod:`qencode_nb.batch.sweep`);
- :mod:`~qencode_nb.commands.study`: ``study threads | kernels | optimizers |
  environments`` (:func:`qencode_nb.studies.run`);
- :mod:`~qencode_nb.commands.robustness`: ``robustness``
  (:mod:`qencode_nb.studies.robustness`);
- :mod:`~qencode_nb.commands.curve`: ``curve`` (:mod:`qencode_nb.studies.curve`);
- :mod:`~qencode_nb.commands.report`: ``report`` (:mod:`qencode_nb.readout.report`);
- :mod:`~qencode_nb.commands.stack`: ``stack create | list | remove``
  (:mod:`qencode_nb.environment.store`);
- :mod:`~qencode_nb.commands.data`: ``data fetch`` (:mod:`qencode_nb.entry.database`);
- :mod:`~qencode_nb.commands.trust`: ``keygen``, ``sign``, ``verify``, ``crate``
  (:mod:`qencode_nb.trust`);
- :mod:`~qencode_nb.commands.compare`: ``compare RUNS_A RUNS_B``
  (:mod:`qencode_nb.readout.cross_host`);
- :mod:`~qencode_nb.commands.run_args`: what the run commands share (help texts);
- :mod:`~qencode_nb.commands.flags`: every command's errors naming the flags as typed.
"""
