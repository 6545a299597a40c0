"""Replay + rebuild of whole entries through audit.ipynb, cold vs warm cache, side by side.

Usage::

    python benchmarks/bench_sweep.py ../shared/qencode-v4/db --workers 2
    python benchmarks/bench_sweep.py H2_ccpvdz_JW_UCCSD.json LiH_... --coretype Cooperlake

Runs ``qencode-nb sweep --mode replay`` twice over the same targets, in one
invocation: *cold* with a fresh, empty cache folder (``QENCODE_NB_CACHE``,
inherited by every kernel), *warm* with that folder filled by the cold pass
(every Hamiltonian a cache hit).  Prints wall time of each pass, the
cold/warm ratio, the per-entry notebook times (papermill's duration) and every
entry that did not finish with its reason.  Each pass writes its executed
notebooks and summary.csv under a temporary folder (printed).

Runs at one BLAS thread (:mod:`harness`).  Timings are wall-clock on a shared
machine: compare ratios, not absolute numbers, across machines.
"""

from __future__ import annotations

import harness  # noqa: I001  (first: pins the BLAS threads before numpy loads)

import argparse
import os
import tempfile
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="+", help="folders, entry files or bundled names")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--coretype", default=None)
    args = ap.parse_args()

    from qencode_nb.batch.sweep import sweep

    root = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    os.environ["QENCODE_NB_CACHE"] = str(root / "cache")
    rows = {}
    for label in ("cold", "warm"):
        table, seconds = harness.timed(lambda: sweep(
            args.targets, root / label, mode="replay", workers=args.workers,
            blas_coretype=args.coretype, progress=False))
        rows[label] = (seconds, table)
    (cold_s, cold), (warm_s, warm) = rows["cold"], rows["warm"]
    print(f"folder: {root}")
    print(f"{'entry':60s} {'cold s':>8s} {'warm s':>8s} {'ratio':>6s} {'hit':>4s}")
    for (_, c), (_, w) in zip(cold.iterrows(), warm.iterrows()):
        name = Path(c["notebook"]).stem[:60]
        ratio = c["seconds"] / w["seconds"] if c["seconds"] and w["seconds"] else float("nan")
        print(f"{name:60s} {c['seconds'] or float('nan'):8.1f} "
              f"{w['seconds'] or float('nan'):8.1f} {ratio:6.1f} {str(w['cache_hit']):>4s}")
    print(f"wall: cold {cold_s:.1f} s, warm {warm_s:.1f} s, ratio {cold_s / warm_s:.2f} "
          f"({len(cold)} entries, {args.workers} workers)")
    failed = warm[warm["status"] != "done"]
    for _, row in failed.iterrows():
        print(f"NOT DONE {Path(row['notebook']).stem}: {row['failure']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
