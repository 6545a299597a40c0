"""The > 12-qubit ADAPT pool's keep/drop check: Pauli words against the matrix rule.

Usage::

    python benchmarks/excitation_check.py                 # H8 and H10 (cc-pVDZ, JW ADAPT)
    python benchmarks/excitation_check.py --systems H8

For each entry, in one process: the light rebuild (cached after its first run), every
UCCSD excitation tapered as the generator tapers it (common to both checks, timed
apart), then :func:`qencode_nb.engines.excitation_check.keeps` (Pauli bounds, the
matrix only where they do not decide) and
:func:`~qencode_nb.engines.excitation_check.keeps_by_matrix` (the generator's CSR rule,
three sparse products on ``2**n`` rows) over all of them.  Prints the seconds of each,
their ratio, the kept count of each (H8 278, H10 875: ``adapt.n_operators_pool``) and
whether every decision agrees; exit status 1 when one does not.  Wall-clock on a shared
machine: compare the ratio.
"""

from __future__ import annotations

import harness  # noqa: I001  (first: pins the BLAS threads before numpy loads)

import argparse
import sys
import time

SYSTEMS = {"H8": "H8_ccpvdz_JW_ADAPT_*.json", "H10": "H10_ccpvdz_JW_ADAPT_*.json"}


def measure(name: str) -> dict:
    import pennylane as qml
    from pennylane import qchem

    from qencode_nb import entry as entries
    from qencode_nb.engines.ansatz import uccsd_excitations
    from qencode_nb.engines.excitation_check import keeps, keeps_by_matrix
    from qencode_nb.hamiltonian.cache import cached_rebuild_entry

    e = entries.load(harness.db_path(SYSTEMS[name]))
    _, tap = cached_rebuild_entry(e, light=True)
    wires = list(range(tap.n_qubits_full - len(tap.generators)))
    start = time.perf_counter()
    with qml.QueuingManager.stop_recording():
        generators = [qchem.taper(qml.generator(g(0.0, wires=list(w)), format="observable"),
                                  tap.generators, tap.paulixops, tap.z2_sectors)
                      for g, w in uccsd_excitations(e.active_space[0], tap.n_qubits_full)]
    taper_s = time.perf_counter() - start
    fast, fast_s = harness.timed(lambda: [keeps(G, wires) for G in generators])
    slow, slow_s = harness.timed(lambda: [keeps_by_matrix(G, wires) for G in generators])
    return {"system": name, "qubits": len(wires), "excitations": len(generators),
            "taper_s": round(taper_s, 2), "pauli_s": round(fast_s, 2),
            "matrix_s": round(slow_s, 2), "ratio": round(slow_s / fast_s, 1),
            "kept_pauli": sum(fast), "kept_matrix": sum(slow),
            "published_pool": e.adapt["n_operators_pool"], "agree": fast == slow}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    args = ap.parse_args(argv)
    rows = [measure(name) for name in args.systems]
    for row in rows:
        harness.print_row(row)
    return 0 if all(r["agree"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
