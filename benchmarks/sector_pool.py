"""The sector engine's pool: built every run (before) against read from its kept file
(:mod:`qencode_nb.engines.sector.pool_store`), side by side in one run.

Usage::

    python benchmarks/sector_pool.py                   # H8 and H10, 3 repeats
    python benchmarks/sector_pool.py --systems H10 --repeats 5

Per system, in this process at 1 BLAS thread (the entry's rebuild read from the rebuild
cache, built first when absent), each repeat times, one after the other:

- ``choose``: the generator's > 12-qubit pool through ``qchem.taper``
  (:func:`~qencode_nb.engines.ansatz.tapered_pool_excitations`); before, every numeric
  environment paid it once (its file was keyed by the rebuild);
- ``generators``: the kept excitations' generators in the CI space
  (:func:`~qencode_nb.engines.sector.generators.generators`); before, every run paid it;
- ``store``: :func:`~qencode_nb.engines.sector.pool_store.sector_pool` into an empty cache
  folder (choose, generators, write): now paid once per content, in the first numeric
  environment;
- ``read``: ``sector_pool`` from that folder (every later run, in any environment).

Prints the medians, the file's size and the ratios ``before`` (generators; and choose +
generators in an environment's first run) / ``read``.  Wall-clock seconds on a shared
machine: compare the ratios, not absolutes, across machines.
"""

from __future__ import annotations

import harness  # noqa: I001  (first: pins the BLAS threads before numpy loads)

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import problems


def one_repeat(entry, rebuilt, folder: Path) -> dict:
    """Seconds of choose, generators, store (into ``folder``, emptied) and read."""
    import shutil

    import pennylane as qml

    from qencode_nb.engines.ansatz import tapered_pool_excitations, uccsd_excitations
    from qencode_nb.engines.sector import space as S
    from qencode_nb.engines.sector.generators import generators
    from qencode_nb.engines.sector.pool_store import sector_pool

    tap = rebuilt.tapering
    sec = S.from_summary(rebuilt.chemistry)
    excitations = uccsd_excitations(entry.active_space[0], tap.n_qubits_full)
    out = {}
    start = time.perf_counter()
    pool = tapered_pool_excitations(entry.active_space[0], tap.n_qubits_full,
                                    tap.generators, tap.paulixops, tap.z2_sectors)
    out["choose"] = time.perf_counter() - start
    start = time.perf_counter()
    with qml.QueuingManager.stop_recording():
        built = generators(sec, [qml.generator(g(0.0, wires=list(w)), format="observable")
                                 for g, w, _ in pool])
    out["generators"] = time.perf_counter() - start
    shutil.rmtree(folder, ignore_errors=True)
    for name in ("store", "read"):
        start = time.perf_counter()
        _, gens, status = sector_pool(entry, rebuilt, sec, excitations, cache_dir=folder)
        out[name] = time.perf_counter() - start
        assert status == ("built" if name == "store" else "hit"), status
        assert len(gens) == len(built)
    out["operators"] = len(built)
    out["file_mb"] = sum(p.stat().st_size for p in folder.rglob("*.npz")) / 1e6
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", nargs="+", default=["H8", "H10"])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-pool-") as tmp:
        for system in args.systems:
            entry = problems.adapt_entry(system)
            start = time.perf_counter()
            rebuilt = problems.rebuild(entry)
            print(f"{system}: rebuild {time.perf_counter() - start:.1f} s "
                  f"({rebuilt.chemistry.cache_status})", flush=True)
            rows = [one_repeat(entry, rebuilt, Path(tmp) / system) for _ in range(args.repeats)]
            med = {k: statistics.median(r[k] for r in rows)
                   for k in ("choose", "generators", "store", "read")}
            print(f"  {rows[0]['operators']} operators, file {rows[0]['file_mb']:.1f} MB; "
                  "median s over "
                  f"{args.repeats}: " + ", ".join(f"{k} {v:.2f}" for k, v in med.items()))
            print(f"  every run: before {med['generators']:.2f} s, now {med['read']:.2f} s "
                  f"({med['generators'] / med['read']:.1f}x)")
            first = med["choose"] + med["generators"]
            print(f"  an environment's first run: before {first:.2f} s, now {med['read']:.2f} s "
                  f"({first / med['read']:.1f}x; the very first store {med['store']:.2f} s)",
                  flush=True)


if __name__ == "__main__":
    main()
