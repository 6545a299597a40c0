"""The engines side by side in one run: the sector engine against the circuit
backends, and the fast engine against PennyLane.

Usage::

    python benchmarks/engines.py                  # H6, H8, H10 (about 15 min)
    python benchmarks/engines.py --systems H6 H8  # a subset
    python benchmarks/engines.py --json out.json --eval-timeout 300
    python benchmarks/engines.py --part kinds     # fast engine per entry kind (minutes)
    python benchmarks/engines.py --part kinds --kinds "HEA BK"   # one kind (H2, seconds)
    python benchmarks/engines.py --part reruns    # the six long re-runs, fast engine
    python benchmarks/engines.py --part reruns --recorded --recorded-timeout 12000

Parts (each described in its module):

- ``evals`` (default): energy + gradient of one ansatz state per system on the
  sector engine, the generator's statevector engine, ``default.qubit`` and
  ``lightning.qubit`` (``benchmarks/engines_evals.py``);
- ``adapt`` (default): ADAPT-VQE to below 10 mHa at 1 thread on the sector engine
  (H8 also on the statevector engine), each run in its own process
  (``benchmarks/engines_adapt.py``);
- ``kinds``: the compiled statevector engine
  (:mod:`qencode_nb.engines.fast.compiled`) against PennyLane per entry kind, and
  its first calls in a new process (``benchmarks/engines_kinds.py``);
- ``reruns``: the six long full re-runs on the fast engine against the recorded
  backend's time (``benchmarks/engines_reruns.py``).

Every timing is wall-clock ``time.perf_counter`` at 1 BLAS thread on a shared
machine (:mod:`harness`): compare ratios, not absolute numbers, across machines.
"""

from __future__ import annotations

import harness  # noqa: I001  (first: pins the BLAS threads before numpy loads)

import argparse

import engines_adapt
import engines_evals
import engines_kinds
import engines_reruns

# Measured numbers moved here from the docstrings of qencode_nb.engines.sector
# (shared 2-core machine, 1 BLAS thread; compare ratios, not absolutes):
#
# - space.CSR_MAX_DIM (1,000 determinants: CSR up to it, contract_2e above),
#   per H·ψ, H_n chains, STO-3G: dim 36 CSR 3.8 µs vs contract_2e 118 µs; dim 400
#   31 µs vs 77 µs; dim 4,900 1.45 ms (plus 1.6 s to build the CSR matrix) vs
#   1.05 ms.
# - mapping's pool-index cache: the generator's tapering test of each
#   excitation (B**3 = -B on tapered CSR matrices) costs about 1 min at H10,
#   hence the small JSON file next to the rebuild cache.

SYSTEMS = ("H6", "H8", "H10")
PARTS = ("evals", "adapt", "kinds", "reruns")


def parser() -> argparse.ArgumentParser:
    """The command line of the module docstring."""
    kinds = [k for k, _ in engines_kinds.KINDS]
    labels = [k for k, _ in engines_reruns.LONG]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    ap.add_argument("--eval-timeout", type=float, default=300,
                    help="seconds allowed per backend and evaluation (default 300)")
    ap.add_argument("--adapt-timeout", type=float, default=1800,
                    help="seconds allowed per ADAPT run (default 1800)")
    ap.add_argument("--skip", choices=("evals", "adapt"), default=None)
    ap.add_argument("--coretype", default=None,
                    help="OPENBLAS_CORETYPE of the ADAPT runs, e.g. Cooperlake (under it "
                         "PySCF's H10 CASSCF orbitals are the generator's)")
    ap.add_argument("--part", nargs="+", default=None, choices=PARTS,
                    help="parts to run (default: evals adapt)")
    ap.add_argument("--kinds", nargs="+", default=None, choices=kinds, metavar="KIND",
                    help="part kinds: a subset of " + ", ".join(map(repr, kinds)))
    ap.add_argument("--budget", type=float, default=2.0,
                    help="part kinds/reruns: seconds of repeats per timing (default 2; "
                         "at least 3 repeats, 1 above 20 s per call)")
    ap.add_argument("--no-first-calls", action="store_true",
                    help="part kinds: skip the fast engine's first calls in new processes")
    ap.add_argument("--reruns", action="store_true",
                    help="also run part reruns (opt-in: minutes on the fast engine)")
    ap.add_argument("--entries", nargs="+", default=None, choices=labels, metavar="LABEL",
                    help="part reruns: a subset of " + ", ".join(map(repr, labels)))
    ap.add_argument("--recorded", action="store_true",
                    help="part reruns: also run each full re-run on the recorded backend "
                         "(hours; own process each, --recorded-timeout)")
    ap.add_argument("--recorded-timeout", type=float, default=3600,
                    help="seconds allowed per recorded-backend re-run (default 3600)")
    ap.add_argument("--json", default=None, help="write all rows to this file")
    return ap


def main(argv=None) -> None:
    """Run the parts asked for, print their tables, write ``--json``."""
    args = parser().parse_args(argv)
    parts = set(args.part or [p for p in ("evals", "adapt") if p != args.skip])
    if args.reruns:
        parts.add("reruns")
    out = {}
    if "kinds" in parts:
        out["kinds"] = engines_kinds.part_kinds(args.kinds, args.eval_timeout, args.budget)
        engines_kinds.print_kinds(out["kinds"])
        if not args.no_first_calls:
            out["numba_first_calls"] = engines_kinds.numba_first_calls()
            engines_kinds.print_first_calls(out["numba_first_calls"])
    if "evals" in parts:
        out["evals"] = engines_evals.part_evals(args.systems, args.eval_timeout)
        engines_evals.print_evals(out["evals"])
    if "adapt" in parts:
        out["adapt"] = engines_adapt.part_adapt(args.systems, args.adapt_timeout,
                                                args.coretype)
        engines_adapt.print_adapt(out["adapt"])
    if "reruns" in parts:
        out["reruns"] = engines_reruns.part_reruns(
            args.entries, args.eval_timeout, args.budget, args.adapt_timeout, args.coretype,
            args.recorded, args.recorded_timeout)
        engines_reruns.print_reruns(out["reruns"])
    harness.write_json(args.json, out)


if __name__ == "__main__":
    main()
