"""Threading, BLAS-kernel, optimiser and environment studies: one entry re-run many times,
then summarised.

Each run is ``notebooks/audit.ipynb`` in its own process and Jupyter kernel
(:func:`qencode_nb.studies.sweep.run_one`), pinned at launch, so a study compares
whole re-runs, never runs sharing one process.  :func:`threads_study` varies
the BLAS thread count, :func:`kernels_study` the OpenBLAS kernel
(``OPENBLAS_CORETYPE``) at one thread, :func:`optimizers_study` the optimiser
(audit.ipynb's ``optimizer`` override) at a fixed thread count,
:func:`environments_study` the Jupyter kernel, i.e. the package stack
(:mod:`qencode_nb.studies.stacks`), at a fixed thread count.  Each returns
a table with one row per run (energies in Ha, also as ``float.hex()`` so bit
differences are visible; errors in mHa; wall time in s) and writes it as CSV
beside the executed notebooks, with its figure.  :func:`summarise` counts
distinct energies per group (and the median nfev and time) and
:func:`finding` states the result in one sentence from those numbers.
"""

from __future__ import annotations

import math
from pathlib import Path

from qencode_nb.errors import EntryError, ParameterError

#: Audit modes that re-run the optimiser (a study compares re-run energies).
STUDY_MODES = ("rerun", "full")

#: Columns of :func:`threads_study`'s table (energy in Ha, error in mHa, seconds wall).
#: ``threshold_mha`` is the entry's certification threshold (for the figure).
THREADS_COLUMNS = ("threads", "repeat", "measured_threads", "engine", "energy", "energy_hex",
                   "error_mha", "nfev", "seconds", "status", "failure", "notebook",
                   "threshold_mha")

#: Columns of :func:`kernels_study`'s table: ``coretype`` is the requested
#: ``OPENBLAS_CORETYPE``, ``kernel`` the architectures threadpoolctl reports for
#: the loaded OpenBLAS copies (a build maps a coretype to the nearest kernel it has).
KERNELS_COLUMNS = ("coretype", "kernel", "repeat", "measured_threads", "engine", "energy",
                   "energy_hex", "error_mha", "nfev", "seconds", "status", "failure",
                   "notebook", "threshold_mha")

#: Columns of :func:`optimizers_study`'s table: ``optimizer`` as requested
#: (e.g. "Adam(lr=0.05)"); ``nfev`` is QEncode's count for that optimiser.
OPTIMIZERS_COLUMNS = ("optimizer", "repeat", "measured_threads", "engine", "energy", "energy_hex",
                      "error_mha", "nfev", "seconds", "status", "failure", "notebook",
                      "threshold_mha")

#: The optimisers an optimiser study compares by default (audit.ipynb's
#: ``optimizer`` vocabulary; Adam's learning rate as QEncode writes it).
DEFAULT_OPTIMIZERS = ("COBYLA", "L-BFGS-B", "Adam(lr=0.05)")

#: Columns of :func:`summarise` after the group column.
SUMMARY_COLUMNS = ("n", "n_failed", "n_distinct_energies", "energies_hex", "min_energy",
                   "max_energy", "min_error_mha", "median_error_mha", "max_error_mha",
                   "spread_mha", "median_nfev", "median_seconds")


def _check_repeats(repeats) -> int:
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ParameterError(f"repeats {repeats!r} is not accepted; accepted: an integer >= 1")
    return repeats


def _run_row(out: Path, outcome: dict) -> dict:
    """The measured values of one executed audit notebook (records, not cell indices)."""
    from qencode_nb.notebook.record import read_records

    nb = out / f"{outcome['name']}.ipynb"
    try:
        r = read_records(nb)
    except (OSError, ValueError):
        r = {}
    failure = outcome.get("failure")
    if r.get("done") is not True and not failure:
        err = r.get("error")
        failure = (f"{err['stage']}: {err['type']}: {err['message']}" if err
                   else "the notebook has no done record")
    energy = r.get("rerun_energy")
    energy = float(energy) if isinstance(energy, (int, float)) else None
    prov = r.get("provenance") or {}
    pools = (prov.get("blas") or {}).get("pools") or []
    arch = sorted({str(p.get("architecture")) for p in pools if p.get("library") == "openblas"})
    return {
        "kernelspec": outcome.get("kernelspec") or "python3",
        "python": prov.get("python"),
        "packages": prov.get("packages") or prov.get("installed") or {},
        "blas": ";".join(sorted({f"{p.get('library')} {p.get('version')} {p.get('architecture')}"
                                 for p in pools})) or None,
        "bit_identical": ((r.get("tiers") or {}).get("bit_identical") or {}).get("status"),
        "published_error_mha": r.get("published_error_mha"),
        "measured_threads": r.get("blas_threads"),
        "engine": ((r.get("rerun") or {}).get("config") or {}).get("backend"),
        "kernel": ",".join(arch) or None,
        "energy": energy,
        "energy_hex": energy.hex() if energy is not None else None,
        "error_mha": r.get("error_mha"),
        "nfev": (r.get("rerun") or {}).get("nfev"),
        "seconds": outcome.get("seconds"),
        "status": "done" if r.get("done") is True and not failure else "failed",
        "failure": failure,
        "notebook": str(nb),
        "threshold_mha": r.get("threshold_mha"),
        "optimizer_used": ((r.get("rerun") or {}).get("config") or {}).get("optimizer"),
    }


def _run_study(entry, jobs, out_dir, *, mode, db, workers, progress, timeout, desc,
               engine=None, kernelspecs=None):
    """Run ``jobs`` = [(group value, repeat, name, extra parameters)]; rows in job order.
    ``kernelspecs`` maps a run name to the Jupyter kernelspec it runs in (default the
    notebook's)."""
    from tqdm.auto import tqdm

    from qencode_nb.verdict.audit import check_engine, check_mode
    from qencode_nb.studies.sweep import _local, resolve_targets

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
    try:
        (target,) = resolve_targets([entry])
    except EntryError as exc:
        raise EntryError(exc.message, field="entry") from None
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    base = {"entry": target, "mode": mode}
    if engine is not None:
        base["engine"] = engine
    if db is not None:
        base["db"] = str(Path(db).resolve())
    todo = [(target, str(out), {**base, **extra}, timeout, None, name,
             (kernelspecs or {}).get(name)) for _, _, name, extra in jobs]
    outcomes = {}
    with tqdm(total=len(todo), disable=not progress, desc=desc, unit="run") as bar:
        for outcome in _local(todo, workers, lambda job: job):
            outcomes[outcome["name"]] = outcome
            bar.update(1)
            bar.set_postfix_str(f"{outcome['name'][-16:]} {outcome['status']}")
    return [_run_row(out, outcomes[name]) for _, _, name, _ in jobs]


def threads_study(entry, threads=(1, 2), repeats: int = 3, out_dir="runs/threads", *,
                  mode: str = "rerun", db=None, workers: int = 1, progress: bool = True,
                  coretype: str | None = None, timeout: float | None = None,
                  plot: bool = True, engine: str | None = None):
    """Re-run one entry ``repeats`` times at each BLAS thread count.

    Every run is audit.ipynb in its own process and kernel with the parameters
    ``{"entry", "blas_threads": t, "mode"}`` (plus ``db``, ``blas_coretype``),
    named ``<entry-stem>__t{t}__r{repeat}`` in ``out_dir``.  Every run is
    executed afresh (a study measures; nothing is resumed).

    Args:
        entry: entry file (QEncode JSON or params YAML) or bundled name.
        threads: requested BLAS thread counts (ints >= 1), e.g. ``(1, 2, 4)``.
        repeats: runs per thread count (int >= 1).
        out_dir: folder for the executed notebooks, ``threads.csv`` and the
            figure ``threads.png`` / ``threads.svg``.
        mode: audit mode; "rerun" (default) or "full" re-run the optimiser.
        db: folder of QEncode JSON files completing a bundled entry.
        workers: runs executed at the same time (each its own process).
        progress: show a tqdm progress bar (outside the kernels).
        coretype: optional ``OPENBLAS_CORETYPE`` for every run.
        timeout: per-run wall-clock limit in seconds (None: none).
        plot: write the figure (:func:`qencode_nb.studies.plots.distribution_plot`).
        engine: audit.ipynb ``engine``: None (the recorded backend) or
            "sector" (the fast sector engine where the entry maps; the
            ``engine`` column says what ran).

    Returns:
        DataFrame with :data:`THREADS_COLUMNS`, one row per run ordered by
        threads then repeat: ``measured_threads`` is the ``blas_threads``
        record (what threadpoolctl measured), ``energy`` the ``rerun_energy``
        record (Ha) and ``energy_hex`` its ``float.hex()``, ``error_mha``
        |E - E_exact| in mHa, ``nfev`` the re-run's energy evaluations,
        ``seconds`` wall time; a failed run has ``status`` "failed" and the
        reason in ``failure``.

    Raises:
        PinError: a thread count that is not an int >= 1, or an unknown or
            unrunnable coretype (lists the accepted ones).
        ParameterError: ``repeats`` < 1, no thread count, ``mode``
            "replay" (no re-run energy to compare), ``timeout`` <= 0.
        EntryError: an entry that does not exist or is a folder, an unknown mode.
    """
    import pandas as pd

    from qencode_nb.notebook.pins import check_coretype, check_thread_count

    threads = [check_thread_count(t) for t in ([threads] if isinstance(threads, int)
                                               else list(threads))]
    if not threads:
        raise ParameterError("threads is empty; accepted: one or more integers >= 1")
    repeats = _check_repeats(repeats)
    extra = {"blas_coretype": check_coretype(coretype)} if coretype else {}
    stem = Path(str(entry)).stem
    jobs = [(t, r, f"{stem}__t{t}__r{r}", {"blas_threads": t, **extra})
            for t in dict.fromkeys(threads) for r in range(repeats)]
    rows = _run_study(entry, jobs, out_dir, mode=mode, db=db, workers=workers,
                      progress=progress, timeout=timeout, desc="threads study", engine=engine)
    table = pd.DataFrame([{"threads": t, "repeat": r, **row}
                          for (t, r, _, _), row in zip(jobs, rows)],
                         columns=list(THREADS_COLUMNS))
    _write(table, "threads", Path(out_dir), plot)
    return table


def kernels_study(entry, coretypes=None, repeats: int = 1, out_dir="runs/kernels", *,
                  mode: str = "rerun", db=None, workers: int = 1, progress: bool = True,
                  timeout: float | None = None, plot: bool = True, engine: str | None = None):
    """Re-run one entry at 1 BLAS thread under each OpenBLAS kernel.

    Each run is audit.ipynb in its own process and kernel with
    ``{"entry", "blas_threads": 1, "blas_coretype": c, "mode"}``, named
    ``<entry-stem>__{c}__r{repeat}``; OpenBLAS reads ``OPENBLAS_CORETYPE``
    when it loads, so only a fresh process can change the kernel.

    Args:
        entry: entry file or bundled name.
        coretypes: ``OPENBLAS_CORETYPE`` names (case-insensitive); default
            every kernel this CPU can run
            (:func:`qencode_nb.notebook.pins.runnable_coretypes`).
        repeats: runs per coretype (int >= 1).
        out_dir: folder for the notebooks, ``kernels.csv`` and
            ``kernels.png`` / ``kernels.svg``.
        mode, db, workers, progress, timeout, plot, engine: as :func:`threads_study`.

    Returns:
        DataFrame with :data:`KERNELS_COLUMNS`, one row per run ordered by
        coretype (as given) then repeat; ``kernel`` is what threadpoolctl
        reports for the loaded OpenBLAS copies.

    Raises:
        PinError: an unknown coretype (lists the accepted names) or one this
            CPU cannot run (lists the ones it can); no runnable coretype.
        ParameterError: ``repeats`` < 1, ``mode`` "replay", ``timeout`` <= 0.
        EntryError: an entry that does not exist or is a folder, an unknown mode.
    """
    import pandas as pd

    from qencode_nb.errors import PinError
    from qencode_nb.notebook.pins import check_coretype, runnable_coretypes

    if coretypes is None:
        coretypes = runnable_coretypes()
        if not coretypes:
            raise PinError("this CPU can run no known OpenBLAS coretype; pass coretypes")
    elif isinstance(coretypes, str):
        coretypes = [coretypes]
    coretypes = list(dict.fromkeys(check_coretype(c) for c in coretypes))
    if not coretypes:
        raise ParameterError("coretypes is empty; accepted: one or more OpenBLAS coretypes")
    repeats = _check_repeats(repeats)
    stem = Path(str(entry)).stem
    jobs = [(c, r, f"{stem}__{c}__r{r}", {"blas_threads": 1, "blas_coretype": c})
            for c in coretypes for r in range(repeats)]
    rows = _run_study(entry, jobs, out_dir, mode=mode, db=db, workers=workers,
                      progress=progress, timeout=timeout, desc="kernels study", engine=engine)
    table = pd.DataFrame([{"coretype": c, "repeat": r, **row}
                          for (c, r, _, _), row in zip(jobs, rows)],
                         columns=list(KERNELS_COLUMNS))
    _write(table, "kernels", Path(out_dir), plot)
    return table


def _optimizer_slug(name: str) -> str:
    """File-name form of an optimiser string: "Adam(lr=0.05)" -> "adam-lr-0.05"."""
    import re

    return re.sub(r"[^a-z0-9.]+", "-", name.lower()).strip("-")


def _check_optimizers(optimizers) -> list[tuple[str, object]]:
    """``[(as given, parsed Optimizer)]``, first spelling kept for repeats of one optimiser.

    Raises:
        ParameterError: empty, or an ADAPT optimiser (no override exists for it).
        EntryError: a name outside the vocabulary (lists the accepted ones).
    """
    from qencode_nb.entry import vocabulary

    names = [optimizers] if isinstance(optimizers, str) else list(optimizers or ())
    if not names:
        raise ParameterError("optimizers is empty; accepted: one or more of "
                             + ", ".join(DEFAULT_OPTIMIZERS))
    chosen = {}
    for name in names:
        parsed = vocabulary.optimizer(name, "optimizer")
        if parsed.name == "adapt":
            raise ParameterError(f"optimizer {name!r} is not accepted; accepted: COBYLA, "
                                 "L-BFGS-B, Adam(lr=<float>)")
        chosen.setdefault(parsed, str(name))
    return [(name, parsed) for parsed, name in chosen.items()]


def optimizers_study(entry, optimizers=DEFAULT_OPTIMIZERS, repeats: int = 1,
                     out_dir="runs/optimizers", *, mode: str = "rerun", db=None,
                     blas_threads: int = 1, workers: int = 1, progress: bool = True,
                     coretype: str | None = None, timeout: float | None = None,
                     plot: bool = True):
    """Re-run one hea or uccsd entry with each optimiser, at a fixed BLAS thread count.

    Each run is audit.ipynb in its own process and kernel with
    ``{"entry", "blas_threads", "mode", "optimizer": o}`` (plus ``db``,
    ``blas_coretype``), named ``<entry-stem>__<optimiser slug>__r{repeat}``
    (slug: "cobyla", "l-bfgs-b", "adam-lr-0.05").  The override replaces
    only the optimiser: the recorded iteration cap, restarts, seed, early
    stop and backend stay, and tier 1 of each run reports the deviation.
    At a fixed thread count the runs are deterministic: repeats of one
    optimiser give the same energy bit for bit.

    Args:
        entry: entry file or bundled name (not an ADAPT entry).
        optimizers: audit.ipynb ``optimizer`` values (case-insensitive):
            "COBYLA", "L-BFGS-B", "Adam(lr=<float>)" (Adam without a rate
            uses 0.05); repeats of one optimiser are run once.
        repeats: runs per optimiser (int >= 1).
        out_dir: folder for the notebooks, ``optimizers.csv`` and the figure
            ``optimizers.png`` / ``optimizers.svg``
            (:func:`qencode_nb.studies.plots.optimizer_plot`).
        blas_threads: BLAS threads of every run (int >= 1; default 1).
        mode, db, workers, progress, coretype, timeout, plot: as
            :func:`threads_study`.

    Returns:
        DataFrame with :data:`OPTIMIZERS_COLUMNS`, one row per run ordered by
        optimiser (as given) then repeat: ``energy`` (Ha) and ``energy_hex``,
        ``error_mha`` |E - E_exact| in mHa, ``nfev`` the ``rerun.nfev``
        record (QEncode's count: COBYLA energy evaluations, L-BFGS-B steps x
        (1 + 2 x parameters), Adam steps), ``seconds`` the run's wall time
        (kernel start, Hamiltonian and re-run).  A run whose
        ``rerun.config.optimizer`` record is not the one asked for is marked
        failed.

    Raises:
        ParameterError: no optimiser or an ADAPT one, ``repeats`` < 1,
            ``mode`` "replay", ``timeout`` <= 0.
        EntryError: an unknown optimiser name (lists the accepted ones), an
            ADAPT entry (it refuses an override), an entry that does not
            exist or is a folder.
        PinError: ``blas_threads`` not an int >= 1, an unknown or unrunnable
            coretype.
    """
    import pandas as pd

    from qencode_nb.entry.model import load
    from qencode_nb.notebook.pins import check_coretype, check_thread_count

    chosen = _check_optimizers(optimizers)
    repeats = _check_repeats(repeats)
    extra = {"blas_threads": check_thread_count(blas_threads)}
    if coretype:
        extra["blas_coretype"] = check_coretype(coretype)
    if not Path(str(entry)).is_dir() and load(entry, db).ansatz == "adapt":
        raise EntryError(f"{entry!r} is an ADAPT entry, which refuses an optimiser "
                         "override; accepted: a hea or uccsd entry", field="entry")
    stem = Path(str(entry)).stem
    jobs = [(name, r, f"{stem}__{_optimizer_slug(name)}__r{r}", {**extra, "optimizer": name})
            for name, _ in chosen for r in range(repeats)]
    rows = _run_study(entry, jobs, out_dir, mode=mode, db=db, workers=workers,
                      progress=progress, timeout=timeout, desc="optimizers study")
    wanted = {name: parsed.name for name, parsed in chosen}
    for (name, _, _, _), row in zip(jobs, rows):
        used = row["optimizer_used"]
        if row["status"] == "done" and used != wanted[name]:
            row["status"] = "failed"
            row["failure"] = f"the re-run used optimizer {used!r}, not {wanted[name]!r}"
    table = pd.DataFrame([{"optimizer": name, "repeat": r, **row}
                          for (name, r, _, _), row in zip(jobs, rows)],
                         columns=list(OPTIMIZERS_COLUMNS))
    _write(table, "optimizers", Path(out_dir), plot)
    return table


#: Columns of :func:`environments_study`'s table: ``kernelspec`` the Jupyter
#: kernelspec (one package stack each), then the versions the kernel itself
#: recorded (``provenance`` record) of :data:`STACK_PACKAGES`, ``python`` and
#: the BLAS pools; ``bit_identical`` is the run's tier-3 status.
ENVIRONMENTS_COLUMNS = ("kernelspec", "repeat", "python", "numpy", "scipy", "pennylane", "pyscf",
                        "openfermion", "blas", "measured_threads", "engine", "energy",
                        "energy_hex", "error_mha", "published_error_mha", "nfev", "seconds",
                        "bit_identical", "status", "failure", "notebook", "threshold_mha")

#: The packages shown as columns of an environment table (QEncode v4's pins,
#: requirements-v4.txt); every other package that differs is in the versions table.
STACK_PACKAGES = ("numpy", "scipy", "pennylane", "pyscf", "openfermion")

#: The row of :func:`version_table` holding the BLAS pools each kernel loaded
#: (library, version and CPU kernel as threadpoolctl reports them).
VERSION_BLAS = "BLAS (threadpoolctl)"

#: Installer tools every venv carries in its own version; left out of the
#: version comparison (they do not compute anything an audit reports).
INSTALLER_PACKAGES = ("pip", "setuptools", "wheel")

#: Columns of :func:`environment_differences` (energies in Ha, errors in mHa).
DIFFERENCE_COLUMNS = ("kernelspec", "baseline", "n_packages_differing", "packages_differing",
                      "n_packages_one_side", "packages_one_side", "energy_baseline", "energy", "delta_energy_ha", "ulps",
                      "error_baseline_mha", "error_mha", "delta_error_mha", "identical")


def default_kernelspecs() -> list[str]:
    """``python3`` (this environment) then every registered ``qencode-nb-*`` stack kernel."""
    from qencode_nb.studies.stacks import KERNEL_PREFIX, available_kernelspecs

    return ["python3", *sorted(k for k in available_kernelspecs() if k.startswith(KERNEL_PREFIX))]


def environments_study(entry, kernelspecs=None, repeats: int = 1, out_dir="runs/environments", *,
                       mode: str = "rerun", db=None, blas_threads: int = 1,
                       coretype: str | None = None, workers: int = 1, progress: bool = True,
                       timeout: float | None = None, plot: bool = True,
                       engine: str | None = None):
    """Re-run one entry in two or more Jupyter kernels with different package stacks.

    Each run is audit.ipynb driven from this environment through the pinned
    papermill engine, its kernel the given kernelspec (a stack made by
    :func:`qencode_nb.studies.stacks.create_stack`, or ``python3``, this
    environment), with ``{"entry", "blas_threads", "mode"}`` (plus ``db``,
    ``blas_coretype``, ``engine``), named ``<entry-stem>__<kernel>__r{repeat}``.
    Threads and kernel are pinned alike in every stack, so what differs is the
    packages (QEncode's reports: once threads were pinned, H6 ADAPT agreed to 7
    decimals across two stacks).

    Args:
        entry: entry file or bundled name.
        kernelspecs: Jupyter kernelspec names, the first one the baseline
            (default :func:`default_kernelspecs`); two or more.
        repeats: runs per kernel (int >= 1).
        out_dir: folder for the notebooks, ``environments.csv``,
            ``environments_versions.csv`` (:func:`version_table`),
            ``environments_differences.csv`` (:func:`environment_differences`)
            and the figure ``environments.png`` / ``.svg``.
        blas_threads: BLAS threads of every run (default 1).
        mode, db, workers, progress, coretype, timeout, plot, engine: as
            :func:`threads_study`.

    Returns:
        DataFrame with :data:`ENVIRONMENTS_COLUMNS`, one row per run ordered
        by kernel (as given) then repeat; the versions are the ones the
        kernel recorded, not the ones asked for.  ``table.attrs["versions"]``
        and ``table.attrs["differences"]`` hold the two other tables as
        lists of row dicts (``pd.DataFrame(...)`` restores them).

    Raises:
        ParameterError: fewer than two kernels, a kernel Jupyter does not
            find (lists the ones it finds), ``repeats`` < 1, ``mode``
            "replay", ``timeout`` <= 0.
        PinError: ``blas_threads`` not an int >= 1, an unknown or unrunnable
            coretype.
        EntryError: an entry that does not exist or is a folder.
    """
    import pandas as pd

    from qencode_nb.studies.stacks import check_kernelspecs
    from qencode_nb.notebook.pins import check_coretype, check_thread_count

    kernelspecs = check_kernelspecs(default_kernelspecs() if kernelspecs is None
                                    else kernelspecs)
    repeats = _check_repeats(repeats)
    extra = {"blas_threads": check_thread_count(blas_threads)}
    if coretype:
        extra["blas_coretype"] = check_coretype(coretype)
    stem = Path(str(entry)).stem
    jobs = [(k, r, f"{stem}__{k}__r{r}", extra) for k in kernelspecs for r in range(repeats)]
    rows = _run_study(entry, jobs, out_dir, mode=mode, db=db, workers=workers,
                      progress=progress, timeout=timeout, desc="environments study",
                      engine=engine, kernelspecs={name: k for k, _, name, _ in jobs})
    for (k, _, _, _), row in zip(jobs, rows):
        row["kernelspec"] = k
        for pkg in STACK_PACKAGES:
            row[pkg] = _version_of(row["packages"], pkg)
    table = pd.DataFrame([{"repeat": r, **row} for (_, r, _, _), row in zip(jobs, rows)])
    versions = version_table(table)
    table = table[list(ENVIRONMENTS_COLUMNS)].copy()
    differences = environment_differences(table, versions)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    versions.to_csv(out / "environments_versions.csv", index=False)
    differences.to_csv(out / "environments_differences.csv", index=False)
    _write(table, "environments", out, plot)
    table.attrs.update(versions=versions.to_dict("records"),
                       differences=differences.to_dict("records"))
    return table


def _version_of(packages: dict, name: str):
    """Version of distribution ``name`` in a ``{name: version}`` map (names compared
    the PEP 503 way: case, "-", "_" and "." alike), or None."""
    import re

    norm = re.compile(r"[-_.]+")
    want = norm.sub("-", name).lower()
    for key, version in (packages or {}).items():
        if norm.sub("-", str(key)).lower() == want:
            return version
    return None


def version_table(table):
    """Package versions per kernel, from the ``provenance`` each kernel recorded.

    Args:
        table: an environment table whose rows carry ``kernelspec``, ``status``
            and ``packages`` ({distribution: version} of the run).

    Returns:
        DataFrame with ``package``, one column per kernel (in order of first
        appearance; the first completed run of each kernel) and ``differs``
        (bool): every package whose version differs between the kernels, then
        those installed in some kernels only (:data:`INSTALLER_PACKAGES` left
        out), then the :data:`STACK_PACKAGES`
        that do not, plus a ``python`` row and a :data:`VERSION_BLAS` row (the
        BLAS pools threadpoolctl saw: library, version, kernel).  A package a
        kernel lacks is None there; a kernel whose run recorded no
        provenance (it failed first) has None everywhere and is left out of
        ``differs``.
    """
    import pandas as pd

    kernels = list(dict.fromkeys(table["kernelspec"]))
    per, known = {}, []
    for k in kernels:
        done = table[(table["kernelspec"] == k) & (table["status"] == "done")]
        rows = done if len(done) else table[table["kernelspec"] == k]
        first = rows.iloc[0]
        packages = first.get("packages") or {}
        per[k] = {"python": first.get("python"), VERSION_BLAS: first.get("blas"), **packages}
        if packages:
            known.append(k)
    names = sorted({n for k in known for n in per[k]
                    if n not in ("python", VERSION_BLAS)
                    and n.lower() not in INSTALLER_PACKAGES}, key=str.lower)
    lines = []
    for name in ["python", VERSION_BLAS, *names]:
        vals = {k: (per[k].get(name) if name in ("python", VERSION_BLAS)
                    else _version_of(per[k], name)) if k in known else None
                for k in kernels}
        differs = len({vals[k] for k in known}) > 1
        if differs or name in ("python", VERSION_BLAS) or name.lower() in STACK_PACKAGES:
            lines.append({"package": name, **vals, "differs": differs})
    # Versions that differ first, then packages installed in some kernels only.
    lines.sort(key=lambda d: (not d["differs"], any(d[k] is None for k in known),
                              d["package"].lower()))
    return pd.DataFrame(lines, columns=["package", *kernels, "differs"])


def environment_differences(table, versions):
    """Each kernel against the first (the baseline): packages, energy and error.

    Args:
        table: :func:`environments_study`'s table.
        versions: :func:`version_table` of the same runs.

    Returns:
        DataFrame with :data:`DIFFERENCE_COLUMNS`, one row per kernel after
        the first: ``packages_differing`` as "scipy 1.13.1 -> 1.16.3; ..."
        (baseline -> kernel; installed on both sides), ``packages_one_side``
        those installed on one side only ("jupyterlab 4.6.6 -> -"), ``delta_energy_ha`` = E(kernel) - E(baseline)
        in Ha with ``ulps`` between them, ``delta_error_mha`` likewise in mHa,
        ``identical`` True when the energies are equal bit for bit.  The
        energy of a kernel is its first completed run; NaN/None when either
        side has none.
    """
    import pandas as pd

    from qencode_nb.verdict.audit import ulp_distance

    kernels = list(dict.fromkeys(table["kernelspec"]))

    def first(k):
        done = table[(table["kernelspec"] == k) & (table["status"] == "done")
                     & table["energy"].notna()]
        return done.iloc[0] if len(done) else None

    base = kernels[0]
    b = first(base)
    rows = []
    for k in kernels[1:]:
        unknown = [x for x in (base, k) if versions[x].isna().all()]
        if unknown:
            o = first(k)
            rows.append({"kernelspec": k, "baseline": base, "n_packages_differing": None,
                         "packages_differing": "unknown: no provenance recorded in "
                                               + " and ".join(unknown) + " (the run failed)",
                         "n_packages_one_side": None, "packages_one_side": "",
                         "energy_baseline": b["energy"] if b is not None else None,
                         "energy": o["energy"] if o is not None else None,
                         "delta_energy_ha": None, "ulps": None,
                         "error_baseline_mha": b["error_mha"] if b is not None else None,
                         "error_mha": o["error_mha"] if o is not None else None,
                         "delta_error_mha": None, "identical": None})
            continue
        present = versions[base].notna() & versions[k].notna()
        diff = versions[present & (versions[base] != versions[k])]
        pkgs = [f"{r['package']} {r[base]} -> {r[k]}" for _, r in diff.iterrows()]
        lone = versions[versions[base].isna() != versions[k].isna()]
        lone = [f"{r['package']} {r[base] if pd.notna(r[base]) else '-'} -> "
                f"{r[k] if pd.notna(r[k]) else '-'}" for _, r in lone.iterrows()]
        o = first(k)
        both = b is not None and o is not None
        rows.append({
            "kernelspec": k, "baseline": base, "n_packages_differing": len(pkgs),
            "packages_differing": "; ".join(pkgs), "n_packages_one_side": len(lone),
            "packages_one_side": "; ".join(lone),
            "energy_baseline": b["energy"] if b is not None else None,
            "energy": o["energy"] if o is not None else None,
            "delta_energy_ha": o["energy"] - b["energy"] if both else None,
            "ulps": ulp_distance(o["energy"], b["energy"]) if both else None,
            "error_baseline_mha": b["error_mha"] if b is not None else None,
            "error_mha": o["error_mha"] if o is not None else None,
            "delta_error_mha": o["error_mha"] - b["error_mha"] if both else None,
            "identical": bool(o["energy_hex"] == b["energy_hex"]) if both else None,
        })
    return pd.DataFrame(rows, columns=list(DIFFERENCE_COLUMNS))


def environment_finding(differences) -> str:
    """One sentence per kernel against the baseline, from :func:`environment_differences`.

    E.g. "qencode-nb-scipy116 vs python3 (2 versions differ: BLAS (threadpoolctl)
    ... -> ...; scipy 1.13.1 -> 1.16.3): energy differs by -5.184e-03 Ha (error
    8.993703 -> 3.810156 mHa)", or "qencode-nb-reference vs python3 (no version
    differs): the same energy bit for bit (-7.97477927367 Ha, error 8.993703 mHa)".
    The ulp count is given when it is below 1e6 (beyond that it says nothing
    a difference in Ha does not)."""
    import pandas as pd

    parts = []
    for _, d in differences.iterrows():
        if pd.isna(d["n_packages_differing"]):
            parts.append(f"{d['kernelspec']} vs {d['baseline']}: versions "
                         f"{d['packages_differing']}")
            continue
        n = int(d["n_packages_differing"])
        pk = ("no version differs" if n == 0 else
              f"{n} version{'s' if n > 1 else ''} differ{'s' if n == 1 else ''}: "
              + d["packages_differing"])
        lone = int(d.get("n_packages_one_side") or 0)
        if lone:
            pk += f"; {lone} package{'s' if lone > 1 else ''} installed on one side only"
        head = f"{d['kernelspec']} vs {d['baseline']} ({pk})"
        if pd.isna(d["identical"]) or pd.isna(d["delta_energy_ha"]):
            parts.append(f"{head}: no energy to compare (a run failed)")
        elif d["identical"]:
            parts.append(f"{head}: the same energy bit for bit ({d['energy']:.12g} Ha, "
                         f"error {d['error_mha']:.7g} mHa)")
        else:
            ulps = f"{int(d['ulps'])} ulps; " if d["ulps"] < 1e6 else ""
            parts.append(f"{head}: energy differs by {d['delta_energy_ha']:+.3e} Ha "
                         f"({ulps}error {d['error_baseline_mha']:.7g} -> "
                         f"{d['error_mha']:.7g} mHa)")
    return "; ".join(parts) if parts else "only one kernel: nothing to compare"


def _write(table, kind: str, out: Path, plot: bool) -> None:
    """``<out>/<kind>.csv`` and, with ``plot``, the figure ``<out>/<kind>.{png,svg}``."""
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / f"{kind}.csv", index=False)
    if plot and len(table):
        from qencode_nb.studies.plots import study_plot

        study_plot(table, kind, out / kind)


def summarise(table, by: str):
    """Per group of ``by``: how many runs, how many distinct energies, error range.

    Args:
        table: a study table (needs ``by``, ``status``, ``energy``,
            ``energy_hex``, ``error_mha``).
        by: the group column, "threads", "coretype", "optimizer" or "kernel".

    Returns:
        DataFrame with ``by`` then :data:`SUMMARY_COLUMNS`, one row per group in
        order of first appearance.  Only runs with status "done" and an energy
        count: ``n`` of them (``n_failed`` the others), ``n_distinct_energies``
        by ``energy_hex`` (bit for bit), ``energies_hex`` the distinct values
        joined by ";", ``min_energy`` / ``max_energy`` in Ha, min / median /
        max ``error_mha``, ``spread_mha`` = (max - min energy) * 1000,
        ``median_nfev`` and ``median_seconds`` (s; NaN when the table has no
        such column).  Values are NaN for a group with no completed run.

    Raises:
        KeyError: ``by`` or a needed column is not in the table.
    """
    import pandas as pd

    missing = [c for c in (by, "status", "energy", "energy_hex", "error_mha")
               if c not in table.columns]
    if missing:
        raise KeyError(f"study table lacks column(s) {', '.join(missing)}")
    rows = []
    for group, g in table.groupby(by, sort=False):
        ok = g[(g["status"] == "done") & g["energy"].notna()]
        energies = ok["energy"].astype(float)
        errors = ok["error_mha"].astype(float)
        hexes = list(dict.fromkeys(ok["energy_hex"]))
        nan = float("nan")
        rows.append({
            by: group, "n": len(ok), "n_failed": len(g) - len(ok),
            "n_distinct_energies": len(hexes), "energies_hex": ";".join(hexes) or None,
            "min_energy": energies.min() if len(ok) else nan,
            "max_energy": energies.max() if len(ok) else nan,
            "min_error_mha": errors.min() if len(ok) else nan,
            "median_error_mha": errors.median() if len(ok) else nan,
            "max_error_mha": errors.max() if len(ok) else nan,
            "spread_mha": (energies.max() - energies.min()) * 1e3 if len(ok) else nan,
            **{f"median_{c}": (ok[c].astype(float).median() if len(ok) else nan)
               if c in ok.columns else nan for c in ("nfev", "seconds")},
        })
    return pd.DataFrame(rows, columns=[by, *SUMMARY_COLUMNS])


def _group_label(by: str, value) -> str:
    if by == "threads":
        return f"{value} thread" + ("" if int(value) == 1 else "s")
    if by in ("coretype", "kernelspec"):
        return str(value)
    return f"{by}={value}"


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def finding(summary, by: str) -> str:
    """One sentence stating what the study measured, written from ``summary``.

    Args:
        summary: :func:`summarise` output for the same ``by``.
        by: "threads", "coretype" or "optimizer" (other names are labelled
            ``by=value``); "optimizer" gives :func:`_optimizer_finding`'s
            sentence (error, nfev and time side by side).

    Returns:
        E.g. "at 1 thread 3/3 runs identical; at 2 threads 2 distinct values
        in 3 runs, spread 1.2e-09 mHa; across groups 2 distinct values, the
        energy spans 1.2e-09 mHa (error 5.181379 to 5.181379 mHa)", or, when
        every completed run of every group has the same energy bit for bit,
        "1 thread and 2 threads give the same energy bit for bit
        (-1.13128651023 Ha, error 1.05e-06 mHa, 4 runs)".  Failed runs are
        counted in the sentence.
    """
    if by == "optimizer":
        return _optimizer_finding(summary)
    parts, hexes, lo, hi = [], set(), math.inf, -math.inf
    labels = [_group_label(by, g) for g in summary[by]]
    failed = int(summary["n_failed"].sum())
    total = int(summary["n"].sum())
    for label, (_, s) in zip(labels, summary.iterrows()):
        n, k = int(s["n"]), int(s["n_distinct_energies"])
        where = f"at {label}" if by == "threads" else f"with {label}"
        bad = f" ({int(s['n_failed'])} failed)" if s["n_failed"] else ""
        if n == 0:
            parts.append(f"{where} no run completed{bad}")
            continue
        hexes |= set(str(s["energies_hex"]).split(";"))
        lo, hi = min(lo, s["min_energy"]), max(hi, s["max_energy"])
        if k == 1:
            parts.append(f"{where} {n}/{n} runs identical{bad}" if n > 1
                         else f"{where} 1 run{bad}")
        else:
            parts.append(f"{where} {k} distinct values in {n} runs, "
                         f"spread {s['spread_mha']:.3g} mHa{bad}")
    if total == 0:
        return "no run completed: " + "; ".join(parts)
    if len(hexes) == 1 and all(summary["n"] > 0) and not failed:
        s = summary.iloc[0]
        subject = _join(labels) if by == "threads" else (
            _join(labels) + (" kernels" if len(labels) > 1 else " kernel"))
        verb = "give" if len(labels) > 1 else "gives"
        errs = summary["median_error_mha"].iloc[0]
        return (f"{subject} {verb} the same energy bit for bit "
                f"({s['min_energy']:.12g} Ha, error {errs:.3g} mHa, {total} run"
                + ("s)" if total > 1 else ")"))
    text = "; ".join(parts)
    if len(summary) > 1:
        if len(hexes) == 1:
            text += "; every completed run gives the same energy bit for bit"
        else:
            text += (f"; across groups {len(hexes)} distinct values, the energy spans "
                     f"{(hi - lo) * 1e3:.3g} mHa (error {summary['min_error_mha'].min():.7g}"
                     f" to {summary['max_error_mha'].max():.7g} mHa)")
    return text


def _optimizer_finding(summary) -> str:
    """The sentence of an optimiser study: per optimiser the error (mHa), nfev and
    wall time (s) side by side (medians over completed runs), whether its repeats
    agree bit for bit, then which optimiser has the lowest error, the fewest
    evaluations and the shortest time (ties all named).

    E.g. "COBYLA: error 1.05e-06 mHa, nfev 20, 9.7 s (2/2 runs bit-identical);
    L-BFGS-B: error 0 mHa, nfev 15, 8.7 s (2/2 runs bit-identical); lowest
    error L-BFGS-B, fewest evaluations L-BFGS-B, fastest L-BFGS-B".
    """
    parts = []
    for _, s in summary.iterrows():
        n, k = int(s["n"]), int(s["n_distinct_energies"])
        bad = f", {int(s['n_failed'])} failed" if s["n_failed"] else ""
        if n == 0:
            parts.append(f"{s['optimizer']}: no run completed{bad}")
            continue
        runs = ("1 run" if n == 1 else f"{n}/{n} runs bit-identical" if k == 1
                else f"{k} distinct values in {n} runs, spread {s['spread_mha']:.3g} mHa")
        error = "error" if k == 1 else "median error"
        parts.append(f"{s['optimizer']}: {error} {s['median_error_mha']:.3g} mHa, "
                     f"nfev {s['median_nfev']:.4g}, {s['median_seconds']:.3g} s "
                     f"({runs}{bad})")
    ok = summary[summary["n"] > 0]
    if not len(ok):
        return "no run completed: " + "; ".join(parts)
    text = "; ".join(parts)
    if len(ok) > 1:
        text += "; " + ", ".join(
            f"{what} {_join([str(o) for o in ok.loc[ok[col] == ok[col].min(), 'optimizer']])}"
            for what, col in (("lowest error", "median_error_mha"),
                              ("fewest evaluations", "median_nfev"),
                              ("fastest", "median_seconds")))
    return text
