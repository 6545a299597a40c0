"""One study's runs: audit.ipynb once per job, each in its own process and Jupyter kernel.

A study (:mod:`qencode_nb.studies.blas`, :mod:`~qencode_nb.studies.optimizers`,
:mod:`~qencode_nb.studies.environments`) re-runs one entry as a list of jobs
``(group value, repeat, run name, extra audit.ipynb parameters)``.
:func:`run_jobs` checks the inputs every study shares (mode, engine, timeout,
entry), sends the jobs through the sweep's local process pool
(:func:`qencode_nb.studies.sweep.run_local`, each job
:func:`~qencode_nb.studies.sweep.run_one`: its own process, kernel and pins)
and returns one row per job, in job order, read by :func:`run_row` from the
run's records (never from cell indices).  :func:`write_table` writes a
study's ``<kind>.csv`` and its figure.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.errors import EntryError, ParameterError
from qencode_nb.notebook.stages import failure_line

#: Audit modes that re-run the optimiser (a study compares re-run energies).
STUDY_MODES = ("rerun", "full")

#: The audit records :func:`run_row` reads (names of
#: :data:`qencode_nb.verdict.records.AUDIT_RECORDS`, plus ``error``; checked
#: against that list by tests/test_studies.py).
READ_RECORDS = ("done", "error", "rerun_energy", "provenance", "tiers", "published_error_mha",
                "blas_threads", "rerun", "error_mha", "threshold_mha")


def check_repeats(repeats) -> int:
    """``repeats`` itself when it is an int >= 1.

    Raises:
        ParameterError: anything else (a bool included).
    """
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ParameterError(f"repeats {repeats!r} is not accepted; accepted: an integer >= 1")
    return repeats


def entry_stem(entry) -> str:
    """The file stem that names a study's runs: ``<entry-stem>__<group>__r<repeat>``."""
    return Path(str(entry)).stem


def run_row(out: Path, outcome: dict) -> dict:
    """The measured values of one executed audit notebook (records, not cell indices).

    Args:
        out: the study folder holding ``<outcome["name"]>.ipynb``.
        outcome: :func:`qencode_nb.studies.sweep.run_one`'s result for the run.

    Returns:
        ``{"kernelspec", "python", "packages", "blas", "bit_identical",
        "published_error_mha", "measured_threads", "engine", "kernel",
        "energy", "energy_hex", "error_mha", "nfev", "seconds", "status",
        "failure", "notebook", "threshold_mha", "optimizer_used"}``: energy
        the ``rerun_energy`` record (Ha) and its ``float.hex()``, errors in
        mHa, ``seconds`` the run's wall time, ``measured_threads`` the
        ``blas_threads`` record (what threadpoolctl measured), ``kernel`` the
        OpenBLAS CPU kernels (architectures) threadpoolctl reported, joined by
        ",".  ``status`` is "done" only when the run recorded ``done`` and
        the runner saw no failure; else "failed" with the reason.
    """
    from qencode_nb.notebook.record import read_records

    nb = out / f"{outcome['name']}.ipynb"
    try:
        r = read_records(nb)
    except (OSError, ValueError):
        r = {}
    failure = outcome.get("failure")
    if r.get("done") is not True and not failure:
        err = r.get("error")
        failure = failure_line(err) if err else "the notebook has no done record"
    energy = r.get("rerun_energy")
    energy = float(energy) if isinstance(energy, (int, float)) else None
    prov = r.get("provenance") or {}
    pools = (prov.get("blas") or {}).get("pools") or []
    blas_kernels = sorted({str(p.get("architecture")) for p in pools
                           if p.get("library") == "openblas"})
    config = (r.get("rerun") or {}).get("config") or {}
    return {
        "kernelspec": outcome.get("kernelspec") or "python3",
        "python": prov.get("python"),
        "packages": prov.get("packages") or prov.get("installed") or {},
        "blas": ";".join(sorted({f"{p.get('library')} {p.get('version')} {p.get('architecture')}"
                                 for p in pools})) or None,
        "bit_identical": ((r.get("tiers") or {}).get("bit_identical") or {}).get("status"),
        "published_error_mha": r.get("published_error_mha"),
        "measured_threads": r.get("blas_threads"),
        "engine": config.get("backend"),
        "kernel": ",".join(blas_kernels) or None,
        "energy": energy,
        "energy_hex": energy.hex() if energy is not None else None,
        "error_mha": r.get("error_mha"),
        "nfev": (r.get("rerun") or {}).get("nfev"),
        "seconds": outcome.get("seconds"),
        "status": "done" if r.get("done") is True and not failure else "failed",
        "failure": failure,
        "notebook": str(nb),
        "threshold_mha": r.get("threshold_mha"),
        "optimizer_used": config.get("optimizer"),
    }


def run_jobs(entry, jobs, out_dir, *, mode, db, workers, progress, timeout, desc,
             engine=None, kernelspecs=None) -> list[dict]:
    """Run a study's jobs; one :func:`run_row` per job, in job order.

    Args:
        entry: entry file or bundled name (not a folder).
        jobs: ``[(group value, repeat, run name, extra audit.ipynb parameters)]``.
        out_dir: folder for the executed notebooks (created).
        mode: "rerun" or "full" (:data:`STUDY_MODES`).
        db: folder of QEncode JSON files completing a bundled entry, or None.
        workers: local processes, each running one notebook (own kernel) at a time.
        progress: show a progress bar titled ``desc`` on stderr
            (:func:`qencode_nb.studies.progress_bar.progress_bar`; in a kernel too).
        timeout: per-run wall-clock limit in seconds, or None.
        engine: audit.ipynb ``engine`` (None: the recorded backend; "sector").
        kernelspecs: ``{run name: Jupyter kernelspec}`` (default the notebook's).

    Raises:
        ParameterError: ``mode`` "replay", ``timeout`` <= 0.
        EntryError: an unknown mode or engine, an entry that does not exist
            or is a folder.
    """
    from qencode_nb.studies.progress_bar import advance, progress_bar
    from qencode_nb.studies.sweep import run_local
    from qencode_nb.engines.selection import check_engine
    from qencode_nb.notebook.parameters import check_mode

    check_mode(mode)
    engine = check_engine(engine)
    if mode not in STUDY_MODES:
        raise ParameterError(f"mode {mode!r} does not re-run the optimiser; accepted: "
                             + ", ".join(STUDY_MODES))
    if timeout is not None and not timeout > 0:
        raise ParameterError(f"timeout {timeout!r} is not accepted; accepted: seconds > 0 "
                             "or None")
    if Path(str(entry)).is_dir():
        raise EntryError(f"{entry!r} is a folder; accepted: one entry file or a bundled name",
                         field="entry")
    from qencode_nb.entry.lookup import check_reference

    target = check_reference(entry)   # a typo: "did you mean ...", nothing written
    from qencode_nb.studies.run_folder import writable_folder

    out = writable_folder(Path(out_dir).resolve())   # before any run, naming the folder
    base = {"entry": target, "mode": mode}
    if engine is not None:
        base["engine"] = engine
    if db is not None:
        base["db"] = str(Path(db).resolve())
    todo = [(target, str(out), {**base, **extra}, timeout, None, name,
             (kernelspecs or {}).get(name)) for _, _, name, extra in jobs]
    outcomes = {}
    with progress_bar(len(todo), desc, "run", enabled=progress) as bar:
        for outcome in run_local(todo, workers, lambda job: job):
            outcomes[outcome["name"]] = outcome
            advance(bar, f"{outcome['name'][-16:]} {outcome['status']}")
    return [run_row(out, outcomes[name]) for _, _, name, _ in jobs]


def write_table(table, kind: str, out: Path, plot: bool) -> None:
    """``<out>/<kind>.csv`` and, with ``plot``, the figure ``<out>/<kind>.{png,svg}``
    (:func:`qencode_nb.studies.plots.study_plot`)."""
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / f"{kind}.csv", index=False)
    if plot and len(table):
        from qencode_nb.studies.plots import study_plot

        study_plot(table, kind, out / kind)
