"""``qencode-nb audit ENTRY [--threads N] [--coretype K] [--mode M] [--db DIR]
[--engine sector|fast] [--stack current|recorded|NAME] [--out OUT.ipynb] [--json]
[--resume] [--public-key PUB] [--proof-budget SECONDS] [--cell-timeout S] [--timeout S]``:
one audit in an executed notebook.  Its run options are every run command's
(:func:`qencode_nb.commands.run_args.add_run_options`): ``--timeout`` limits the whole
run (it then runs in a process of its own, killed with its kernel past the limit:
:func:`run_within`), ``--cell-timeout`` each cell.

``--stack recorded`` runs it in the Jupyter kernel of the entry's recorded package stack,
built once (:mod:`qencode_nb.environment.choice`); a v4 entry in this environment needs
none.

It runs ``notebooks/audit.ipynb`` through the pinned papermill engine
(:mod:`qencode_nb.executor.execute`) and prints the verdict, or with ``--json`` every
record as one JSON object.  The executed notebook is ``OUT.ipynb``, by default
``runs/audit/<entry stem>.ipynb`` under the working directory (:data:`AUDIT_OUT_DIR`;
never a loose file beside it); ``--out x`` writes ``x.ipynb`` (:func:`notebook_out`: a
name without ``.ipynb`` gets it appended, an existing folder is refused).

Exit status: 0 when the run recorded ``done`` with no alert, 3 when it did but raised
alerts (integrity or replay failed, inconsistent published numbers), 1 when it failed
(stderr: the reason, the notebook kept, ``--traceback``), 2 on bad arguments, refused
before any kernel starts and with nothing written (an ENTRY that is neither an existing
file nor a bundled name, with "did you mean ..." for a name; a bad ``--mode``,
``--engine``, ``--timeout``, ``--cell-timeout``, ``--proof-budget``, ``--threads``,
``--coretype``, ``--stack`` or ``--out``),
each refusal naming the flag as typed (``--coretype``, not the notebook parameter
``blas_coretype``: :mod:`qencode_nb.commands.flags`).

``--engine sector`` (audit, sweep, study threads/kernels/environments) runs the entries
that map (:func:`qencode_nb.engines.sector.mapping.unmappable_reason`) on the sector
engine; the others run their recorded backend and the reason is recorded.
``--engine fast`` runs every entry on the sector engine where it maps, else on the
compiled statevector engine (:mod:`qencode_nb.engines.fast`: HEA, tapered UCCSD,
the Pauli-word ADAPT pools), else on its recorded backend with the reason.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from qencode_nb.commands.flags import as_typed
from qencode_nb.commands.run_args import add_run_options
from qencode_nb.errors import QencodeNbError

#: Where ``qencode-nb audit`` writes the executed notebook without ``--out``:
#: ``<AUDIT_OUT_DIR>/<entry stem>.ipynb``, relative to the working directory (a
#: folder of its own, so that a sweep folder's ``summary.csv`` never picks it up).
AUDIT_OUT_DIR = Path("runs") / "audit"
#: The executed notebook's suffix, appended to an ``--out`` without it (:func:`notebook_out`).
NOTEBOOK_SUFFIX = ".ipynb"


def add_parsers(sub) -> None:
    """Add ``audit`` to the subparsers ``sub``."""
    audit = sub.add_parser("audit", help="audit one entry in an executed notebook")
    audit.add_argument("entry", help="a name in params/ (lih, h2, h6, bh) or a .yaml/.json path")
    add_run_options(audit, dispatch=False)   # one run: no --workers, --scheduler
    audit.add_argument("--out", default=None, help="executed notebook path; .ipynb is "
                       "appended to a name without it (default runs/audit/ENTRY.ipynb)")
    audit.add_argument("--json", action="store_true", help="print all records as JSON")
    audit.add_argument("--traceback", action="store_true", help="a failure's cell traceback")
    audit.add_argument("--resume", action="store_true", help="continue an interrupted "
                       "re-run from its checkpoint (finished restarts / ADAPT steps)")
    audit.add_argument("--public-key", default=None, help="Ed25519 public key (PEM) to "
                       "verify the entry's own trust.signature_b64")
    audit.set_defaults(func=_audit)


def notebook_out(out, entry) -> Path:
    """Where the executed notebook goes: ``out`` with ``.ipynb`` appended when its name
    does not end in it (``--out x`` writes ``x.ipynb``, ``--out lih.v2`` writes
    ``lih.v2.ipynb``: the name is kept whole), or ``runs/audit/<entry stem>.ipynb``
    (:data:`AUDIT_OUT_DIR`) without one.

    Raises:
        ParameterError: ``out`` is an existing folder (parameter ``out``; the notebook
            would not be where the user looks for it).
    """
    from qencode_nb.errors import ParameterError

    if not out:
        return AUDIT_OUT_DIR / f"{Path(entry).stem}.ipynb"
    path = Path(out)
    if path.is_dir():
        raise ParameterError(f"{str(out)!r} is a folder; accepted: a notebook path such as "
                             f"{str(path / (Path(entry).stem + '.ipynb'))!r} (.ipynb is "
                             "appended where missing)", parameter="out")
    return path if path.name.endswith(NOTEBOOK_SUFFIX) else path.with_name(path.name
                                                                           + NOTEBOOK_SUFFIX)


def run_within(out: Path, params: dict, opts, kernel: str | None) -> dict:
    """audit.ipynb into ``out`` in a process of its own
    (:func:`qencode_nb.executor.run_process.run_isolated`), its process tree killed past
    ``opts.timeout`` seconds (the whole run; ``opts.cell_timeout`` each cell), as a
    sweep runs it; returns its records.

    Raises:
        RunFailed: the run failed, or was killed at ``--timeout`` (its notebook then
            holds an ``error`` record saying so, as a sweep's does).
    """
    from qencode_nb.errors import RunFailed, RunTimedOut
    from qencode_nb.executor.execute import NOTEBOOKS, mark_failed, stopped_stage
    from qencode_nb.executor.run_process import run_isolated
    from qencode_nb.notebook.record import read_records
    from qencode_nb.paths import ROOT

    try:
        failure = run_isolated(NOTEBOOKS / "audit.ipynb", out, params, timeout=opts.timeout,
                               cell_timeout=opts.cell_timeout, kernel=kernel, cwd=str(ROOT))
    except RunTimedOut:
        failure = f"the run exceeded the per-run timeout of {opts.timeout:g} s and was killed"
        mark_failed(out, stopped_stage(out), "RunTimeout", failure)
    if failure:
        raise RunFailed(failure)
    return read_records(out)


def _audit(args) -> int:
    from qencode_nb.commands.run_args import run_options
    from qencode_nb.notebook.record import encode, read_records
    from qencode_nb.executor.execute import NOTEBOOKS, explain_failure, run_notebook

    try:   # every value refused here, before any kernel and with nothing written
        opts = run_options(args)
        from qencode_nb.entry.lookup import check_reference

        entry = check_reference(args.entry)
        out = notebook_out(args.out, args.entry)
    except QencodeNbError as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    from qencode_nb.batch.run_spec import notebook_parameters
    from qencode_nb.environment.choice import kernels_for

    params = notebook_parameters(opts, entry, resume=args.resume, public_key=args.public_key)
    kernel = kernels_for(opts.stack, [entry], params.get("db"))[entry]   # built once if needed
    try:
        if opts.timeout is None:
            records = run_notebook(NOTEBOOKS / "audit.ipynb", out.resolve(), params,
                                   timeout=opts.cell_timeout, progress_bar=not args.json,
                                   kernel_name=kernel)
        else:     # the whole run in a process of its own, killed at --timeout
            records = run_within(out.resolve(), params, opts, kernel)
    except QencodeNbError as exc:
        from qencode_nb.verdict.card import redraw_card

        redraw_card(out)   # a dead kernel left the card "running": it now says why
        if args.json and out.exists():
            print(json.dumps(encode(read_records(out)), indent=1, sort_keys=True))
        reason, *more = explain_failure(exc, out, traceback=args.traceback)
        print(f"qencode-nb: audit failed: {reason}", *more, sep="\n", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(encode(records), indent=1, sort_keys=True))
    else:
        print(records["verdict"])
        print(f"executed notebook: {out}")
    return 3 if records.get("alerts") else 0
