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
- A record sweep's ``--out`` (``record.json``, :mod:`qencode_nb.studies.history_sweep`):
  that, for each release's folder in turn, under a ``release LABEL (FOLDER/):`` line.

The status is :func:`qencode_nb.readout.collect.collect_row`'s: done, failed (with
the recorded reason: the ``error`` record, papermill's exception, a kernel that never
answered), inconsistent or partial.  Exit status, as ``qencode-nb audit``'s: 0 when
every run shown is done, 3 when every one is done and one has alerts (integrity, the
Hamiltonian check, replay or consistency failed), 1 when one is not done, 2 on a path
that is not an executed audit notebook (a notebook papermill never ran included) nor a
folder holding one.
"""

from __future__ import annotations

import sys
from pathlib import Path

from qencode_nb.commands.flags import as_typed


def add_parsers(sub) -> None:
    """Add ``show`` to the subparsers ``sub``."""
    sp = sub.add_parser("show", help="print an executed audit's verdict card as text (a "
                                     "folder of executed audits: one line per run)")
    sp.add_argument("path", help="an executed audit notebook (e.g. out.ipynb), or a folder "
                                 "of them (a sweep's --out; a record sweep's --out: release "
                                 "by release)")
    sp.set_defaults(func=_show)


#: What ``show`` accepts, for its refusals.
ACCEPTED = ("accepted: a copy of notebooks/audit.ipynb executed by papermill or qencode-nb "
            "(e.g. out.ipynb of the main job), or a folder of them")

#: The exit status of a done audit with alerts (as ``qencode-nb audit``'s).
EXIT_ALERTS = 3


def card_text(path) -> tuple[str, str]:
    """``(status, text)`` of one executed audit notebook: the status of
    :func:`~qencode_nb.readout.collect.collect_row` ("alerts" for a done run with
    alerts) and the card's text twin, the recorded failure first when the run did not
    finish.

    Raises:
        ValueError: ``path`` is not a readable notebook, not an audit (its
            ``metadata.qencode_nb.kind`` is not "audit"), or an audit notebook that was
            never executed (no papermill metadata and no record).
    """
    import json

    from qencode_nb.notebook.record import read_records
    from qencode_nb.readout.collect import collect_row
    from qencode_nb.readout.manifest import notebook_kind
    from qencode_nb.verdict.card import Card

    try:
        meta = json.loads(Path(path).read_text(encoding="utf-8")).get("metadata")
    except (OSError, ValueError, AttributeError):
        meta = None
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: not a notebook (not JSON with notebook metadata); {ACCEPTED}")
    kind = notebook_kind(path)
    if kind != "audit":
        raise ValueError(f"{path}: not an audit notebook (its recorded kind is "
                         f"{kind or 'not recorded'}); {ACCEPTED}")
    row = collect_row(path)
    records = read_records(path)
    if not records and not meta.get("papermill"):
        raise ValueError(f"{path}: an audit notebook that was never executed (no record, no "
                         "papermill metadata); run it first: .venv/bin/papermill "
                         f"notebooks/audit.ipynb out.ipynb -p entry lih; {ACCEPTED}")
    state = {"done": "done", "partial": "running"}.get(row["status"], "failed")
    params = {k.removeprefix("parameters."): v for k, v in row.items()
              if k.startswith("parameters.")}
    text = Card(records, params, state).text()
    if row["status"] != "done" and "error" not in records:
        text = f"{row['status'].upper()}: {row['failure']}\n{text}"
    if row["status"] == "done" and records.get("alerts"):
        return "alerts", text
    return row["status"], text


def exit_status(statuses) -> int:
    """0 all done, :data:`EXIT_ALERTS` all done and some with alerts, 1 otherwise."""
    statuses = set(statuses)
    if statuses <= {"done"}:
        return 0
    return EXIT_ALERTS if statuses <= {"done", "alerts"} else 1


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
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 2
    print(f"{path.name}: {status}")
    print(text)
    return exit_status([status])


def _record_groups(folder: Path) -> list | None:
    """A record sweep's release folders in its ``record.json`` order (``[(label, path)]``),
    or None when ``folder`` is not a record sweep's ``--out``
    (:data:`qencode_nb.studies.history_sweep.HISTORY_MANIFEST`)."""
    import json

    from qencode_nb.studies.history_sweep import HISTORY_MANIFEST

    try:
        manifest = json.loads((folder / HISTORY_MANIFEST).read_text(encoding="utf-8"))
        return [(g["label"], folder / g["folder"]) for g in manifest["groups"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _show_folder(folder: Path) -> int:
    from qencode_nb.readout.manifest import audit_notebooks

    paths = audit_notebooks(folder)
    groups = None if paths else _record_groups(folder)
    if groups:              # a record sweep's --out: each release's folder in turn
        statuses: set[str] = set()
        for label, sub in groups:
            runs = audit_notebooks(sub) if sub.is_dir() else []
            if runs:
                print(f"release {label} ({sub.name}/):")
                statuses |= set(_print_runs(sub, runs))
            else:
                print(f"release {label} ({sub.name}/): no audit notebook (every entry "
                      "refused, or not run yet)")
        if not statuses:
            print(f"qencode-nb: record sweep {str(folder)!r} holds no executed audit "
                  "notebook in any release folder", file=sys.stderr)
            return 2
        return exit_status(statuses)
    if not paths:
        print(f"qencode-nb: folder {str(folder)!r} holds no executed audit notebook "
              "(accepted: a sweep's --out, a record sweep's --out, or any folder of "
              "executed audit.ipynb copies)", file=sys.stderr)
        return 2
    return exit_status(_print_runs(folder, paths))


def _print_runs(folder: Path, paths: list) -> dict:
    """Print one line per run of ``folder`` (``paths``, its audit notebooks), the counts
    and any stale note; return ``{status: count}``."""
    width = max(len(p.stem) for p in paths)
    counts: dict[str, int] = {}
    for p in paths:
        try:
            status, text = card_text(p)
        except ValueError as exc:    # an audit notebook never executed, among the runs
            status, text = "failed", str(exc)
        counts[status] = counts.get(status, 0) + 1
        head = text.splitlines()[0]
        print(f"{p.stem:<{width}}  {status:<8}  {head}")
    print(f"{len(paths)} runs: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    from qencode_nb.readout.manifest import stale_text

    if stale_text(folder):
        print(stale_text(folder))
    return counts
