"""Sweep a benchmark's whole record: every release's entries, its curves, its claims.

:func:`sweep_record` runs :func:`qencode_nb.batch.sweep.sweep` once per release group
of a :class:`~qencode_nb.batch.record.Record` (each into ``OUT/<group slug>/``, so an
entry id two releases share keeps two notebooks), then writes in ``OUT``:

- ``summary.csv``: every run's row (:func:`qencode_nb.readout.collect.audit_table`)
  with its release in :data:`~qencode_nb.readout.record_counts.RELEASE_COLUMN`;
- ``releases.csv``: the per-release counts
  (:func:`qencode_nb.readout.record_counts.release_counts`);
- ``claims.csv``: the claims audit of each record folder (:mod:`qencode_nb.claims`);
- ``curves/<curve>/``: each dissociation curve's audit (:mod:`qencode_nb.studies.curve`)
  in modes full and rerun; a replay sweep lists the curves as not audited, since a
  curve point stores no parameters to replay;
- ``record.json``: what was swept (:data:`RECORD_MANIFEST`), which
  :func:`qencode_nb.readout.record_report.write_record_report` reads.
"""

from __future__ import annotations

import json
from pathlib import Path

#: The manifest of a record sweep's output folder.
RECORD_MANIFEST = "record.json"

#: Why a replay sweep does not audit the curves.
CURVES_NOT_REPLAYED = ("not audited in mode replay: a curve point stores no parameters to "
                       "replay (run the sweep with --mode full, or qencode-nb curve FILE)")


def sweep_record(record, out_dir, options=None, *, curve=None):
    """Audit every group of ``record``; return the combined summary table.

    Args:
        record: :class:`qencode_nb.batch.record.Record` (:func:`~qencode_nb.batch.record.discover`).
        out_dir: the output folder (one sub-folder per group, the files listed above).
        options: :class:`~qencode_nb.batch.options.RunOptions` of every run.
        curve: the curve audit ``curve(file, out_folder, options) -> summary dict``
            (default :func:`qencode_nb.studies.curve.audit_curve_file`); called only in
            modes full and rerun.

    Raises:
        OutputFolderError: ``out_dir`` cannot be written (before any run).
        the errors of :func:`~qencode_nb.batch.sweep.sweep` (checked before any run).
    """
    import pandas as pd

    from qencode_nb.batch.options import with_changes
    from qencode_nb.batch.run_folder import writable_folder, write_text_atomic
    from qencode_nb.batch.sweep import sweep
    from qencode_nb.readout.record_counts import RELEASE_COLUMN, release_counts

    opts = with_changes(options, {})
    out = writable_folder(out_dir)
    tables = []
    for group in record.groups:
        if opts.progress:
            print(f"release {group.label}: {len(group.targets)} entries -> "
                  f"{out / group.slug}", flush=True)
        table = sweep(group.targets, out / group.slug, opts)
        table.insert(0, RELEASE_COLUMN, group.label)
        tables.append(table)
    table = (pd.concat([t.astype(object) for t in tables], ignore_index=True) if tables
             else pd.DataFrame())
    write_text_atomic(out / "summary.csv", table.to_csv(index=False))
    counts = release_counts(table, [g.label for g in record.groups]) if tables else None
    if counts is not None:
        write_text_atomic(out / "releases.csv", counts.to_csv(index=False))
    claims = _claims(record, out)
    curves = _curves(record, out, opts, curve)
    manifest = {
        "mode": opts.mode, "engine": opts.engine,
        "groups": [{"label": g.label, "folder": g.slug, "entries": len(g.targets),
                    "source": _shown(g.source)} for g in record.groups],
        "record_roots": [Path(p).name for p in record.record_roots],
        "claims": claims, "curves": curves,
    }
    write_text_atomic(out / RECORD_MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return table


def _shown(path) -> str | None:
    """A source folder as the manifest records it: ``<parent>/<name>`` (never the
    machine's absolute path, which the report would have to scrub)."""
    if path is None:
        return None
    path = Path(path)
    return "/".join(path.parts[-3:]) if len(path.parts) > 3 else str(path)


def _claims(record, out: Path) -> dict | None:
    """The claims audit of the first record folder into ``out/claims.csv``; None when
    no target was a record folder."""
    if not record.record_roots:
        return None
    from qencode_nb.claims.audit import audit_claims, write_claims

    db = next((g.source for g in record.groups if g.label == "v4" and g.source), None)
    table = audit_claims(record.record_roots[0], db=db)
    write_claims(table, out / "claims.csv")
    return {"file": "claims.csv", "rows": len(table),
            "statuses": {str(k): int(v) for k, v in table["status"].value_counts().items()}}


def _curves(record, out: Path, opts, curve) -> list:
    """Each curve's audit (modes full and rerun) or why it was not audited."""
    rows = []
    for path in record.curves:
        name = Path(path).stem
        if opts.mode == "replay":
            rows.append({"curve": name, "status": "not audited", "reason": CURVES_NOT_REPLAYED})
            continue
        if curve is None:
            from qencode_nb.studies.curve import audit_curve_file as curve
        try:
            summary = curve(path, out / "curves" / name, opts)
            rows.append({"curve": name, "status": "done", "folder": f"curves/{name}",
                         **(summary or {})})
        except Exception as exc:   # noqa: BLE001 - one curve's fault never loses the sweep
            rows.append({"curve": name, "status": "failed",
                         "reason": f"{type(exc).__name__}: {exc}"})
    return rows
