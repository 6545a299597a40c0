"""Run a command as another host kind would (test-only; issue 51).

    .venv/bin/python tests/as_host_kind.py amd-zen3 -- .venv/bin/python -m pytest -ra -m hostkind
    .venv/bin/python tests/as_host_kind.py --list
    .venv/bin/python tests/as_host_kind.py --others     # what .ci/run's host-kind passes run as

The command runs with ``QENCODE_NB_EMULATE_HOST`` naming the kind and the environment that
kind gives a process (:meth:`qencode_nb.notebook.host_kinds.HostKind.environment`: its
OpenBLAS preset, or none, and numba's target CPU), so that the profile resolution sees that
kind's CPU flags, the pins give that kind's kernels and threadpoolctl reports its BLAS
copies (:mod:`qencode_nb.notebook.host_kinds`).  A kind this CPU cannot emulate (its
kernels need instructions this CPU lacks: AVX-512 on a Zen 3) is refused, exit status 2,
naming the flags.  The command's exit status is this script's.
"""

from __future__ import annotations

import argparse
import os
import sys

from qencode_nb.notebook.blas_profiles import resolve
from qencode_nb.notebook.host_kinds import (HOST_KINDS, can_emulate, cpu_flags, emulated, kind_of,
                                            real_cpu_flags)


def this_host() -> tuple[str | None, set]:
    """``(kind, flags)`` of this host as a process sees it: the emulated kind and its flags
    where ``QENCODE_NB_EMULATE_HOST`` is set (a command run as another kind runs as that
    kind throughout), else the kind its CPU and preset make it."""
    kind = emulated()
    if kind is not None:
        return kind.name, cpu_flags()
    return kind_of(real_cpu_flags(), dict(os.environ)), real_cpu_flags()


def others() -> int:
    """Print the kinds this host can run as other than its own, one a line; its own and
    each it cannot, with the reason, to stderr (:func:`can_emulate`)."""
    own, flags = this_host()
    print(f"this host is {own or 'of no known kind'}", file=sys.stderr)
    for name, kind in HOST_KINDS.items():
        if name in (own, "unknown"):    # unknown: tests/notebook/test_host_kinds.py
            continue
        why = can_emulate(kind, flags)
        if why is None:
            print(name)
        else:
            print(f"cannot run as {why}", file=sys.stderr)
    return 0


def selection(kind) -> str:
    """The ``-m`` expression .ci/run runs as ``kind`` on this host: every ``hostkind`` test
    where that kind's test profile (``reference`` with AVX-512, else ``portable``) differs
    from this host's, since every notebook then computes under other kernels, but the
    ``network`` ones (they build QEncode's v3 stack from PyPI, 2-3 min, and run v3 entries
    under the v3 release's triple, Haswell for every copy, which every kind runs: measured
    bit-identical on all three kinds, issue 52); where it is the same (the two AVX-512
    kinds), only the in-process ones, since then only the preset differs, and each notebook
    and child process pins every copy over it.  CI's budget (30 min) decides both cuts."""
    _, flags = this_host()
    same = resolve("reference", kind.flags(flags)).used == resolve("reference", flags).used
    return ("hostkind and not slow and not notebook and not heavy" if same
            else "hostkind and not heavy and not network")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="tests/as_host_kind.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", nargs="?", choices=sorted(HOST_KINDS),
                        help="the host kind to run as")
    parser.add_argument("--list", action="store_true",
                        help="list the kinds, saying which this CPU can emulate")
    parser.add_argument("--others", action="store_true",
                        help="print the kinds, one a line, this host can run as other than "
                             "its own (its own and the reason for each it cannot: stderr)")
    parser.add_argument("--selection", choices=sorted(HOST_KINDS), metavar="KIND",
                        help="print the -m expression of the tests .ci/run runs as KIND here")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="the command, after --")
    args = parser.parse_args(argv)
    real = real_cpu_flags()
    if args.list:
        for name, kind in HOST_KINDS.items():
            why = can_emulate(kind, this_host()[1])
            print(f"{name}: {kind.description}: "
                  + ("can be emulated here" if why is None else f"cannot: {why}"))
        return 0
    if args.others:
        return others()
    if args.selection:
        print(selection(HOST_KINDS[args.selection]))
        return 0
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.kind is None or not command:
        parser.error("give a kind and a command after --")
    kind = HOST_KINDS[args.kind]
    why = can_emulate(kind, real)
    if why is not None:
        print(f"tests/as_host_kind.py: cannot emulate {why}", file=sys.stderr)
        return 2
    env = kind.environment(dict(os.environ))
    sys.stdout.flush()
    os.execvpe(command[0], command, env)


if __name__ == "__main__":
    sys.exit(main())
