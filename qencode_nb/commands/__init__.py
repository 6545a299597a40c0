"""Subcommands of ``qencode-nb`` kept outside :mod:`qencode_nb.cli` (which registers
them): each module holds its commands' handlers and an ``add_parsers(sub)`` that adds
them to the command's subparsers.

- :mod:`~qencode_nb.commands.trust`: ``keygen``, ``sign``, ``verify``, ``crate``
  (:mod:`qencode_nb.trust`);
- :mod:`~qencode_nb.commands.stack`: ``stack create | list | remove``
  (:mod:`qencode_nb.studies.stacks`);
- :mod:`~qencode_nb.commands.data`: ``data fetch`` (:mod:`qencode_nb.entry.database`);
- :mod:`~qencode_nb.commands.compare`: ``compare RUNS_A RUNS_B``
  (:mod:`qencode_nb.readout.cross_host`).
"""
