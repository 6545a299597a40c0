"""The faithful engine against the plain QNode, side by side in one run (issue 60).

Usage::

    python benchmarks/faithful.py                       # the three profile entries
    python benchmarks/faithful.py --profile docs/results/faithful/profile.md
    python benchmarks/faithful.py --entries LiH_ccpvdz_PAR_HEA H4_ccpvdz_JW_UCCSD

Per entry (QEncode v4, ``../shared/qencode-v4/db``), at the same parameters (fixed
random angles), in this process (1 BLAS thread, the host's kernels):

- seconds per energy evaluation on the plain QNode (``engine qnode``) and on the
  faithful engine, each the median of :func:`harness.bench` repeats, and their ratio;
- the two energies' bits (they must be equal: the row says so);
- with ``--profile FILE``, one evaluation of each under cProfile, every function's own
  time put in one of three shares: **arithmetic** (numpy's and scipy's compiled calls:
  ``einsum``, ``tensordot``, ``expm``, ufuncs, array methods), **PennyLane** (its Python:
  op-math bookkeeping, tape, preprocessing, dispatch) and **other Python**; written as a
  Markdown table.  The remaining share that is arithmetic after the change is what no
  faithful cache can remove.

Timings are wall-clock on a shared machine: compare the ratios of one run.
"""

from __future__ import annotations

import harness  # noqa: F401  (first: the thread pins)

import argparse
import glob
from pathlib import Path

#: The entries profiled: small (LiH PAR/HEA, 5 qubits), medium (H6 JW/HEA ``254551c7``,
#: 9 qubits, 919 terms) and large (N2 JW/UCCSD, 8 qubits, 404 parameters).
DEFAULT = ("LiH_ccpvdz_PAR_HEA", "H6_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_254",
           "N2_ccpvdz_JW_UCCSD")

DB = harness.ROOT.parent / "shared" / "qencode-v4" / "db"


def _energies(prefix):
    import numpy as np

    from qencode_nb import entry as entries
    from qencode_nb.engines import registry
    from qencode_nb.hamiltonian.check import rebuild

    e = entries.load(glob.glob(str(DB / f"{prefix}*.json"))[0])
    rb = rebuild(e)
    bound = registry.get("qnode").bind(e, rb)
    plain = bound.energy()
    fast = registry.get("faithful").bind(e, rb).energy()
    theta = np.random.default_rng(7).uniform(-np.pi, np.pi, bound.num_params)
    return e, plain, fast, theta


def _share(stats) -> dict:
    """Own time per share (arithmetic, PennyLane, other Python) of a cProfile run."""
    out = {"arithmetic": 0.0, "pennylane": 0.0, "other": 0.0}
    for (filename, _, name), (_, _, tottime, _, _) in stats.stats.items():
        compiled = filename == "~" or filename.startswith("<")
        if compiled and any(k in name for k in ("numpy", "ndarray", "scipy", "einsum",
                                                "tensordot", "dot", "matmul", "reduce")):
            out["arithmetic"] += tottime
        elif "/scipy/linalg/" in filename and name == "expm":
            out["arithmetic"] += tottime          # expm's own Python is its Pade steps
        elif "/pennylane/" in filename or "/autoray/" in filename:
            out["pennylane"] += tottime
        else:
            out["other"] += tottime
    return out


def profile(fn, theta) -> tuple:
    import cProfile
    import pstats

    pr = cProfile.Profile()
    pr.enable()
    fn(theta)
    pr.disable()
    stats = pstats.Stats(pr)
    share = _share(stats)
    return stats.total_tt, share


def row(prefix, with_profile: bool) -> dict:
    e, plain, fast, theta = _energies(prefix)
    a, b = plain(theta), fast(theta)
    out = {"entry": prefix, "qubits": e.tapered_num_qubits, "params": len(theta),
           "measurement": fast.fast.measurement, "same_bits": a.hex() == b.hex()}
    for name, fn in (("plain", plain), ("faithful", fast)):
        bench = harness.bench(lambda: fn(theta), 600, budget=3.0, min_reps=2, max_reps=50,
                              slow_call_s=5.0)
        out[f"{name}_s"] = bench["median"]
        if with_profile:
            total, share = profile(fn, theta)
            out[f"{name}_profile"] = {"total_s": total, **share}
    out["ratio"] = out["plain_s"] / out["faithful_s"]
    return out


def markdown(rows) -> str:
    lines = ["| entry | qubits | parameters | measurement | plain s/eval | faithful s/eval "
             "| ratio | same bits | plain: arithmetic / PennyLane / other | faithful: "
             "arithmetic / PennyLane / other |", "|" + "---|" * 10]
    for r in rows:
        def shares(p):
            if not p:
                return ""
            t = sum(p[k] for k in ("arithmetic", "pennylane", "other")) or 1.0
            return " / ".join(f"{100 * p[k] / t:.0f} %" for k in
                              ("arithmetic", "pennylane", "other"))
        lines.append(f"| {r['entry']} | {r['qubits']} | {r['params']} | {r['measurement']} "
                     f"| {r['plain_s']:.4g} | {r['faithful_s']:.4g} | {r['ratio']:.1f}x "
                     f"| {r['same_bits']} | {shares(r.get('plain_profile'))} "
                     f"| {shares(r.get('faithful_profile'))} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", nargs="+", default=list(DEFAULT),
                    help="file-name prefixes in the shared v4 db")
    ap.add_argument("--profile", type=Path, default=None,
                    help="write the profile table (Markdown) here")
    args = ap.parse_args(argv)
    rows = []
    for prefix in args.entries:
        rows.append(row(prefix, args.profile is not None))
        harness.print_row(rows[-1])
    table = markdown(rows)
    print(table)
    if args.profile is not None:
        args.profile.parent.mkdir(parents=True, exist_ok=True)
        args.profile.write_text(table + "\n", encoding="utf-8")
    return 0 if all(r["same_bits"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
