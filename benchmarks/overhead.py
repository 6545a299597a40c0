"""The fixed cost of one audit notebook, side by side in one run.

Usage::

    python benchmarks/overhead.py                      # LiH JW/HEA, 3 repeats
    python benchmarks/overhead.py --entry PATH.json --repeat 5 --json out.json
    python benchmarks/overhead.py --engine fast        # the audit with engine="fast"

Measured, each ``--repeat`` times (median reported, after one unmeasured warm-up):

1. *bare kernel*: papermill executing a trivial one-cell notebook (``1 + 1``) on
   the ``python3`` kernel: kernel start, one cell, shutdown.  Every ratio below
   is to this.
2. *qencode_nb + pin*: the same with the audit's pin cell (``import qencode_nb``,
   ``pin(1)``: numpy, threadpoolctl and every BLAS pool checked).
3. *import X*: ``python -c "import X"`` minus ``python -c "pass"``, each in a
   fresh interpreter, for numpy, scipy, pyscf, openfermion and pennylane.
4. *problem stage, subprocess*: a fresh interpreter loading the entry and running
   ``rebuild`` + ``hamiltonian_check`` on a warm rebuild cache (a hit), with the
   heavy libraries it imported (none of pennylane, openfermion, pyscf expected).
5. *audit notebook*: ``notebooks/audit.ipynb`` through papermill and the
   ``qencode-nb`` engine with ``entry``, ``mode="replay"``, ``db=None`` and
   ``engine`` on the same warm cache: the whole run and, from papermill's cell
   metadata, the pin, load and hamiltonian cells (and the problem and replay
   cells, which build PennyLane circuits for the recorded backend).
6. *as a sweep run*: the bare and the audit notebook through
   :func:`qencode_nb.executor.run_process.run_isolated` from a pool worker warmed
   as a sweep's (``fork``) and as a new interpreter (``subprocess``): what each run
   of a sweep pays on top of the notebook itself.

Every notebook runs under the ``qencode-nb`` papermill engine (pins in the kernel's
environment), so rows 1, 2 and 5 differ only in what the cells do.  The rebuild cache
is a temporary folder (``QENCODE_NB_CACHE``), warmed by the warm-up run; a measured
run that is not a cache hit is reported.

Runs at one BLAS thread (all six pin variables set here before numpy loads; the count
already in ``OMP_NUM_THREADS`` is kept).  Timings are wall-clock
``time.perf_counter`` on a shared machine: compare the ratios, not the absolute
numbers, across machines.  Exit status 1 when a run fails or a measured audit misses
the cache.
"""

from __future__ import annotations

import harness  # noqa: I001  (first: pins the BLAS threads before numpy loads)

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = harness.ROOT
DEFAULT_ENTRY = harness.DB / "LiH_ccpvdz_JW_HEA_v4_tapered__sha256_f044f66bd4bc8376.json"
if not DEFAULT_ENTRY.is_file():   # a clone alone: the bundled LiH PAR/HEA
    DEFAULT_ENTRY = ROOT / "data" / "qencode-v4" / \
        "LiH_ccpvdz_PAR_HEA_v4_tapered__sha256_e94da71e7eb3b98e.json"
LIBRARIES = ("numpy", "scipy", "pyscf", "openfermion", "pennylane")
HEAVY = ("pennylane", "openfermion", "pyscf")
PIN_CELL = ("import qencode_nb\n"
            "from qencode_nb.notebook.pins import pin\n"
            "PIN = pin(1, None)")
AUDIT_CELLS = {"pin": "# Pin BLAS threads",
               "load": "# Entry: load and validate it",
               "hamiltonian": "# Problem: rebuild from the recorded procedure",
               "problem": "# The re-run's problem",
               "replay": "# Replay: energy of the stored optimal parameters",
               "rerun": "# Re-run: the recorded optimiser",
               "verdict": "# Verdict: tier 1"}
"""Audit cells by the start of their source (the cells' order may change)."""

_STAGE = """\
import json, sys, time
t0 = time.perf_counter()
from qencode_nb.entry import load
from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild
entry = load(sys.argv[1])
rebuilt = rebuild(entry)
record = hamiltonian_check(entry, rebuilt)
print(json.dumps({"seconds": time.perf_counter() - t0, "hit": rebuilt.chemistry.cache_hit,
                  "heavy": sorted({m.split(".")[0] for m in sys.modules}
                                  & {"pennylane", "openfermion", "pyscf"}),
                  "numpy": "numpy" in sys.modules}))
"""


def _one_cell_notebook(path: Path, source: str) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook()
    # A tagged parameters cell, as the notebook contract asks (the runner refuses a
    # notebook without one); its one literal costs nothing measurable.
    params = nbformat.v4.new_code_cell("blas_threads = 1")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(source)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(path))
    return path


def _papermill(notebook: Path, output: Path, parameters: dict | None = None) -> float:
    """Seconds of one papermill execution under the qencode-nb engine (python3 kernel).

    Raises:
        RunFailed: the notebook failed (audit notebooks: through run_notebook).
    """
    import papermill

    from qencode_nb.executor.execute import ENGINE_NAME, run_notebook

    start = time.perf_counter()
    if parameters is None:
        papermill.execute_notebook(str(notebook), str(output), engine_name=ENGINE_NAME,
                                   kernel_name="python3", progress_bar=False,
                                   cwd=str(ROOT))
    else:
        run_notebook(notebook, output, parameters, kernel_name="python3")
    return time.perf_counter() - start


def _cell_seconds(output: Path) -> dict:
    """``{name: seconds}`` of the :data:`AUDIT_CELLS` from papermill's cell metadata."""
    import nbformat

    nb = nbformat.read(str(output), as_version=4)
    out = {}
    for cell in nb.cells:
        for name, head in AUDIT_CELLS.items():
            if cell.cell_type == "code" and cell.source.lstrip().startswith(head):
                out[name] = (cell.metadata.get("papermill") or {}).get("duration")
    return out


def _python_seconds(code: str, env: dict) -> float:
    """Seconds of ``python -c CODE`` in a fresh interpreter."""
    _, seconds = harness.timed(lambda: subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True,
        cwd=str(ROOT)))
    return seconds


def _median(xs):
    return statistics.median(xs) if xs else None


def _isolated(notebook: str, output: str, parameters: dict, method: str):
    """One :func:`qencode_nb.executor.run_process.run_isolated` run (in a pool worker
    warmed like a sweep's): ``(wall seconds, failure or None)``."""
    from qencode_nb.executor.run_process import run_isolated

    os.environ["QENCODE_NB_RUN_PROCESS"] = method
    t = time.perf_counter()
    failure = run_isolated(notebook, output, parameters, cwd=str(ROOT))
    return time.perf_counter() - t, failure


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entry", type=Path, default=DEFAULT_ENTRY,
                    help="QEncode JSON entry of the audit rows (default: LiH JW/HEA)")
    ap.add_argument("--engine", default=None,
                    help="the audit's engine parameter (default None: recorded backend)")
    ap.add_argument("--repeat", type=int, default=3, help="measured runs per row")
    ap.add_argument("--json", type=Path, default=None, help="write the rows here")
    args = ap.parse_args(argv)
    if not args.entry.is_file():
        raise SystemExit(f"no entry at {args.entry}")

    rows, problems = [], []
    with tempfile.TemporaryDirectory(prefix="qnb-overhead-") as tmp:
        tmp = Path(tmp)
        os.environ["QENCODE_NB_CACHE"] = str(tmp / "cache")   # the kernels inherit it
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        bare_nb = _one_cell_notebook(tmp / "bare.ipynb", "1 + 1")
        pin_nb = _one_cell_notebook(tmp / "pin.ipynb", PIN_CELL)
        # run_isolated requires a `done` record: the bare row's sweep-run twin records it.
        done_nb = _one_cell_notebook(tmp / "done.ipynb",
                                     "from qencode_nb import record\nrecord('done', True)")
        audit_nb = ROOT / "notebooks" / "audit.ipynb"
        params = {"entry": str(args.entry), "mode": "replay", "db": None,
                  "engine": args.engine}

        def notebook_row(name, notebook, parameters=None):
            times, cells = [], []
            for i in range(args.repeat + 1):    # the first run warms disk and cache
                out = tmp / f"{notebook.stem}-{i}.ipynb"
                try:
                    t = _papermill(notebook, out, parameters)
                except Exception as exc:  # noqa: BLE001 - reported, never hidden
                    problems.append(f"{name}: {type(exc).__name__}: {exc}")
                    print(f"# {name}: FAILED {type(exc).__name__}: {exc}", flush=True)
                    return None
                if i == 0:
                    continue
                times.append(t)
                if parameters is not None:
                    cells.append(_cell_seconds(out))
                    from qencode_nb.notebook.record import read_records

                    ham = read_records(out).get("hamiltonian") or {}
                    if ham.get("cache_hit") is not True:
                        problems.append(f"{name}: measured run {i} missed the cache")
            row = {"row": name, "seconds": _median(times), "runs": times}
            if cells:
                row["cells"] = {k: _median([c[k] for c in cells if c.get(k) is not None])
                                for k in AUDIT_CELLS}
            rows.append(row)
            print(f"# {name}: {row['seconds']:.2f} s", flush=True)
            return row

        print(f"# entry {args.entry.name}, engine {args.engine!r}, {args.repeat} measured "
              f"runs per row (median), OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, "
              f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}", flush=True)
        bare = notebook_row("bare kernel (1 + 1)", bare_nb)
        notebook_row("qencode_nb + pin cell", pin_nb)

        python = [_python_seconds("pass", env) for _ in range(args.repeat + 1)][1:]
        t_python = _median(python)
        rows.append({"row": "bare python -c pass", "seconds": t_python, "runs": python})
        for lib in LIBRARIES:
            runs = [_python_seconds(f"import {lib}", env)
                    for _ in range(args.repeat + 1)][1:]
            rows.append({"row": f"import {lib}", "seconds": _median(runs) - t_python,
                         "runs": [r - t_python for r in runs], "minus_bare_python": True})
            print(f"# import {lib}: {rows[-1]['seconds']:.2f} s", flush=True)

        audit = notebook_row(f"audit replay, warm cache (engine={args.engine})", audit_nb,
                             params)   # its warm-up run fills the cache

        # A sweep's unit of work: the same notebooks through run_isolated, from a pool
        # worker warmed as sweeps warm theirs (fork) or as a new interpreter (subprocess).
        from concurrent.futures import ProcessPoolExecutor

        from qencode_nb.executor.run_process import START_METHODS, warm_up

        with ProcessPoolExecutor(max_workers=1, initializer=warm_up) as pool:
            for method in START_METHODS:
                for label, nb, parameters in (("bare kernel (record done)", done_nb, {}),
                                              ("audit replay", audit_nb, params)):
                    runs = []
                    for i in range(args.repeat + 1):
                        out = tmp / f"isolated-{method}-{nb.stem}-{i}.ipynb"
                        secs, failure = pool.submit(_isolated, str(nb), str(out), parameters,
                                                    method).result()
                        if failure:
                            problems.append(f"{label} via {method}: {failure}")
                            break
                        if i:
                            runs.append(secs)
                    if runs:
                        rows.append({"row": f"{label}, as a sweep run ({method})",
                                     "seconds": _median(runs), "runs": runs})
                        print(f"# {rows[-1]['row']}: {rows[-1]['seconds']:.2f} s", flush=True)
        stage = []
        for _ in range(args.repeat):
            out = harness.run_json(["-c", _STAGE, args.entry], env=env)
            if "reason" in out:
                problems.append(f"problem stage: {out['reason']}")
                break
            stage.append(out)
        if stage:
            heavy = sorted({m for s in stage for m in s["heavy"]})
            rows.append({"row": "load + rebuild + hamiltonian_check, subprocess (hit)",
                         "seconds": _median([s["seconds"] for s in stage]),
                         "runs": [s["seconds"] for s in stage],
                         "heavy_imported": heavy, "hit": all(s["hit"] for s in stage)})
            if not all(s["hit"] for s in stage):
                problems.append("problem stage subprocess missed the cache")

    t_bare = bare["seconds"] if bare else None
    print(f"\n{'measurement':58s} {'seconds':>8s} {'x bare kernel':>14s}")
    for row in rows:
        ratio = row["seconds"] / t_bare if t_bare else float("nan")
        row["ratio_to_bare_kernel"] = ratio
        note = ""
        if "heavy_imported" in row:
            note = f"  heavy imported: {row['heavy_imported'] or 'none'}"
        print(f"{row['row']:58s} {row['seconds']:8.2f} {ratio:14.2f}{note}")
        for cell, secs in (row.get("cells") or {}).items():
            if secs is not None:
                r = secs / t_bare if t_bare else float("nan")
                print(f"{'  cell ' + cell:58s} {secs:8.2f} {r:14.2f}")
    if audit and bare:
        print(f"# fixed cost: audit replay {audit['seconds'] - t_bare:.2f} s above the bare "
              "kernel (papermill in this process)")
        by = {r["row"]: r["seconds"] for r in rows}
        for method in ("fork", "subprocess"):
            a = by.get(f"audit replay, as a sweep run ({method})")
            if a is not None:
                print(f"# fixed cost: audit replay as a sweep run ({method}) {a - t_bare:.2f} s "
                      "above the bare kernel")
    if audit and audit.get("cells"):
        c = audit["cells"]
        fixed = sum(c.get(k) or 0.0 for k in ("pin", "load", "hamiltonian"))
        print(f"# audit: pin + load + hamiltonian cells {fixed:.2f} s of "
              f"{audit['seconds']:.2f} s")
    print(f"# problems: {len(problems)}")
    for p in problems:
        print(f"#   {p}")
    harness.write_json(args.json, {"entry": str(args.entry), "engine": args.engine,
                                   "repeat": args.repeat, "rows": rows,
                                   "problems": problems})
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
