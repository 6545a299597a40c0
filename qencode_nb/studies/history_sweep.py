"""Sweep a benchmark's whole record: every release's entries, its curves, its claims.

:func:`sweep_history` audits every release group of a
:class:`~qencode_nb.batch.history.History`, each into ``OUT/<group slug>/`` (so an entry id
two releases share keeps two notebooks) as :func:`qencode_nb.batch.sweep.sweep` would, but
with every group's runs (and the current-stack runs of ``--stack recorded``) planned first
(:func:`~qencode_nb.batch.sweep.plan_folder`) and fed to ONE pool, longest first
(:func:`~qencode_nb.batch.sweep.run_plans`), so no worker idles at the tail of a group;
each folder's files are then written as a sweep writes them
(:func:`~qencode_nb.batch.sweep.finish_folder`, the folders side by side:
:func:`~qencode_nb.batch.sweep.finish_folders`).  In ``OUT`` it writes:

- ``summary.csv``: every run's row (:func:`qencode_nb.readout.collect.audit_table`)
  with its release in :data:`~qencode_nb.readout.history_counts.RELEASE_COLUMN`;
- ``releases.csv``: the per-release counts
  (:func:`qencode_nb.readout.history_counts.release_counts`);
- ``claims.csv``: the claims audit of each record folder (:mod:`qencode_nb.claims`);
- ``curves/<curve>/``: each dissociation curve's audit (:mod:`qencode_nb.studies.curve`)
  in modes full and rerun; a replay sweep lists the curves as not audited, since a
  curve point stores no parameters to replay;
- with ``--stack recorded`` (each entry in its recorded stack,
  :mod:`qencode_nb.environment.choice`): every release whose entries ran in a stack of
  their own runs again in the current stack into ``OUT/current-stack/<group slug>/``,
  and ``environments.csv`` gives per release the bit-identical and certification counts
  in both environments side by side
  (:func:`qencode_nb.readout.history_counts.environment_rates`);
- ``record.json``: what was swept (:data:`HISTORY_MANIFEST`: the groups, each with the
  release metadata beside its entries, ``not_entries``; the release folders holding no
  entry with the reason, ``empty_releases``), which
  :func:`qencode_nb.readout.history_report.write_history_report` reads.

Nothing it writes holds an absolute path of the machine: the CSV files go through
:func:`qencode_nb.readout.published.published_csv` (``notebook`` relative to ``OUT``:
``v4/<entry id>.ipynb``), the manifest names folders by their names and any path left
in it (a failure's) is shortened (:func:`qencode_nb.paths.scrub`).
"""

from __future__ import annotations

import json
from pathlib import Path

from qencode_nb.environment.store import RECORDED, RECORDED_TODAY

#: The --stack words that run each release in a stack of its entries' own (and again in
#: the current stack where it differs).
RECORDED_WORDS = (RECORDED, RECORDED_TODAY)

#: The manifest of a record sweep's output folder.
HISTORY_MANIFEST = "record.json"

#: The per-release rates in the recorded and the current environment (``--stack recorded``).
ENVIRONMENTS_FILE = "environments.csv"

#: Where a ``--stack recorded`` record sweep runs each release again in the current stack.
CURRENT_FOLDER = "current-stack"

#: Why a replay sweep does not audit the curves.
CURVES_NOT_REPLAYED = ("not audited in mode replay: a curve point stores no parameters to "
                       "replay (run the sweep with --mode full, or qencode-nb curve FILE)")


def sweep_history(history, out_dir, options=None):
    """Audit every group of ``history``; return the combined summary table.

    Args:
        history: :class:`qencode_nb.batch.history.History` (:func:`~qencode_nb.batch.history.discover`).
        out_dir: the output folder (one sub-folder per group, the files listed above).
        options: :class:`~qencode_nb.options.RunOptions` of every run.

    Raises:
        OutputFolderError: ``out_dir`` cannot be written (before any run).
        EntryError, ParameterError: as :func:`~qencode_nb.batch.sweep.sweep` (checked
            before any run).
    """
    from qencode_nb.options import with_changes
    from qencode_nb.batch.run_folder import writable_folder, write_text_atomic
    from qencode_nb.batch.sweep import finish_folders, plan_folder, run_plans
    from qencode_nb.readout.published import published_csv
    from qencode_nb.readout.history_counts import RELEASE_COLUMN, release_counts

    opts = with_changes(options, {})   # a bad option: refused here, nothing written
    out = writable_folder(out_dir)
    planned = []                  # (group, plan in OUT/<slug>, plan in the current stack)
    for group in history.groups:   # every folder planned (and checked) before any run
        if opts.progress:
            print(f"release {group.label}: {len(group.targets)} entries -> "
                  f"{out / group.slug}", flush=True)
        plan = plan_folder(group.targets, out / group.slug, opts)
        here = _in_current_stack(group, out, opts) if opts.stack in RECORDED_WORDS else None
        planned.append((group, plan, here))
    plans = [p for _, plan, here in planned for p in (plan, here) if p is not None]
    run_plans(plans, opts)
    # pandas (numpy) only now: the runs' pool workers are forked from this process, and
    # a run's kernel is forked from a template only where numpy is not imported
    # (qencode_nb.executor.kernel_fork.NOT_BEFORE_PINS)
    import pandas as pd

    finished = iter(finish_folders(plans, opts.workers))   # in plans' order
    tables, current, reruns = [], [], []
    for group, plan, here in planned:
        table = next(finished)
        reruns += [{"release": group.label, **r} for r in table.attrs.get("reruns", [])]
        table.insert(0, RELEASE_COLUMN, group.label)
        tables.append(table)
        if opts.stack in RECORDED_WORDS:
            if here is None:     # the recorded stack is the current one: the same runs
                current.append(table)
            else:
                now = next(finished)
                now.insert(0, RELEASE_COLUMN, group.label)
                current.append(now)
    frame = (lambda parts: pd.concat([t.astype(object) for t in parts], ignore_index=True)
             if parts else pd.DataFrame(columns=[RELEASE_COLUMN, "notebook", "status",
                                                 "failure"]))
    table = frame(tables)
    sources = [t for g in history.groups for t in g.targets]
    write_text_atomic(out / "summary.csv", published_csv(table, out, sources))
    labels = [g.label for g in history.groups]
    counts = release_counts(table, labels)
    write_text_atomic(out / "releases.csv", published_csv(counts, out, sources))
    environments = None
    if opts.stack in RECORDED_WORDS:
        from qencode_nb.readout.history_counts import environment_rates

        rates = environment_rates(table, frame(current), labels)
        write_text_atomic(out / ENVIRONMENTS_FILE, published_csv(rates, out, sources))
        environments = {"file": ENVIRONMENTS_FILE, "current_folder": CURRENT_FOLDER}
    claims = _claims(history, out)
    curves = _curves(history, out, opts)
    manifest = {
        "mode": opts.mode, "engine": opts.engine,
        "groups": [{"label": g.label, "folder": g.slug, "entries": len(g.targets),
                    "source": _shown(g.source), "not_entries": g.not_entries}
                   for g in history.groups],
        "empty_releases": history.empty,
        "record_roots": [Path(p).name for p in history.record_roots],
        "claims": claims, "curves": curves, "environments": environments,
        "reruns": reruns,
    }
    from qencode_nb.paths import known_folders, scrub_value

    manifest = scrub_value(manifest, known_folders(out, sources))   # a failure's paths too
    write_text_atomic(out / HISTORY_MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return table


def _in_current_stack(group, out: Path, opts):
    """The plan of a release's runs in the current stack, beside its runs under
    ``--stack recorded``: a folder ``OUT/current-stack/<group>/`` where any of its entries
    runs in a stack of its own, else None (the recorded stack is the current one: the same
    runs)."""
    from qencode_nb.options import with_changes
    from qencode_nb.environment.choice import kernels_for
    from qencode_nb.batch.sweep import plan_folder

    if not any(kernels_for(opts.stack, group.targets, opts.db, log=lambda line: None).values()):
        return None
    if opts.progress:
        print(f"release {group.label} again in the current stack -> "
              f"{out / CURRENT_FOLDER / group.slug}", flush=True)
    return plan_folder(group.targets, out / CURRENT_FOLDER / group.slug,
                       with_changes(opts, {"stack": None}))


def _shown(path) -> str | None:
    """A source folder as the manifest records it: ``<parent>/<name>`` (never the
    machine's absolute path, which the report would have to scrub)."""
    if path is None:
        return None
    parts = Path(path).parts
    return "/".join((parts[1:] if Path(path).is_absolute() else parts)[-3:])


def _claims(history, out: Path) -> dict | None:
    """The claims audit of the first record folder into ``out/claims.csv``
    (:func:`qencode_nb.claims.check.check_folder`, the v4 database of the sweep as its
    ``db``); None when no target was a record folder.  A folder the claims audit cannot
    read (no leaderboard, receipts or README; a broken file) is ``{"file": None,
    "error": why}``, never the loss of the sweep; other record folders are listed in
    ``not_checked`` (one claims table per sweep)."""
    if not history.record_roots:
        return None
    from qencode_nb.claims.check import check_folder
    from qencode_nb.claims.table import STATUSES, status_word, write_csv
    from qencode_nb.errors import QencodeNbError

    root = history.record_roots[0]
    done = {"folder": Path(root).name,
            "not_checked": [Path(r).name for r in history.record_roots[1:]]}
    db = next((g.source for g in history.groups if g.label == "v4" and g.source), None)
    try:
        rows = check_folder(root, db=db)
    except QencodeNbError as exc:
        return {**done, "file": None, "error": f"{type(exc).__name__}: {exc}"}
    path = write_csv(rows, out)
    words = [status_word(r.status) for r in rows]
    return {**done, "file": path.name, "rows": len(rows),
            "statuses": {s: words.count(s) for s in STATUSES if s in words}}


def _curves(history, out: Path, opts) -> list:
    """Each curve's audit (modes full and rerun: :func:`audit_curve_pinned`) or why it
    was not audited (mode replay)."""
    rows = []
    for path in history.curves:
        name = Path(path).stem
        if opts.mode == "replay":
            rows.append({"curve": name, "status": "not audited", "reason": CURVES_NOT_REPLAYED})
            continue
        rows.append({"curve": name, **audit_curve_pinned(path, out / "curves" / name, opts),
                     "folder": f"curves/{name}"})
    return rows


def audit_curve_pinned(path, out: Path, opts) -> dict:
    """Audit one curve in a fresh process (``qencode-nb curve``), so its BLAS threads
    and OpenBLAS kernels are pinned before numpy loads, as each audit notebook's are.

    Args:
        path: the curve file.  out: its output folder (``curve.csv``, the figure,
            ``curve.log``: the command's output).
        opts: the sweep's :class:`~qencode_nb.options.RunOptions`: its
            ``blas_threads``, ``blas_coretype``, ``timeout`` (s, the whole curve) and
            ``engine`` (:func:`qencode_nb.studies.curve.curve_engine`: an engine a
            curve runs on stays, any other is the curve audit's default).

    Returns:
        ``{"status": "done" | "failed", "summary": str, "changed": [R, ...],
        "points": int, "agree": int, "failed_points": int, "blas": {"threads": int,
        "kernels": {copy: kernel}} (measured in the curve process), "reason": str | None}``;
        a command that fails leaves its ``curve.log`` and is a ``failed`` row, never an
        exception (one curve's fault never loses the sweep).
    """
    import subprocess
    import sys

    out.mkdir(parents=True, exist_ok=True)
    from qencode_nb.studies.curve import curve_engine

    engine = curve_engine(opts.engine)
    cmd = [sys.executable, "-m", "qencode_nb.cli", "curve", str(path), "--engine", engine,
           "--out", str(out), "--threads", str(opts.blas_threads)]
    if opts.blas_coretype:
        cmd += ["--coretype", opts.blas_coretype]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False,
                              timeout=opts.timeout)
    except subprocess.TimeoutExpired as exc:
        (out / "curve.log").write_text(_text(exc.stdout) + _text(exc.stderr), encoding="utf-8")
        return {"status": "failed", "reason": f"timed out after {opts.timeout:g} s (the "
                "sweep's --timeout; curve.log)"}
    (out / "curve.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    table = out / "curve.csv"
    if done.returncode == 2 or not table.is_file():
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        return {"status": "failed", "reason": f"qencode-nb curve exit {done.returncode}: "
                f"{last[0]} (curve.log)"}
    import pandas as pd

    t = pd.read_csv(table)
    try:   # the threads and kernels the curve process measured (studies.curve)
        blas = json.loads((out / "curve_points.json").read_text(encoding="utf-8"))["blas"]
    except (OSError, ValueError, KeyError):
        blas = None
    ok = t[t["error"].isna()]
    changed = ok.loc[ok["changed"].astype(bool), "R"].tolist()
    summary = (f"{len(t)} points, {len(ok)} re-run on the {engine} engine, "
               f"{int(ok['agrees'].astype(bool).sum())} agree with the published energy and "
               f"operator count, {len(t) - len(ok)} failed, {len(changed)} certification "
               f"changes")
    return {"status": "done" if len(ok) == len(t) else "failed", "summary": summary,
            "changed": changed, "points": len(t), "agree": int(ok["agrees"].astype(bool).sum()),
            "failed_points": len(t) - len(ok), "blas": blas,
            "reason": None if len(ok) == len(t) else f"{len(t) - len(ok)} points failed "
            "(their rows in curve.csv hold the error)"}


def _text(data) -> str:
    """A timed-out process's captured output (bytes, str or None) as text."""
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode("utf-8", "replace")
