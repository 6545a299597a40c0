"""The robustness study: every entry of a database re-run under every perturbation.

A *perturbation* is one combination of BLAS thread count, BLAS kernels (a
``blas_coretype``: a kernel profile, ``host`` or one ``OPENBLAS_CORETYPE``; or none
given: audit.ipynb's default ``reference`` profile), numpy's AVX-512 loops on or off
(``NPY_DISABLE_CPU_FEATURES``; not given: as the profile has them) and Jupyter
kernelspec (package stack); the perturbations of a study are the Cartesian product of
the axes given (:mod:`qencode_nb.studies.robustness_axes`), each axis by default just
its baseline value (1 thread, no coretype, the profile's dispatch, ``python3``).
:func:`robustness` runs ``notebooks/audit.ipynb`` once per (entry,
perturbation), each run its own process and pinned kernel, through the sweep's
local pool or a Dask cluster (:func:`qencode_nb.batch.sweep.run_local`,
:func:`~qencode_nb.batch.sweep.run_dask`), resumable like a sweep: a run whose
notebook recorded ``done`` with the same inputs is not run again.  It writes
``robustness.csv`` (:data:`ROBUSTNESS_COLUMNS`, one row per run),
``robustness_summary.csv`` (:func:`summarise_robustness`, one row per entry),
``robustness_drift.csv`` (:func:`~qencode_nb.readout.robustness_tables.drift_table`:
QEncode's four drift counts per perturbation; the three with no absolute path of the
machine, :func:`qencode_nb.readout.published.published_csv`) and the figure ``robustness.png`` /
``.pdf`` / ``.svg`` (:func:`qencode_nb.readout.robustness_plot.robustness_plot`).  Fragility is then
*measured* (``fragile_measured``: the certification changed under a
perturbation) beside the margin-based ``fragile`` inferred from the published
margin (docs/explanations/margin.md: fragility is established by re-running, never by arithmetic).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qencode_nb.options import RunOptions, with_changes
from qencode_nb.rules import FRAGILE_MARGIN
from qencode_nb.readout.robustness_tables import (ROBUSTNESS_COLUMNS, SUMMARY_COLUMNS,
                                                  as_flag, drift_table, robustness_row,
                                                  summarise_robustness)
from qencode_nb.studies.robustness_axes import (BASELINE, NO_CORETYPE, NUMPY_DISPATCH,
                                                Perturbation, audit_coretype, check_axes)

__all__ = ["BASELINE", "NO_CORETYPE", "NUMPY_DISPATCH", "Perturbation", "ROBUSTNESS_COLUMNS",
           "RobustnessResult", "SUMMARY_COLUMNS", "check_axes", "robustness",
           "summarise_robustness"]

@dataclass(frozen=True)
class RobustnessResult:
    """What a robustness study measured.

    Attributes:
        out_dir: the study folder (absolute): notebooks, CSVs, figure.
        perturbations: the :class:`Perturbation` list, in run order.
        table: :data:`ROBUSTNESS_COLUMNS`, one row per entry x perturbation
            (errors in mHa, energy differences in Ha, wall time in s).
        summary: :func:`summarise_robustness` of ``table``, one row per entry.
        resumed: how many runs were read from an earlier study instead of run.
        drift: :func:`~qencode_nb.readout.robustness_tables.drift_table` of
            ``table``: QEncode's four drift counts per perturbation and overall.
        reruns: ``[{"name", "why"}]``: runs an earlier study had done with the same
            inputs, re-run because they ran under other kernels, threads or packages
            (:class:`qencode_nb.batch.resume.Resume`).
    """

    out_dir: Path
    perturbations: list
    table: Any
    summary: Any
    resumed: int = 0
    drift: Any = None
    reruns: list = field(default_factory=list)

    @property
    def table_csv(self) -> Path:
        return self.out_dir / "robustness.csv"

    @property
    def summary_csv(self) -> Path:
        return self.out_dir / "robustness_summary.csv"

    @property
    def drift_csv(self) -> Path:
        return self.out_dir / "robustness_drift.csv"

    @property
    def figure(self) -> list[str]:
        """The figure's PNG, PDF and SVG paths (absolute;
        :func:`qencode_nb.figstyle.figure_paths`)."""
        from qencode_nb.figstyle import figure_paths

        return [str(p) for p in figure_paths(self.out_dir / "robustness")]

    def failures(self) -> dict:
        """``{run name: reason}`` of the failed runs, in table order."""
        return {Path(n).stem: r for n, r, s in zip(self.table["notebook"], self.table["reason"],
                                                    self.table["status"]) if s != "ok"}

    def lost_certification(self) -> dict:
        """``{entry: "label; label"}`` of the entries that lost certification in
        at least one ok run (``lost_certification_in`` not empty)."""
        s = self.summary
        return {e: lost for e, lost in zip(s["entry"], s["lost_certification_in"])
                if isinstance(lost, str) and lost}

    def gained_certification(self) -> dict:
        """``{entry: "label; label"}`` of the entries published as not certified that a
        run certified (``gained_certification_in`` not empty)."""
        s = self.summary
        return {e: got for e, got in zip(s["entry"], s["gained_certification_in"])
                if isinstance(got, str) and got}

    def unsettled(self) -> list:
        """Entries without a published certification whose ok runs disagree among
        themselves (``fragile_measured`` with neither a loss nor a gain to name)."""
        s = self.summary
        named = set(self.lost_certification()) | set(self.gained_certification())
        return [e for e, m, pub in zip(s["entry"], s["fragile_measured"],
                                       s["published_certified"])
                if as_flag(m) is True and as_flag(pub) is None and e not in named]

    def report(self) -> str:
        """The closing lines: entries, runs, failed runs, and every entry whose
        certification changed under some perturbation (lost, gained, or runs that
        disagree where none is published), named with where."""
        from qencode_nb.entry.labels import short_name

        n_runs, failed = len(self.table), self.failures()
        lost = self.lost_certification()
        inferred = sum(as_flag(v) is True for v in self.summary["fragile"])
        n, k = len(self.summary), len(self.perturbations)
        lines = [f"robustness: {n} entr{'y' if n == 1 else 'ies'} x {k} perturbation"
                 f"{'' if k == 1 else 's'} = {n_runs} runs ({n_runs - len(failed)} ok, "
                 f"{len(failed)} failed, {self.resumed} resumed); margin-fragile (published "
                 f"margin < {FRAGILE_MARGIN:.0%}): {inferred}",
                 f"entries losing certification in at least one perturbation: {len(lost)}"
                 + (": " + "; ".join(f"{short_name(e)} ({where})" for e, where in lost.items())
                    if lost else "")]
        gained, unsettled = self.gained_certification(), self.unsettled()
        if gained:
            lines.append(f"entries gaining certification in at least one perturbation: "
                         f"{len(gained)}: " + "; ".join(f"{short_name(e)} ({where})"
                                                        for e, where in gained.items()))
        if unsettled:
            lines.append("entries without a published certification whose runs disagree "
                         f"on it: {len(unsettled)}: "
                         + "; ".join(short_name(e) for e in unsettled))
        if self.drift is not None and len(self.drift):
            d = self.drift.iloc[-1]
            lines.append(f"drift counts over all perturbations ({d['entries']} entries): "
                         f"{d['strict_exceeded']} moved > 1e-6 Ha with certification unchanged; "
                         f"{d['lost_certification']} lost certification; arithmetic (published "
                         f"error + unsigned movement) named {d['arithmetic_candidates']} "
                         f"candidates, {d['candidates_passed']} of them passed; "
                         f"{d['gained_certification']} gained certification")
        if self.reruns:
            from qencode_nb.batch.resume import reruns_text

            lines.append(reruns_text(self.reruns))
        lines.append(f"table: {self.table_csv}; summary: {self.summary_csv}; drift: "
                     f"{self.drift_csv}; figure: " + ", ".join(self.figure))
        return "\n".join(lines)

    def to_record(self) -> dict:
        """``{record name: value}`` as robustness.ipynb records them: ``perturbations``
        (labels), ``table``, ``summary``, ``drift``, ``table_csv``, ``summary_csv``,
        ``drift_csv``, ``figure``, ``lost_certification``, ``gained_certification``,
        ``failed``."""
        return {"perturbations": [p.label for p in self.perturbations],
                "table": self.table.to_dict("records"), "summary": self.summary.to_dict("records"),
                "drift": None if self.drift is None else self.drift.to_dict("records"),
                "table_csv": str(self.table_csv), "summary_csv": str(self.summary_csv),
                "drift_csv": str(self.drift_csv),
                "figure": self.figure, "lost_certification": self.lost_certification(),
                "gained_certification": self.gained_certification(),
                "failed": self.failures()}


def robustness(targets, out_dir="runs/robustness", options: RunOptions | None = None, *,
               threads=None, coretypes=None, kernelspecs=None, numpy_dispatch=None,
               subset: str | None = None, **changes) -> RobustnessResult:
    """Re-run every target under every perturbation; tabulate, summarise, plot.

    Each (entry, perturbation) is audit.ipynb in its own process and Jupyter
    kernel (:func:`qencode_nb.batch.sweep.run_one`) with the parameters of the run
    options and the perturbation's ``blas_threads`` and ``blas_coretype``
    (:func:`qencode_nb.batch.run_spec.notebook_parameters`), kernelspec the
    perturbation's, named ``<entry stem>__<perturbation slug>``
    (``blas_coretype`` with the dispatch axis:
    :func:`~qencode_nb.studies.robustness_axes.audit_coretype`).
    A run that recorded ``done`` with the same inputs is read back, not re-run;
    a failed, killed or timed-out run is a row with status "failed" and its
    reason, and the study goes on.  Every error below is raised before any run,
    naming the accepted values.

    Args:
        targets: folders of QEncode JSON files, entry files or bundled names
            (:func:`qencode_nb.batch.targets.resolve_targets`; one str is one target).
        out_dir: folder for the notebooks, ``robustness.csv``,
            ``robustness_summary.csv`` and ``robustness.png`` / ``.pdf`` / ``.svg``.
        options: how every run runs (:class:`~qencode_nb.options.RunOptions`;
            default ``RunOptions()``): ``engine``
            (:func:`qencode_nb.options.check_engine`: None, the recorded
            backend, or a registered engine), passed through; ``mode`` "full" (default) or
            "rerun" (modes that re-run the optimiser); ``db``; ``workers`` (local
            processes, ignored with ``scheduler``); ``scheduler`` (a Dask address,
            ``tcp://host:port``); ``timeout`` (per run, s); ``cell_timeout`` (per cell,
            s); ``proof_budget``; ``progress`` (a bar on
            stderr, :func:`qencode_nb.batch.progress_bar.progress_bar`; in a kernel
            too); ``plot`` (the figure); ``stack``
            (:mod:`qencode_nb.environment.choice`: "recorded" runs each entry's baseline
            kernelspec, ``python3``, in its recorded stack instead).  ``blas_threads``
            and ``blas_coretype`` are not used: the axes are.
        threads, coretypes, kernelspecs, numpy_dispatch: the axes (:func:`check_axes`;
            ``numpy_dispatch`` "on" / "off" / "default").
        subset: a named subset of the targets (:data:`qencode_nb.batch.targets.SUBSETS`).
        **changes: fields of ``options`` replaced (``mode="rerun"``).

    Returns:
        a :class:`RobustnessResult`.

    Raises:
        EntryError: a target that does not exist, an unknown subset.
        ParameterError: an option :class:`~qencode_nb.options.RunOptions` refuses (an
            unknown engine, mode or stack, ``timeout`` <= 0, ``workers`` < 1), mode
            "replay", a thread count < 1, an unknown or unrunnable coretype, a
            kernelspec Jupyter does not find, an empty axis.
        TypeError: a keyword that is not a :class:`~qencode_nb.options.RunOptions`
            field.
    """
    from qencode_nb.batch.progress_bar import advance, progress_bar
    from qencode_nb.options import check_mode
    from qencode_nb.batch.pool import cobyla_path_key, longest_first
    from qencode_nb.batch.resume import Resume
    from qencode_nb.environment.choice import release_of_entry as entry_release
    from qencode_nb.batch.sweep import inputs_of, run_dask, run_local, run_name
    from qencode_nb.batch.targets import resolve_targets, select_subset

    opts = with_changes(options, changes)
    check_mode(opts.mode, study=True)
    engine = opts.engine
    perturbations = check_axes(threads, coretypes, kernelspecs, numpy_dispatch)
    if isinstance(targets, (str, Path)):
        targets = [targets]
    resolved = list(dict.fromkeys(select_subset(resolve_targets([str(t) for t in targets]),
                                                subset)))   # one run per entry and perturbation
    from qencode_nb.batch.run_folder import writable_folder

    from qencode_nb.batch.run_spec import job, notebook_parameters
    from qencode_nb.environment.choice import kernels_for

    stack = opts.stack
    releases = ({t: entry_release(t, opts.db) for t in resolved}   # the dispatch axis
                if any(p.numpy_dispatch for p in perturbations) else {})
    coretypes = {(t, p): audit_coretype(p, releases.get(t))   # refused before any run
                 for t in resolved for p in perturbations}
    out = writable_folder(Path(out_dir).resolve())   # before any run, naming the folder
    # --stack replaces the baseline kernel (the notebook's own) by each entry's stack
    stack_kernels = kernels_for(stack, resolved, opts.db)
    runs, todo, resume = [], [], Resume()
    for target in resolved:
        for p in perturbations:
            params = notebook_parameters(opts, target, {"blas_threads": p.threads,
                                                        "blas_coretype": coretypes[target, p]})
            kernel = p.kernelspec
            if kernel == BASELINE.kernelspec and stack_kernels[target]:
                kernel = stack_kernels[target]
            name = f"{run_name(target)}__{p.slug}"
            runs.append((run_name(target), p, name, params))
            if not resume.done(out, name, inputs_of(target, params, kernel), kernel):
                (out / f"{name}.ipynb").unlink(missing_ok=True)   # never read a stale run
                todo.append(job(opts, target, out, params, name, kernel))
    outcomes = {}
    todo = longest_first(todo)
    with progress_bar(len(runs), "robustness", "run", initial=len(runs) - len(todo),
                      enabled=opts.progress) as bar:
        # an entry whose COBYLA keeps its path: one perturbation at a time, so that the
        # first stores the path and the others verify it (qencode_nb.rerun.cobyla_path)
        dispatched = run_dask(todo, opts.scheduler, lambda args: args) if opts.scheduler else \
            run_local(todo, opts.workers, lambda args: args,
                      apart=lambda args: cobyla_path_key(args[0]))
        for outcome in dispatched:
            outcomes[outcome["name"]] = outcome
            advance(bar, f"{outcome['name'][-28:]} {outcome['status']}")
    table = _table(out, runs, outcomes, engine)
    from qencode_nb.readout.manifest import write_manifest

    write_manifest(out, "robustness", [f"{name}.ipynb" for _, _, name, _ in runs],
                   resume.reruns)
    summary = summarise_robustness(table)
    drift = drift_table(table)
    from qencode_nb.readout.published import published_csv

    sources = [t for t in resolved if Path(t).is_absolute()]
    for frame, path in ((table, out / "robustness.csv"), (summary, out / "robustness_summary.csv"),
                        (drift, out / "robustness_drift.csv")):   # no absolute path in them
        path.write_text(published_csv(frame, out, sources), encoding="utf-8")
    if opts.plot and len(table):
        from qencode_nb.readout.robustness_plot import robustness_plot

        robustness_plot(table, summary, out / "robustness")
    return RobustnessResult(out_dir=out, perturbations=perturbations, table=table,
                            summary=summary, resumed=len(runs) - len(todo), drift=drift,
                            reruns=resume.reruns)


def _table(out: Path, runs, outcomes: dict, engine):
    """One :func:`~qencode_nb.readout.robustness_tables.robustness_row` per run, in run
    order; a resumed run's outcome is its ``<name>.outcome.json``."""
    import pandas as pd

    rows = []
    for entry, p, name, _ in runs:
        outcome = outcomes.get(name)
        if outcome is None:
            try:
                outcome = json.loads((out / f"{name}.outcome.json").read_text())
            except (OSError, ValueError):
                outcome = {"name": name, "failure": None, "seconds": None}
        rows.append(robustness_row(out, outcome, entry=entry, threads=p.threads,
                                   coretype=p.coretype, kernelspec=p.kernelspec,
                                   label=p.label, engine=engine,
                                   numpy_dispatch=p.numpy_dispatch))
    return pd.DataFrame(rows, columns=list(ROBUSTNESS_COLUMNS))
