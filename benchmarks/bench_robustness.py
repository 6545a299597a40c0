"""A robustness study's 8 perturbations on a subset, timed: this checkout against another.

Usage::

    python benchmarks/bench_robustness.py ENTRY.json [ENTRY.json ...] --workers 2 \\
        [--baseline /path/to/other/checkout] [--engine fast] [--cold] [--total 54]

The 8 perturbations of issue 37: BLAS threads 1 and 2 x kernel profile ``reference``
and ``portable`` x numpy's AVX-512 loops on and off.  This checkout runs them as
``--threads 1 2 --coretypes reference portable --numpy-dispatch on off``; a baseline
checkout without the dispatch axis runs the same 8 audits as four ``--coretypes``
(the profiles and the two kernels-per-copy specs the axis resolves to,
:func:`qencode_nb.studies.robustness_axes.audit_coretype`), so both passes run the very
same audit parameters.  Each pass is ``python -m qencode_nb.cli robustness`` with
``PYTHONPATH`` set to its checkout, mode full, into a fresh folder (printed); the
baseline first.  ``--cold``: each pass gets an empty rebuild cache (each perturbation's
numeric environment rebuilds its Hamiltonians, as a first study on a machine does).

Prints per pass the wall and CPU seconds, the runs, seconds per run (wall x workers /
runs) and where the runs' time went (:mod:`run_phases`), the ratio of the passes, and
the projection of ``--total`` entries x 8 from this pass's per-entry cost.  Wall-clock on
a shared machine: compare passes run back to back.
"""

from __future__ import annotations

import harness  # noqa: I001  (first: pins the BLAS threads before numpy loads)

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_record
import run_phases


def coretype_args(this: bool) -> list[str]:
    """The kernel arguments giving the 8 perturbations (with ``--threads 1 2``)."""
    from qencode_nb.notebook.blas_profiles import PORTABLE, REFERENCE, kernel_spec

    if this:
        return ["--coretypes", "reference", "portable", "--numpy-dispatch", "on", "off"]
    return ["--coretypes", "reference", kernel_spec(REFERENCE.coretypes, numpy_avx512=False),
            kernel_spec(PORTABLE.coretypes, numpy_avx512=True), "portable"]


def one_pass(checkout: Path, targets, out: Path, args, this: bool, cache) -> tuple:
    env = dict(os.environ, PYTHONPATH=str(checkout), QENCODE_NB_PROGRESS="0")
    if cache is not None:
        env["QENCODE_NB_CACHE"] = str(cache)
    cmd = [sys.executable, "-m", "qencode_nb.cli", "robustness", *targets, "--threads", "1",
           "2", *coretype_args(this), "--mode", "full", "--workers", str(args.workers),
           "--out", str(out)]
    if args.engine:
        cmd += ["--engine", args.engine]
    start, cpu = time.perf_counter(), bench_record.cpu_seconds()
    done = subprocess.run(cmd, cwd=str(checkout), env=env, capture_output=True, text=True)
    seconds, cpu = time.perf_counter() - start, bench_record.cpu_seconds() - cpu
    (out.parent / f"{out.name}.log").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        print(f"{checkout}: exit {done.returncode}: {done.stderr.strip()[-400:]}")
    return seconds, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="+", help="entry files")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--engine", default="fast")
    ap.add_argument("--baseline", default=None, help="another checkout, run first")
    ap.add_argument("--cold", action="store_true", help="an empty rebuild cache per pass")
    ap.add_argument("--total", type=int, default=54, help="entries of the projection")
    args = ap.parse_args()

    targets = [str(Path(t).resolve()) for t in args.targets]
    root = Path(tempfile.mkdtemp(prefix="bench-robustness-"))
    print(f"{len(targets)} entries x 8 perturbations; outputs under {root}")
    passes = ([("baseline", Path(args.baseline).resolve(), False)] if args.baseline else []) \
        + [("this", harness.ROOT, True)]
    walls = {}
    for label, checkout, this in passes:
        cache = root / f"cache-{label}" if args.cold else None
        wall, cpu = one_pass(checkout, targets, root / label, args, this, cache)
        runs = [run_phases.phases(nb) for nb in sorted((root / label).glob("*.ipynb"))
                if nb.with_suffix(".outcome.json").is_file()]
        walls[label] = wall
        per_run = wall * args.workers / max(1, len(runs))
        print(f"{label:9} {wall:8.1f} s wall, {cpu:8.1f} CPU s, {len(runs)} runs, "
              f"{per_run:.1f} s per run ({args.workers} workers)  ({checkout})", flush=True)
        total = sum(r["wall"] for r in runs) or 1.0
        print("          " + ", ".join(f"{p} {100 * sum(r[p] for r in runs) / total:.0f}%"
                                       for p in run_phases.ORDER))
    if "baseline" in walls:
        print(f"ratio baseline / this (wall): {walls['baseline'] / walls['this']:.2f}")
    scale = args.total / len(targets)
    print(f"projection {args.total} x 8 at this pass's cost per entry: "
          f"{walls['this'] * scale / 60:.1f} min (subset mean; a database's cost per "
          "entry differs from the subset's)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
