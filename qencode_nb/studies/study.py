"""The one entry point of a study, for the CLI and the notebooks alike.

:func:`run` runs a study of one kind (:data:`STUDY_KINDS`: threads, kernels,
optimizers, environments) through its module (:mod:`qencode_nb.studies.blas`,
:mod:`~qencode_nb.studies.optimizers`, :mod:`~qencode_nb.studies.environments`),
summarises it (:mod:`qencode_nb.readout.summaries`) and returns a
:class:`StudyResult`: the table, the per-group summary, the finding, and for
an environment study the versions and differences tables.
``qencode-nb study KIND`` (:mod:`qencode_nb.commands.study`) and ``notebooks/threading.ipynb``
both call it, so a study is orchestrated in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qencode_nb.options import RunOptions, with_changes
from qencode_nb.errors import ParameterError
from qencode_nb.readout.summaries import STUDY_GROUPS

#: The study kinds, as ``qencode-nb study KIND`` and threading.ipynb's ``study`` name them.
STUDY_KINDS = tuple(STUDY_GROUPS)


@dataclass(frozen=True)
class StudyResult:
    """What one study measured.

    Attributes:
        kind: the study kind (:data:`STUDY_KINDS`).
        by: the column grouping the runs (:data:`~qencode_nb.readout.summaries.STUDY_GROUPS`).
        out_dir: the study folder as given (notebooks, ``<kind>.csv``, figure).
        table: one row per run (energies in Ha, errors in mHa, seconds wall).
        summary: :func:`~qencode_nb.readout.summaries.summarise` of ``table`` by ``by``.
        finding: :func:`~qencode_nb.readout.summaries.finding` of ``summary``.
        versions: environment study only: package versions per kernelspec
            (:func:`~qencode_nb.readout.environment_tables.version_table`), else None.
        differences: environment study only: each kernelspec against the first
            (:func:`~qencode_nb.readout.environment_tables.environment_differences`), else None.
        environment_finding: environment study only: the sentence of
            ``differences``, else None.
    """

    kind: str
    by: str
    out_dir: Path
    table: Any
    summary: Any
    finding: str
    versions: Any = None
    differences: Any = None
    environment_finding: str | None = None

    @property
    def headline(self) -> str:
        """The sentence a reader sees first: the environment finding of an
        environment study, else the per-group finding."""
        return self.environment_finding if self.environment_finding is not None \
            else self.finding

    @property
    def table_csv(self) -> Path:
        """``<out_dir>/<kind>.csv`` (absolute)."""
        return Path(self.out_dir).resolve() / f"{self.kind}.csv"

    @property
    def figure(self) -> list[str]:
        """The figure's PNG, PDF and SVG paths (absolute;
        :func:`qencode_nb.figstyle.figure_paths`)."""
        from qencode_nb.figstyle import figure_paths

        return [str(p) for p in figure_paths(Path(self.out_dir).resolve() / self.kind)]

    def failures(self) -> dict:
        """``{run name: failure}`` of the runs that did not complete."""
        from qencode_nb.readout.counts import failures

        return failures(self.table)

    def to_record(self) -> dict:
        """``{record name: value}`` as threading.ipynb records them, in order:
        ``study``, ``by``, ``table``, ``table_csv``, ``summary``, ``finding``
        (:attr:`headline`), ``versions`` and ``differences`` (environment
        study only), ``figure``, ``failed``."""
        rec = {"study": self.kind, "by": self.by, "table": self.table.to_dict("records"),
               "table_csv": str(self.table_csv), "summary": self.summary.to_dict("records"),
               "finding": self.headline}
        if self.differences is not None:
            rec["versions"] = self.versions.to_dict("records")
            rec["differences"] = self.differences.to_dict("records")
        rec["figure"] = self.figure
        rec["failed"] = self.failures()
        return rec


def run(kind: str, entry, *, threads=(1, 2), coretypes=None, optimizers=None,
        kernelspecs=None, repeats: int | None = None, out_dir=None,
        options: RunOptions | None = None, **changes) -> StudyResult:
    """Run one study of ``entry`` and summarise it.

    Each run is ``notebooks/audit.ipynb`` in its own process and Jupyter
    kernel (:func:`qencode_nb.batch.study_jobs.run_jobs`).

    Args:
        kind: "threads" (vary the BLAS thread count), "kernels" (vary the
            OpenBLAS CPU kernel, ``OPENBLAS_CORETYPE``),
            "optimizers" (replace the recorded optimiser of a hea/uccsd
            entry) or "environments" (Jupyter kernelspecs with other package
            stacks).
        entry: entry file (QEncode JSON or params YAML) or bundled name.
        threads: BLAS thread counts of a threads study.
        coretypes: OpenBLAS coretypes of a kernels study (None: every one
            this CPU can run).
        optimizers: optimisers of an optimizers study (None:
            :data:`~qencode_nb.studies.optimizers.DEFAULT_OPTIMIZERS`).
        kernelspecs: kernelspecs of an environments study, the first the
            baseline (None: ``python3`` and every ``qencode-nb-*`` stack).
        repeats: runs per group (None: the study's default, 3 for threads,
            1 for the others).
        out_dir: folder for notebooks, ``<kind>.csv`` and the figure
            (None: ``runs/<kind>``).
        options: how every run runs (:class:`~qencode_nb.options.RunOptions`;
            default: mode "rerun"): ``mode`` ("rerun" or "full"), ``db`` (completing
            a bundled entry), ``blas_threads`` (every run of a kernels, optimizers or
            environments study; a threads study varies it), ``blas_coretype``
            (every run of a threads, optimizers or environments study; a kernels
            study varies it), ``engine`` (None: the
            recorded backend; "sector", "fast"; not accepted by an optimizers
            study), ``stack``, ``proof_budget``, ``workers`` or ``scheduler``,
            ``timeout`` (per run, s), ``cell_timeout`` (per cell, s), ``progress``,
            ``plot``; the parameters of each run from
            :func:`qencode_nb.batch.run_spec.notebook_parameters`.
        **changes: fields of ``options`` replaced, the keyword form of the
            notebooks (``mode="full", blas_threads=2``).

    Raises:
        ParameterError: an unknown kind (lists the accepted ones), an engine
            for an optimizers study, and every error of the study itself
            (:func:`~qencode_nb.studies.blas.threads_study`,
            :func:`~qencode_nb.studies.blas.kernels_study`,
            :func:`~qencode_nb.studies.optimizers.optimizers_study`,
            :func:`~qencode_nb.studies.environments.environments_study`), all
            raised before any run.
        TypeError: a keyword that is not a :class:`~qencode_nb.options.RunOptions`
            field.
    """
    from qencode_nb.readout.environment_tables import environment_finding
    from qencode_nb.readout.summaries import finding, summarise
    from qencode_nb.studies.blas import kernels_study, threads_study
    from qencode_nb.studies.environments import environments_study
    from qencode_nb.studies.optimizers import DEFAULT_OPTIMIZERS, optimizers_study

    opts = with_changes(options, changes, mode="rerun")
    if kind not in STUDY_KINDS:
        raise ParameterError(f"study {kind!r} is not accepted; accepted: "
                             + ", ".join(STUDY_KINDS))
    out = Path(out_dir if out_dir is not None else f"runs/{kind}")
    common = {"out_dir": out, "options": opts}
    if repeats is not None:
        common["repeats"] = repeats
    if kind == "threads":
        table = threads_study(entry, threads, **common)
    elif kind == "kernels":
        table = kernels_study(entry, coretypes, **common)
    elif kind == "optimizers":
        table = optimizers_study(entry, DEFAULT_OPTIMIZERS if optimizers is None else optimizers,
                                 **common)
    else:
        table = environments_study(entry, kernelspecs, **common)
    by = STUDY_GROUPS[kind]
    summary = summarise(table, by)
    extra = {}
    if kind == "environments":
        import pandas as pd

        extra["versions"] = pd.DataFrame(table.attrs["versions"])
        extra["differences"] = pd.DataFrame(table.attrs["differences"])
        extra["environment_finding"] = environment_finding(extra["differences"])
    return StudyResult(kind=kind, by=by, out_dir=out, table=table, summary=summary,
                       finding=finding(summary, by), **extra)
