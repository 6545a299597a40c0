"""The ``qencode-nb`` command: the top-level parser, the subcommands of
:mod:`qencode_nb.commands` registered in :data:`COMMANDS`' order (which is the order
``qencode-nb --help`` lists them in), and :func:`main`.

Each command module holds its handlers and an ``add_parsers(sub)``: ``audit``,
``sweep``, ``study``, ``robustness``, ``curve``, ``report``, ``stack``, ``data``, the trust
commands (``keygen``, ``sign``, ``verify``, ``crate``), ``compare`` and ``show``; their module
docstrings give each command's arguments, outputs and exit statuses (2 on bad
arguments for every command).
"""

from __future__ import annotations

import argparse
import sys

from qencode_nb.commands import (audit, claims, compare, curve, data, report, robustness, show,
                                 stack, study, sweep, trust)

#: The command modules, in the order their subcommands are registered.
COMMANDS = (audit, show, sweep, study, robustness, curve, report, stack, data, trust, compare,
            claims)


def build_parser() -> argparse.ArgumentParser:
    """The ``qencode-nb`` parser with every command of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="qencode-nb",
        description="Audit whether published VQE benchmark results still hold when re-run.")
    sub = parser.add_subparsers(dest="command", required=True)
    for commands in COMMANDS:
        commands.add_parsers(sub)
    return parser


def main(argv=None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``) and run the command; its exit status."""
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
