"""``qencode-nb stack create | list | remove``: package stacks as Jupyter kernelspecs
for ``qencode-nb study environments`` (:mod:`qencode_nb.environment.store`).

``qencode-nb stack create NAME [--recipe reference|latest | --requirements
FILE_OR_SPECS... [--overlay] | --from-entry ENTRY]``, ``stack list`` and ``stack remove
NAME``; exit status 1 when pip or ipykernel failed (the log is kept), 2 on bad arguments
(an entry that records no stack among them).  ``--from-entry`` builds the stack an entry
records (:func:`qencode_nb.environment.recorded.recorded_environment`, resolved at its
date) and prints how to
audit in it (``reference``, the default, pins the release's kernel triple).
"""

from __future__ import annotations

import sys
from pathlib import Path

from qencode_nb.commands.flags import as_typed
from qencode_nb.errors import QencodeNbError, StackError


def add_parsers(sub) -> None:
    """Add ``stack`` and its actions to the subparsers ``sub``."""
    sk = sub.add_parser("stack", help="package stacks as Jupyter kernels for `study "
                        "environments`")
    acts = sk.add_subparsers(dest="action", required=True)
    cr = acts.add_parser("create", help="create a venv and register kernel qencode-nb-NAME")
    cr.add_argument("name", help="stack name; 'reference' and 'latest' are also recipes")
    cr.add_argument("--recipe", default=None,
                    help="reference (requirements.lock) or latest (unpinned dependencies)")
    cr.add_argument("--requirements", nargs="+", default=None,
                    help="a requirements file or requirement strings, e.g. scipy==1.16.3")
    cr.add_argument("--overlay", action="store_true",
                    help="start from this environment's packages, install only "
                         "--requirements on top (without it, --requirements are installed "
                         "with pyproject's dependencies in a fresh venv)")
    cr.add_argument("--from-entry", default=None, metavar="ENTRY",
                    help="the stack ENTRY records (its provenance.tool_versions, the "
                         "release's requirements file, pennylane-lightning matched); prints "
                         "how to audit in it")
    cr.add_argument("--replace", action="store_true",
                    help="remove an existing stack of that name first")
    acts.add_parser("list", help="list the stacks")
    rm = acts.add_parser("remove", help="delete a stack and its kernelspec")
    rm.add_argument("name")
    for p in (cr, rm):
        p.add_argument("--jupyter-prefix", default=None,
                       help="prefix whose share/jupyter/kernels holds the kernelspec (default: "
                            "this environment's sys.prefix; another one needs JUPYTER_PATH)")
    sk.set_defaults(func=_stack)


def _stack(args) -> int:
    from qencode_nb.environment import build, store

    try:
        if args.action == "create":
            reqs = args.requirements or None
            if reqs and len(reqs) == 1 and Path(reqs[0]).suffix in (".txt", ".lock", ".in"):
                reqs = reqs[0]
            recorded = lock = None
            if args.from_entry is not None:
                recorded, lock = _recorded(args.from_entry, args)
                reqs = None
            rec = build.create_stack(args.name, args.recipe, requirements=reqs, lock=lock,
                                     overlay=args.overlay, jupyter_prefix=args.jupyter_prefix,
                                     replace=args.replace)
            print(f"stack {rec['name']}: kernelspec {rec['kernelspec']} (Python {rec['python']}) in "
                  f"{rec['path']}")
            for pkg in ("numpy", "scipy", "pennylane", "pyscf", "openfermion"):
                print(f"  {pkg} {rec['freeze'].get(pkg)}")
            if recorded is not None:
                print(_kernels_hint(recorded, rec["kernelspec"]))
        elif args.action == "list":
            for rec in store.list_stacks():
                lock = rec.get("lock") or {}
                made = (f"lock {lock.get('key')} resolved at "
                        f"{lock.get('resolved_at') or 'today ' + str(lock.get('resolved_on'))}"
                        if lock else rec.get("recipe") or " ".join(rec.get("requirements") or []))
                print(f"{rec['name']}\t{rec.get('kernelspec')}\t{rec.get('status')}\t{made}"
                      + ("\toverlay" if rec.get("overlay_of") else ""))
        else:
            store.remove_stack(args.name, jupyter_prefix=args.jupyter_prefix)
            print(f"removed stack {args.name}")
    except QencodeNbError as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 2 if not isinstance(exc, StackError) else 1
    return 0


def _recorded(entry, args):
    """The recorded environment of ``entry`` (a bundled name or a path) and its lock
    resolved at the entry's date (:func:`qencode_nb.environment.choice.recorded_lock`),
    refused with a ParameterError when it names no stack or is given with a recipe /
    requirements."""
    from qencode_nb.entry import load
    from qencode_nb.environment.choice import RECORDED, recorded_lock
    from qencode_nb.environment.recorded import of_entry
    from qencode_nb.errors import ParameterError

    if args.recipe or args.requirements or args.overlay:
        raise ParameterError("--from-entry builds the stack the entry records: give it "
                             "without --recipe, --requirements or --overlay")
    recorded = of_entry(load(entry))
    if not recorded.requirements:
        raise ParameterError(f"--from-entry {entry}: " + "; ".join(recorded.unknown))
    return recorded, recorded_lock(recorded, RECORDED)


def _kernels_hint(recorded, kernelspec: str) -> str:
    """How to run an audit in the stack under its release's kernel triple."""
    from qencode_nb.notebook.blas_profiles import triple_text

    if recorded.kernels is None:
        return ("  kernel triple: " + "; ".join(recorded.unknown))
    name = kernelspec.removeprefix("qencode-nb-")
    return (f"  {recorded.release} release's kernel triple: {triple_text(recorded.kernels)} "
            "(what blas_coretype 'reference', the default, pins for its entries); run: "
            f"qencode-nb audit ENTRY --stack {name}, or papermill notebooks/audit.ipynb "
            f"OUT.ipynb -k {kernelspec} --engine qencode-nb -p entry ENTRY -p stack {name}")
