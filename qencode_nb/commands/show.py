"""``qencode-nb show NOTEBOOK|FOLDER``: an executed audit's verdict card as text, so
the main job's result is one command away.

- An executed ``audit.ipynb`` (``papermill notebooks/audit.ipynb out.ipynb -p entry
  lih``): its status line, then the card's text twin
  (:meth:`qencode_nb.verdict.card.Card.text`): the headline (errors in mHa, margins
  in %), entry, mode, engine, BLAS kernels and numeric fingerprint, the three tiers
  with their reasons, the checks (replay, integrity, Hamiltonian, alerts) and the five
  "Works on my QPU" answers.
- A folder of executed audits (a sweep's ``--out``): one line per run, ``name
  status headline``, then the counts.

The status is :func:`qencode_nb.readout.collect.collect_row`'s: done, failed (with
the recorded reason: the ``error`` record, papermill's exception, a kernel that never
answered), inconsistent or partial.  Exit status 0 when every run shown is done, 1
when one is not, 2 on a path that is neither an audit notebook nor a folder holding
one.
"""

from __future__ import annotations

import sys
from pathlib import Path


def add_parsers(sub) -> None:
    """Add ``show`` to the subparsers ``sub``."""
    sp = sub.add_parser("show", help="print an executed audit's verdict card as text (a "
                                     "folder of executed audits: one line per run)")
    sp.add_argument("path", help="an executed audit notebook (e.g. out.ipynb), or a folder "
                                 "of them (a sweep's --out)")
    sp.set_defaults(func=_show)


def card_text(path) -> tuple[str, str]:
    """``(status, text)`` of one executed audit notebook: the status of
    :func:`~qencode_nb.readout.collect.collect_row` and the card's text twin, the
    recorded failure first when the run did not finish.

    Raises:
        ValueError: ``path`` is not a readable notebook, or not an audit (its
            ``metadata.qencode_nb.kind`` is not "audit").
    """
    from qencode_nb.notebook.record import read_records
    from qencode_nb.readout.collect import collect_row, notebook_kind
    from qencode_nb.verdict.card import Card

    kind = notebook_kind(path)
    if kind != "audit":
        raise ValueError(f"{path}: not an executed audit notebook (its recorded kind is "
                         f"{kind!r}; accepted: a copy of notebooks/audit.ipynb executed by "
                         "papermill or qencode-nb, or a folder of them)")
    row = collect_row(path)
    records = read_records(path)
    state = {"done": "done", "partial": "running"}.get(row["status"], "failed")
    params = {k.removeprefix("parameters."): v for k, v in row.items()
              if k.startswith("parameters.")}
    text = Card(records, params, state).text()
    if row["status"] != "done" and "error" not in records:
        text = f"{row['status'].upper()}: {row['failure']}\n{text}"
    return row["status"], text


def _show(args) -> int:
    path = Path(args.path)
    if path.is_dir():
        return _show_folder(path)
    if not path.is_file():
        print(f"qencode-nb: path {args.path!r}: no such file or folder; accepted: an executed "
              "audit notebook or a folder of them", file=sys.stderr)
        return 2
    try:
        status, text = card_text(path)
    except ValueError as exc:
        print(f"qencode-nb: {exc}", file=sys.stderr)
        return 2
    print(f"{path.name}: {status}")
    print(text)
    return 0 if status == "done" else 1


def _show_folder(folder: Path) -> int:
    from qencode_nb.readout.collect import audit_notebooks

    paths = audit_notebooks(folder)
    if not paths:
        print(f"qencode-nb: folder {str(folder)!r} holds no executed audit notebook "
              "(accepted: a sweep's --out, or any folder of executed audit.ipynb copies)",
              file=sys.stderr)
        return 2
    width = max(len(p.stem) for p in paths)
    counts: dict[str, int] = {}
    for p in paths:
        status, text = card_text(p)
        counts[status] = counts.get(status, 0) + 1
        head = text.splitlines()[0]
        print(f"{p.stem:<{width}}  {status:<8}  {head}")
    print(f"{len(paths)} runs: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return 0 if set(counts) == {"done"} else 1
