"""The explain search: which environment, if any, re-runs an entry to its published bits.

A re-run that misses its published energy by some ulps leaves the question of where
the difference comes from: the package stack, the OpenBLAS kernel of one of the three
BLAS copies, numpy's AVX-512 loops, or the BLAS threads (issue 35).  :func:`explain`
re-runs one entry over a bounded grid of environments, nearest the entry's recorded
one first, and stops at the first configuration whose re-run energy equals the
published one to the last bit; otherwise it reports every configuration tried, the
closest first.  CLI: ``qencode-nb study environments ENTRY --explain [--budget N]``.

The grid (every value an audit.ipynb parameter, each run its own process and kernel,
:func:`qencode_nb.batch.study_jobs.run_jobs`):

- **stack**: the entry's recorded stack, resolved as the index served it at the entry's
  date (``recorded``), the same pins resolved today (``recorded-today``) and the current
  one (:mod:`qencode_nb.environment.choice`), each once: a stack that is the same
  environment as an earlier one (the same kernelspec, or a lock this environment holds)
  is left out, and so is one that cannot be resolved or built (said on stderr);
- **kernels**: the entry's release triple (``reference`` resolved for its release,
  :func:`qencode_nb.notebook.blas_profiles.resolve`), then each OpenBLAS copy's kernel
  changed alone over the kernels this CPU runs: numpy's, scipy's, and PySCF's only when
  the re-run's Hamiltonian is rebuilt (PySCF computes nothing the re-run of a stored
  Hamiltonian uses; read from the first run's ``rerun.config.hamiltonian``); given as a
  kernel per copy (:func:`~qencode_nb.notebook.blas_profiles.kernel_spec`);
- **numpy's AVX-512 loops** on and off, on a CPU with AVX-512 (elsewhere there are none);
- **BLAS threads** 1 and 2;
- **OpenBLAS's L2 size**: unset (what the environment has) and :data:`L2_SIZES` KiB,
  ``OPENBLAS_L2_SIZE`` for every copy (the kernel spec's ``l2``,
  :data:`qencode_nb.notebook.blas_profiles.L2`; a preset some hosts set).

Runs go in the order of how many axes differ from the baseline (the recorded stack, the
release triple, the loops as the release's profile has them, 1 thread, no L2 size), then
how many of those are not :data:`NEW_AXES` (the stacks and the L2 size are tried first
at each distance), then grid order, ``workers`` at a time, at most ``budget`` runs.  A
run already done in ``out_dir`` under the same inputs and environment is kept, not run
again (:func:`qencode_nb.batch.study_jobs.run_jobs`' ``resume``): a search given a larger
budget later, or killed, goes on where it stopped.
Written in ``out_dir``: the notebooks,
``explain.csv`` (:data:`EXPLAIN_COLUMNS`), ``explain.json`` (:data:`SEARCH_FILE`) and the
figure ``explain.{png,pdf,svg}``
(:func:`qencode_nb.readout.explain_plot.explain_plot`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qencode_nb.environment.store import CURRENT, RECORDED, RECORDED_TODAY
from qencode_nb.options import RunOptions, with_changes

#: Columns of ``explain.csv``: ``rank`` the run's place in the search order, ``changed``
#: the axes it changes from the baseline, ``kernels_measured`` the triple threadpoolctl
#: measured (``numpy=...,scipy=...,pyscf=...``), ``identical`` the re-run energy equal to
#: the published one to the last bit, ``ulps`` and ``delta_ha`` (Ha) the ``difference``
#: record.
EXPLAIN_COLUMNS = ("rank", "stack", "kernelspec", "blas_threads", "numpy_avx512",
                   "l2_size", "numpy_kernel", "scipy_kernel", "pyscf_kernel", "changed",
                   "kernels_measured", "status", "identical", "ulps", "delta_ha",
                   "energy_hex", "tier_bit_identical", "seconds", "notebook", "failure")

#: The search's size and answer beside ``explain.csv``: ``{"grid", "budget", "tried",
#: "finding"}`` (:mod:`qencode_nb.studies.misses` reads the grid from it).
SEARCH_FILE = "explain.json"

#: Runs at most, unless ``budget`` says otherwise.
DEFAULT_BUDGET = 48

#: The stacks searched, nearest the entry's recorded environment first
#: (:data:`qencode_nb.environment.store.STACK_WORDS`).
STACKS = (RECORDED, RECORDED_TODAY, CURRENT)

#: ``OPENBLAS_L2_SIZE`` values (KiB) tried besides unset: 256 KiB (OpenBLAS's own fallback
#: where the CPU reports none), 512 (the AMD preset host kind's), 1024 (Zen 4's own L2),
#: 2048 (what some projects set against OpenBLAS's Zen 4 GEMM override).
L2_SIZES = (256, 512, 1024, 2048)

#: The axes the search tries first at each distance from the baseline (issue 52).
NEW_AXES = ("stack", "L2 size")


@dataclass(frozen=True)
class ExplainResult:
    """What the search found.

    Attributes:
        out_dir: the folder (notebooks, ``explain.csv``, the figure).
        table: one row per run (:data:`EXPLAIN_COLUMNS`), closest first.
        grid: configurations in the grid (after PySCF's kernels were dropped or kept).
        reproduced: the first bit-identical row as a dict, or None.
        finding: the answer in one sentence.
    """

    out_dir: Path
    table: Any
    grid: int
    reproduced: dict | None
    finding: str


def _config(stack, kernels, avx512, threads, l2, base, kernelspec=None) -> dict:
    changed = [name for name, here, there in (
        ("stack", stack, base["stack"]), ("numpy kernel", kernels["numpy"], base["numpy"]),
        ("scipy kernel", kernels["scipy"], base["scipy"]),
        ("pyscf kernel", kernels["pyscf"], base["pyscf"]),
        ("numpy AVX-512 loops", avx512, base["avx512"]),
        ("threads", threads, base["threads"]), ("L2 size", l2, base["l2"])) if here != there]
    return {"stack": stack, "kernelspec": kernelspec, "kernels": dict(kernels),
            "avx512": avx512, "threads": threads, "l2": l2, "changed": changed}


def stacks(entry, db=None, log=None) -> dict:
    """``{stack word: kernelspec or None}`` of the stacks searched (:data:`STACKS`, None:
    this environment), each environment once: a stack whose kernelspec an earlier one
    has, or whose lock this environment holds where an earlier one is this environment,
    is left out; so is one that cannot be resolved or built (``log`` says why)."""
    from qencode_nb.environment.choice import choose

    out: dict = {}
    for word in STACKS:
        choice = choose(word, [entry], db, log=log)[entry]
        if choice.why:
            (log or (lambda line: None))(f"explain: the {word} stack is left out: {choice.why}")
        elif choice.kernelspec not in out.values():
            out[word] = choice.kernelspec
    return out


def grid(entry, db=None, log=None) -> tuple[list[dict], dict]:
    """The configurations of the search, nearest the entry's recorded environment first.

    Args:
        entry: entry file or bundled name.  db: completes a bundled entry.
        log: ``callable(str)`` told when a stack is built or left out (default: quiet).

    Returns:
        ``(configs, baseline)``: each config ``{"stack": a word of :data:`STACKS`,
        "kernelspec": its Jupyter kernelspec or None (this environment),
        "kernels": {copy: coretype}, "avx512": bool (numpy's AVX-512 loops on),
        "threads": 1|2, "l2": None|KiB, "changed": [axes changed]}``; ``baseline`` the
        first one's values.
    """
    from qencode_nb.environment.choice import release_triple
    from qencode_nb.notebook.blas_profiles import COPIES, cpu_flags, resolve, runnable_coretypes

    ref = resolve("reference", release=release_triple(entry, db))
    runnable = runnable_coretypes()
    kernels = {c: ref.coretypes.get(c) or "Haswell" for c in COPIES}
    avx512_cpu = "avx512f" in cpu_flags()
    found = stacks(entry, db, log=log or (lambda line: None)) or {CURRENT: None}
    base = {"stack": next(iter(found)), **kernels, "avx512": not ref.numpy_disable,
            "threads": 1, "l2": None}
    variants = [dict(kernels)] + [{**kernels, copy: k} for copy in COPIES for k in runnable
                                  if k != kernels[copy]]
    configs = [_config(s, v, a, t, size, base, found[s]) for s in found for v in variants
               for a in ((True, False) if avx512_cpu else (base["avx512"],))
               for t in (1, 2) for size in (None, *L2_SIZES)]
    # stable: grid order within a distance, the new axes first (the stacks first of them)
    configs.sort(key=lambda c: (len(c["changed"]), sum(a not in NEW_AXES for a in c["changed"]),
                                "stack" not in c["changed"]))
    return configs, base


def _params(config) -> dict:
    """A configuration's axis values: what it replaces in the run options' parameters
    (:func:`qencode_nb.batch.run_spec.notebook_parameters`, called by ``run_jobs``)."""
    from qencode_nb.notebook.blas_profiles import kernel_spec

    extra = {"blas_threads": config["threads"],
             "blas_coretype": kernel_spec(config["kernels"], config["avx512"],
                                          config.get("l2"))}
    if config["stack"] != CURRENT:
        extra["stack"] = config["stack"]
    return extra


def _row(rank: int, config: dict, kernel: str | None, run: dict) -> dict:
    from qencode_nb.notebook.blas_profiles import COPIES
    from qencode_nb.notebook.record import read_records

    try:
        r = read_records(run["notebook"])
    except (OSError, ValueError):
        r = {}
    diff = r.get("difference") or {}
    measured = ((r.get("blas_profile") or {}).get("kernels")) or {}
    blas = (r.get("provenance") or {}).get("blas") or {}     # in force, as the run recorded
    l2 = blas.get("OPENBLAS_L2_SIZE") if blas else config.get("l2")
    return {"rank": rank, "stack": config["stack"], "kernelspec": kernel or "python3",
            "blas_threads": config["threads"],
            "numpy_avx512": "on" if config["avx512"] else "off",
            "l2_size": str(l2) if l2 else "unset",
            "numpy_kernel": config["kernels"]["numpy"], "scipy_kernel": config["kernels"]["scipy"],
            "pyscf_kernel": config["kernels"]["pyscf"],
            "changed": ", ".join(config["changed"]) or "none (baseline)",
            "kernels_measured": ",".join(f"{c}={measured[c]}" for c in COPIES
                                         if c in measured) or None,
            "status": run["status"], "identical": diff.get("identical"),
            "ulps": diff.get("ulps"), "delta_ha": diff.get("delta_ha"),
            "energy_hex": run.get("energy_hex"),
            "tier_bit_identical": run.get("bit_identical"), "seconds": run.get("seconds"),
            "notebook": run["notebook"], "failure": run.get("failure")}


def explain(entry, out_dir="runs/explain", options: RunOptions | None = None, *,
            budget: int = DEFAULT_BUDGET, **changes) -> ExplainResult:
    """Search the grid (module docstring) until a re-run is bit-identical.

    Args:
        entry: entry file or bundled name (one that publishes an energy).
        out_dir: folder for the notebooks, ``explain.csv`` and the figure.
        options: :class:`~qencode_nb.options.RunOptions` (mode "rerun" by default;
            ``db``, ``engine``, ``proof_budget``, ``workers`` or ``scheduler``,
            ``timeout`` (per run), ``cell_timeout`` (per cell), ``progress``, ``plot``;
            ``blas_threads``, ``blas_coretype`` and ``stack`` are the grid's: each
            configuration is the axis values of
            :func:`qencode_nb.batch.run_spec.notebook_parameters`, through
            :func:`~qencode_nb.batch.study_jobs.run_jobs`).
        budget: at most this many runs (an int >= 1; :data:`DEFAULT_BUDGET`).
        **changes: fields of ``options`` replaced.

    Returns:
        an :class:`ExplainResult`; its ``finding`` names the configuration that
        reproduced the published energy, or says none of the N tried did and names the
        closest with its ulps.

    Raises:
        ParameterError: a budget that is not an int >= 1, mode "replay", and every
            error of :func:`qencode_nb.batch.study_jobs.run_jobs` (before any run).
    """
    import pandas as pd

    from qencode_nb.batch.run_folder import write_text_atomic
    from qencode_nb.batch.study_jobs import entry_stem, run_jobs

    from qencode_nb.errors import ParameterError
    from qencode_nb.options import check_count

    if budget == 0 and not isinstance(budget, bool):
        raise ParameterError("0 is not accepted for one entry's search; accepted: an "
                             "integer >= 1 (0, no search, only with a sweep folder: each "
                             "miss bounded by the sweep's own run)", parameter="budget")
    check_count(budget, "budget")   # runs at most
    opts = with_changes(options, {**changes, "stack": None}, mode="rerun")
    # the stacks first (each built once, saying so), then the grid that runs in them
    configs, _ = grid(entry, opts.db, log=_say)
    out, stem, rows, done = Path(out_dir), entry_stem(entry), [], 0
    step = max(1, opts.workers)
    while done < min(budget, len(configs)):
        batch = configs[done:min(budget, done + step)]
        jobs = [(i, 0, f"{stem}__x{i:03d}", _params(c)) for i, c in
                enumerate(batch, start=done)]
        kernels = {name: c["kernelspec"] for (_, _, name, _), c in zip(jobs, batch)}
        runs = run_jobs(entry, jobs, out, opts, desc=f"explain {done + 1}-{done + len(batch)}",
                        kernelspecs=kernels, resume=True)
        rows += [_row(i, c, kernels[name], run)
                 for (i, _, name, _), c, run in zip(jobs, batch, runs)]
        done += len(batch)
        if done == len(batch) and not _rebuilt(rows[0]):      # PySCF's kernel cannot matter
            configs = configs[:done] + [c for c in configs[done:]
                                        if "pyscf kernel" not in c["changed"]]
        if any(exact(r) for r in rows):
            break
    table = pd.DataFrame(rows, columns=list(EXPLAIN_COLUMNS))
    table = table.sort_values(["identical", "ulps", "rank"], ascending=[False, True, True],
                              na_position="last", key=_sort_key).reset_index(drop=True)
    out.mkdir(parents=True, exist_ok=True)
    from qencode_nb.readout.published import published_csv

    (out / "explain.csv").write_text(published_csv(table, out), encoding="utf-8")
    reproduced = next((r for r in table.to_dict("records") if exact(r)), None)
    result = ExplainResult(out, table, len(configs), reproduced,
                           explain_finding(table, len(configs), budget))
    write_text_atomic(out / SEARCH_FILE, json.dumps(
        {"grid": len(configs), "budget": budget, "tried": len(table),
         "finding": result.finding}, indent=1) + "\n")
    if opts.plot and len(table):
        from qencode_nb.readout.explain_plot import explain_plot

        explain_plot(table, out / "explain", result.finding)
    return result


def _say(line: str) -> None:
    import sys

    print(f"qencode-nb: {line}", file=sys.stderr, flush=True)


def exact(row: dict) -> bool:
    """Whether an explain row's re-run energy equals the published one to the last bit:
    its ``identical`` (``difference.identical``) as written (a bool or a numpy bool) or
    read back from ``explain.csv`` (the text ``True``).  The one rule, for this module
    and :mod:`qencode_nb.studies.misses`."""
    return str(row.get("identical")) == "True"


def _sort_key(col):
    if col.name == "identical":
        return col.map(lambda v: exact({"identical": v}))
    return col


def _rebuilt(row: dict) -> bool:
    """Whether the run of ``row`` re-ran on a rebuilt Hamiltonian (``rerun.config``)."""
    from qencode_nb.notebook.record import read_records

    try:
        config = (read_records(row["notebook"]).get("rerun") or {}).get("config") or {}
    except (OSError, ValueError):
        return True            # unknown: keep PySCF's kernels in the grid
    return str(config.get("hamiltonian", "")).startswith("rebuilt")


def describe(row: dict) -> str:
    """One configuration in words: ``recorded stack, numpy=Haswell,scipy=Haswell,
    pyscf=Haswell, numpy AVX-512 loops on, 1 thread`` (then ``, OPENBLAS_L2_SIZE=512``
    where one was in force)."""
    l2 = row.get("l2_size")
    return (f"{row['stack']} stack, numpy={row['numpy_kernel']},scipy={row['scipy_kernel']},"
            f"pyscf={row['pyscf_kernel']}, numpy AVX-512 loops {row['numpy_avx512']}, "
            f"{row['blas_threads']} thread{'s' if row['blas_threads'] != 1 else ''}"
            + (f", OPENBLAS_L2_SIZE={l2}" if l2 not in (None, "unset") else ""))


def explain_finding(table, grid_size: int, budget: int) -> str:
    """The search's answer: ``reproduced by <config> (run N of M)``, or ``not reproduced
    by any of N configurations (of a grid of G); closest: <config>, K ulps``."""
    rows = table.to_dict("records")
    hit = next((r for r in rows if exact(r)), None)
    if hit is not None:
        return (f"reproduced bit for bit by {describe(hit)} (run {hit['rank'] + 1} of "
                f"{len(rows)} tried, a grid of {grid_size})")
    done = [r for r in rows if r["status"] == "done" and r["ulps"] is not None]
    failed = len(rows) - len(done)
    text = (f"not reproduced by any of {len(rows)} configurations (of a grid of {grid_size}"
            + (f", budget {budget}" if grid_size > budget else "") + ")")
    if failed:
        text += f"; {failed} failed"
    if done:
        best = done[0]
        text += (f"; closest: {describe(best)}, {int(best['ulps'])} ulps "
                 f"({best['delta_ha']:+.3e} Ha)")
    return text
