"""A whole-record replay sweep, timed: this checkout against another, side by side.

Usage::

    python benchmarks/bench_record.py ../shared/qencode-history ../shared/qencode-v4/db \\
        --workers 2 [--baseline /path/to/other/checkout] [--cold] [--engine fast]

Runs ``qencode-nb sweep TARGETS --mode replay`` (a record folder among the targets: every
release group, :mod:`qencode_nb.studies.history_sweep`) once per checkout, in one
invocation: the ``--baseline`` checkout first (e.g. the main branch: its record sweep ran
the release groups one after another), then this one (one pool for every group).  Each
pass is ``python -m qencode_nb.cli`` with ``PYTHONPATH`` set to its checkout (the kernels
inherit it), into a fresh output folder under a temporary folder (printed).

``--cold`` gives every pass a fresh, empty rebuild cache (``QENCODE_NB_CACHE``): what a
first audit on a new machine pays (PySCF, the of_bridge rebuild, the Hamiltonian proof);
without it the user's cache serves both passes (run once before to warm it).

Prints each pass's wall and CPU seconds (every process of the pass; on a machine shared
with other work, CPU / 2 is what the pass needs of 2 idle cores), the ratio, and the slowest runs of each pass with their
seconds (``<name>.outcome.json``: fork to notebook written) and the stage that took
most (:mod:`run_phases`).  Timings are wall-clock on a shared machine: compare the
ratio of passes run back to back, not absolute numbers across machines.
"""

from __future__ import annotations

import harness  # noqa: I001  (first: pins the BLAS threads before numpy loads)

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import run_phases


def cpu_seconds() -> float:
    """User + system CPU seconds of this process's waited-for descendants so far."""
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def one_pass(checkout: Path, targets, out: Path, args, cache: Path | None) -> tuple:
    """``(wall s, CPU s)`` of one ``sweep`` with ``checkout``'s qencode_nb (CPU: every
    process of it, kernels included); its output in ``out``."""
    env = dict(os.environ, PYTHONPATH=str(checkout), QENCODE_NB_PROGRESS="0")
    if cache is not None:
        env["QENCODE_NB_CACHE"] = str(cache)
    cmd = [sys.executable, "-m", "qencode_nb.cli", "sweep", *targets, "--mode", "replay",
           "--workers", str(args.workers), "--out", str(out)]
    if args.engine:
        cmd += ["--engine", args.engine]
    start, cpu = time.perf_counter(), cpu_seconds()
    done = subprocess.run(cmd, cwd=str(checkout), env=env, capture_output=True, text=True)
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    (out.parent / f"{out.name}.log").write_text(done.stdout + done.stderr)
    if done.returncode not in (0, 1):
        print(f"{checkout}: exit {done.returncode}: {done.stderr.strip()[-400:]}")
    return seconds, cpu


def slowest(out: Path, top: int) -> list[tuple[str, dict]]:
    rows = [(str(nb.relative_to(out)), run_phases.phases(nb))
            for nb in sorted(out.rglob("*.ipynb")) if nb.with_suffix(".outcome.json").is_file()]
    return sorted(rows, key=lambda r: -r[1]["wall"])[:top]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="+", help="a record folder (and database folders)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--engine", default="fast")
    ap.add_argument("--baseline", default=None, help="another checkout, run first")
    ap.add_argument("--cold", action="store_true", help="a fresh rebuild cache per pass")
    ap.add_argument("--top", type=int, default=8)
    args = ap.parse_args()

    targets = [str(Path(t).resolve()) for t in args.targets]
    root = Path(tempfile.mkdtemp(prefix="bench-record-"))
    print(f"outputs under {root}")
    passes = ([("baseline", Path(args.baseline).resolve())] if args.baseline else []) + \
        [("this", harness.ROOT)]
    walls = {}
    for label, checkout in passes:
        cache = root / f"cache-{label}" if args.cold else None
        walls[label], cpu = one_pass(checkout, targets, root / label, args, cache)
        print(f"{label:9} {walls[label]:8.1f} s wall, {cpu:8.1f} CPU s (CPU / 2 cores: "
              f"{cpu / 2:.1f} s, the wall on 2 idle cores at best)  ({checkout})", flush=True)
    if "baseline" in walls:
        print(f"ratio baseline / this (wall): {walls['baseline'] / walls['this']:.2f}")
    for label, _ in passes:
        print(f"\nslowest runs, {label} ({'cold' if args.cold else 'warm'} cache):")
        for name, ph in slowest(root / label, args.top):
            stage = max((p for p in run_phases.ORDER if p != "other"), key=lambda p: ph[p])
            print(f"  {ph['wall']:7.1f} s  {name}  (most in {stage}: {ph[stage]:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
