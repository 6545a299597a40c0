"""Rebuild + Hamiltonian check, cold (empty cache) vs warm (cache hit), side by side.

Usage::

    python benchmarks/bench_rebuild.py                 # all entries of the shared db
    python benchmarks/bench_rebuild.py H2_ LiH_ccpvdz_PAR  # entries whose file name
                                                       # starts with / contains these
    python benchmarks/bench_rebuild.py --max-qubits 12 --timeout 300 --json out.json

For each entry, in one process: *cold* = :func:`qencode_nb.hamiltonian.hamcheck.check_entry`
with a fresh, empty temporary cache (PySCF, of_bridge, tapering, exact ground
energy, comparison); *warm* = the same call again (cache hit, comparison only).
Prints per-entry times, the cold/warm ratio, the Hamiltonian-check numbers,
totals, and every entry that was not measured with its reason (an exception,
a timeout, or ``--max-qubits``): nothing is skipped silently.  Library import
time is measured once, before the loop, and reported separately.

Exit status 1 only when the cache misbehaves (a cold hit, a warm miss, or a
warm result that differs from the cold one).

Runs at one BLAS thread (all six pin variables set here before numpy loads;
the count already in ``OMP_NUM_THREADS`` is kept).
Timings are wall-clock ``time.perf_counter`` on a shared machine: compare the
ratios, not the absolute numbers, across machines.
"""

from __future__ import annotations

import harness  # noqa: I001  (first: pins the BLAS threads before numpy loads)

import argparse
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path


def _select(db: Path, patterns: list[str]) -> list[Path]:
    files = sorted(db.glob("*.json"))
    if not patterns:
        return files
    chosen = []
    for pat in patterns:
        p = Path(pat)
        if p.suffix == ".json" and p.is_file():
            chosen.append(p)
            continue
        hits = [f for f in files if f.name.startswith(pat)] or \
               [f for f in files if pat in f.name]
        if not hits:
            raise SystemExit(f"no entry in {db} matches {pat!r}")
        chosen += [h for h in hits if h not in chosen]
    return chosen


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("entries", nargs="*", help="file-name prefixes/substrings or paths "
                    "(default: every entry of --db)")
    ap.add_argument("--db", type=Path, default=harness.DB)
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="seconds allowed for one cold rebuild (0 = none)")
    ap.add_argument("--max-qubits", type=int, default=None,
                    help="list entries with more untapered qubits as not measured")
    ap.add_argument("--json", type=Path, default=None, help="write the rows here")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    import numpy  # noqa: F401
    import openfermion  # noqa: F401
    import pennylane  # noqa: F401
    import pyscf  # noqa: F401
    import scipy.sparse.linalg  # noqa: F401

    from qencode_nb.hamiltonian import cache
    from qencode_nb import entry as entries
    from qencode_nb.hamiltonian.hamcheck import check_entry
    t_import = time.perf_counter() - t0

    files = _select(args.db, args.entries)
    rows, failed = [], []
    print(f"# {len(files)} entries from {args.db}; library imports {t_import:.2f} s "
          f"(not counted below); OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    header = (f"{'entry':48s} {'q':>5s} {'terms':>6s} {'max|dc|':>8s} {'dE_exact':>9s} "
              f"{'fingerp.':>8s} {'source':>9s} {'cold s':>8s} {'warm s':>8s} {'ratio':>7s}")
    print(header)
    for path in files:
        stem, _, digest = path.stem.partition("__sha256_")
        name = f"{stem.replace('_tapered', '')}#{digest[:6]}"
        try:
            entry = entries.load(path)
        except Exception as exc:  # noqa: BLE001
            failed.append((name, f"load: {type(exc).__name__}: {exc}"))
            print(f"{name:48s} NOT MEASURED: {failed[-1][1]}", flush=True)
            continue
        full = entry.raw["encoding"]["tapering"]["original_num_qubits"]
        if args.max_qubits is not None and full > args.max_qubits:
            failed.append((name, f"not run: {full} untapered qubits > --max-qubits "
                                 f"{args.max_qubits}"))
            print(f"{name:48s} NOT MEASURED: {failed[-1][1]}", flush=True)
            continue
        with tempfile.TemporaryDirectory(prefix="qnb-bench-") as tmp:
            try:
                cold, t_cold = harness.timed(lambda: check_entry(entry, cache_dir=tmp),
                                             args.timeout)
                warm, t_warm = harness.timed(lambda: check_entry(entry, cache_dir=tmp))
            except harness.Timeout:
                failed.append((name, f"timeout: cold rebuild over {args.timeout:.0f} s"))
                print(f"{name:48s} NOT MEASURED: {failed[-1][1]}", flush=True)
                continue
            except Exception as exc:  # noqa: BLE001
                failed.append((name, f"{type(exc).__name__}: {exc}"))
                print(f"{name:48s} NOT MEASURED: {failed[-1][1]}", flush=True)
                traceback.print_exc(limit=3)
                continue
        if cold["cache_hit"] or not warm["cache_hit"]:
            failed.append((name, f"cache misbehaved: cold hit={cold['cache_hit']}, "
                                 f"warm hit={warm['cache_hit']}"))
        same = all(cold[k] == warm[k] for k in ("max_abs_dcoeff", "ground_energy",
                                                "fingerprint_ha", "terms_match"))
        if not same:
            failed.append((name, "warm result differs from cold"))
        row = {"entry": name, "qubits_full": full, "qubits": cold["num_qubits"],
               "n_terms": cold["n_terms"], "terms_match": cold["terms_match"],
               "max_abs_dcoeff": cold["max_abs_dcoeff"],
               "ground_energy_diff": cold["ground_energy_diff"],
               "fingerprint_ha": cold["fingerprint_ha"],
               "source_inferred": cold["hamiltonian_source_inferred"],
               "source_matches": cold["source_matches"],
               "cold_s": t_cold, "warm_s": t_warm, "ratio": t_cold / t_warm}
        rows.append(row)
        print(f"{name:48s} {full:>2d}>{row['qubits']:<2d} {row['n_terms']:>6d} "
              f"{row['max_abs_dcoeff']:8.1e} {row['ground_energy_diff']:9.1e} "
              f"{row['fingerprint_ha']:8.1e} {row['source_inferred'][:9]:>9s} "
              f"{t_cold:8.3f} {t_warm:8.4f} {row['ratio']:7.0f}", flush=True)

    if rows:
        tc = sum(r["cold_s"] for r in rows)
        tw = sum(r["warm_s"] for r in rows)
        print(f"# total over {len(rows)} measured entries: cold {tc:.2f} s, warm {tw:.3f} s, "
              f"ratio {tc / tw:.0f}x; "
              f"all terms match: {all(r['terms_match'] for r in rows)}; "
              f"max |dc| {max(r['max_abs_dcoeff'] for r in rows):.2e} Ha; "
              f"max |dE| {max(abs(r['ground_energy_diff']) for r in rows):.2e} Ha; "
              f"max fingerprint {max(r['fingerprint_ha'] for r in rows):.2e} Ha")
    print(f"# not measured / problems: {len(failed)}")
    for name, reason in failed:
        print(f"#   {name}: {reason}")
    print(f"# cache stats: {cache.STATS}")
    harness.write_json(args.json, {"rows": rows, "not_measured": failed,
                                   "import_s": t_import})
    problems = [r for _, r in failed if r.startswith(("cache misbehaved", "warm result"))]
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
