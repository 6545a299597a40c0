"""The ``qencode-nb`` command: the top-level parser, the subcommands of
:mod:`qencode_nb.commands` registered in :data:`COMMANDS`' order (which is the order
``qencode-nb --help`` lists them in), and :func:`main`.

Each command module holds its handlers and an ``add_parsers(sub)``: ``audit``,
``sweep``, ``study``, ``robustness``, ``curve``, ``report``, ``stack``, ``data``, the trust
commands (``keygen``, ``sign``, ``verify``, ``crate``), ``compare`` and ``show``; their module
docstrings give each command's arguments, outputs and exit statuses (2 on bad
arguments for every command).  A reader that closes the pipe early (``qencode-nb show
runs | head``) ends the command quietly with status 0 (:func:`main`).
"""

from __future__ import annotations

import os
import sys

from qencode_nb.commands import (audit, claims, compare, curve, data, report, robustness, show,
                                 stack, study, sweep, trust)
from qencode_nb.commands.flags import FlagParser

#: The command modules, in the order their subcommands are registered.
COMMANDS = (audit, show, sweep, study, robustness, curve, report, stack, data, trust, compare,
            claims)


def build_parser() -> FlagParser:
    """The ``qencode-nb`` parser with every command of :data:`COMMANDS` (a
    :class:`~qencode_nb.commands.flags.FlagParser`, so that errors name the flags as
    typed)."""
    parser = FlagParser(
        prog="qencode-nb",
        description="Audit whether published VQE benchmark results still hold when re-run.")
    sub = parser.add_subparsers(dest="command", required=True)
    for commands in COMMANDS:
        commands.add_parsers(sub)
    return parser


def main(argv=None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``) and run the command; its exit status.

    A reader that closed standard output early (``qencode-nb show runs | head -1``) ends
    the command quietly: no ``BrokenPipeError`` traceback, exit status 0 (the reader
    had what it wanted).  Standard output then points at ``os.devnull``, so that the
    interpreter's own flush at exit does not fail again (the Python documentation's
    "Note on SIGPIPE", module :mod:`signal`).
    """
    try:
        args = build_parser().parse_args(argv)   # --help writes to standard output too
        status = args.func(args)
        sys.stdout.flush()   # a write still buffered would fail at exit, outside this try
    except BrokenPipeError:
        quiet_stdout()
        return 0
    return status


def quiet_stdout() -> None:
    """Point standard output's file descriptor at ``os.devnull`` (after a closed pipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):   # no descriptor: an in-memory stdout
        pass


if __name__ == "__main__":
    sys.exit(main())
