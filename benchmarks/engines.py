"""The sector engine against the circuit backends, side by side in one run.

Usage::

    python benchmarks/engines.py                  # H6, H8, H10 (about 15 min)
    python benchmarks/engines.py --systems H6 H8  # a subset
    python benchmarks/engines.py --json out.json --eval-timeout 300
    python benchmarks/engines.py --part kinds     # fast engine per entry kind (minutes)
    python benchmarks/engines.py --part reruns    # the six long re-runs, fast engine
    python benchmarks/engines.py --part reruns --recorded --recorded-timeout 12000

Parts "evals" and "adapt" (the default) are parts 1 and 2 below; parts "kinds"
and "reruns" (the compiled statevector engine, :mod:`qencode_nb.rerun.fast_engine`,
against PennyLane per entry kind, and the six long full re-runs) are described
in ``benchmarks/engines_kinds.py``.

Part 1, energy + gradient of one ansatz state, per system (the problems of the
shared H6/H8/H10 ADAPT entries: cc-pVDZ, CASSCF active space, 1.0 Angstrom):

- ``sector``: :func:`qencode_nb.rerun.ci_space.energy_and_grad` (adjoint);
- ``statevector``: the generator's sparse statevector engine
  (:func:`qencode_nb.rerun.statevector.energy_and_grad`, untapered CSR matrices);
- ``default.qubit``: a PennyLane QNode, ``qml.grad`` (backprop up to 12
  qubits; above, ``diff_method="adjoint"``: backprop through the H8
  Hamiltonian exhausted 24 GiB);
- ``lightning.qubit``: a PennyLane QNode, ``diff_method="adjoint"``.

The ansatz is the entry's selected excitations at their stored angles (H8,
H10) or the first 28 excitations at fixed random angles (H6, whose recorded
pool is made of Pauli words); the circuit backends apply
``qml.DoubleExcitation``/``qml.SingleExcitation`` on the untapered
jordan_wigner Hamiltonian, whose energy equals the sector's (printed as a
cross-check).  A backend that would not fit (CSR matrices above 16 qubits)
or that exceeds ``--eval-timeout`` is reported with its reason.

Part 2, ADAPT-VQE to below 10 mHa at 1 thread, each run in its own process
(peak memory is that process's ``VmHWM``):

- H8 and H10: the generator's procedure and pool on the sector engine (a
  re-run of the entry); H8 also on the generator's statevector engine
  (:func:`qencode_nb.rerun.adapt.run_adapt`), for the ratio;
- H6: the sector engine with every spin-orbital excitation as the pool (the
  entry's own pool is Pauli words, which do not map; see
  :mod:`qencode_nb.rerun.ci_space_map`), same rules and early stop.

Peak memory includes the rebuild when the disk cache is cold (run twice).

Every timing is wall-clock ``time.perf_counter`` at 1 BLAS thread on a shared
machine: compare ratios, not absolute numbers, across machines.
"""

from __future__ import annotations

import os

from qencode_nb.notebook.pins import pin_environment  # imports no numpy

# All six pin variables at one count, before numpy loads: 1, or the count already
# in OMP_NUM_THREADS.
os.environ.update(pin_environment(int(os.environ.get("OMP_NUM_THREADS", "1"))))

import argparse  # noqa: E402
import json  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import engines_kinds as K  # noqa: E402  (imports no numpy)

# Measured numbers moved here from the docstrings of qencode_nb.rerun
# (shared 2-core machine, 1 BLAS thread; compare ratios, not absolutes):
#
# - ci_space.CSR_MAX_DIM (1,000 determinants: CSR up to it, contract_2e above),
#   per H·ψ, H_n chains, STO-3G: dim 36 CSR 3.8 µs vs contract_2e 118 µs; dim 400
#   31 µs vs 77 µs; dim 4,900 1.45 ms (plus 1.6 s to build the CSR matrix) vs
#   1.05 ms.
# - ci_space_map's pool-index cache: the generator's tapering test of each
#   excitation (B**3 = -B on tapered CSR matrices) costs about 1 min at H10,
#   hence the small JSON file next to the rebuild cache.

ROOT = Path(__file__).resolve().parents[1]
DB = ROOT.parent / "shared" / "qencode-v4" / "db"
SYSTEMS = ("H6", "H8", "H10")
PARTS = ("evals", "adapt", "kinds", "reruns")
H6_OPS = 28
CSR_MAX_QUBITS = 16


class Timeout(Exception):
    pass


def _alarm(seconds):
    def handler(signum, frame):
        raise Timeout(f"exceeded {seconds} s")
    signal.signal(signal.SIGALRM, handler)
    signal.alarm(int(seconds))


def _timed(fn, timeout):
    """(seconds per call, value): one warm-up call, then repeats up to ~1 s."""
    _alarm(timeout)
    try:
        t = time.perf_counter()
        value = fn()
        first = time.perf_counter() - t
        n = max(1, min(20, int(1.0 / max(first, 1e-6))))
        if first > 5:
            return first, value
        t = time.perf_counter()
        for _ in range(n):
            value = fn()
        return (time.perf_counter() - t) / n, value
    finally:
        signal.alarm(0)


def _entry(system):
    from qencode_nb import entry as entries

    return entries.load(next(DB.glob(f"{system}_ccpvdz_JW_ADAPT_*.json")))


def _ansatz(system, e, sp):
    import numpy as np

    if system == "H6":
        idx = list(range(H6_OPS))
        theta = np.random.default_rng(6).uniform(-0.2, 0.2, size=H6_OPS)
        return idx, theta
    return [int(k) for k in e.adapt["selected_operator_indices"]], \
        np.array(e.optimal_params, dtype=float)


def _sector_problem(system, e):
    """(SectorProblem-like object, chemistry) for the system."""
    import pennylane as qml

    from qencode_nb.problem.check import rebuild
    from qencode_nb.rerun.problem import build_problem
    from qencode_nb.rerun import ci_space as S
    from qencode_nb.rerun import ci_space_generators as G
    from qencode_nb.rerun import ci_space_map as sector_map
    from qencode_nb.rerun.ansatz import uccsd_excitations

    rebuilt = rebuild(e)
    if system != "H6":
        return sector_map.build(e, rebuilt)
    sec = S.from_summary(rebuilt.chemistry)
    exc = uccsd_excitations(e.active_space[0], 2 * e.active_space[1])
    gens = G.generators(sec, [qml.generator(g(0.0, wires=list(w)), format="observable")
                              for g, w in exc])
    return sector_map.SectorProblem(ci_space=sec, generators=gens,
                                    excitations=[(g.__name__, list(w)) for g, w in exc],
                                    angle_factor=1.0)


def part1(systems, timeout):
    import numpy as np
    import pennylane as qml
    from pennylane import numpy as pnp

    from qencode_nb.rerun import ci_space as S
    from qencode_nb.rerun import statevector as sv
    from qencode_nb.problem.chemistry import run_chemistry
    from qencode_nb.problem.of_bridge import build_of_bridge

    rows = []
    for system in systems:
        e = _entry(system)
        sp = _sector_problem(system, e)
        sel, theta = _ansatz(system, e, sp)
        nq = 2 * e.active_space[1]
        res = {"system": system, "qubits": nq, "sector_dim": sp.ci_space.dim, "ops": len(sel)}
        t, (E, _) = _timed(lambda: S.energy_and_grad(sp.ci_space, sp.generators, sel, theta),
                           timeout)
        res["sector"] = {"seconds": t, "energy": E}
        gates = [(getattr(qml, sp.excitations[k][0]), sp.excitations[k][1]) for k in sel]
        hf = np.array([1] * e.active_space[0] + [0] * (nq - e.active_space[0]))
        if nq > CSR_MAX_QUBITS:
            reason = (f"{nq} qubits: the untapered CSR Hamiltonian and the circuit backends "
                      "need minutes per evaluation and many GB; not run")
            for name in ("statevector", "default.qubit", "lightning.qubit"):
                res[name] = {"seconds": None, "reason": reason}
            rows.append(res)
            print(json.dumps(res), flush=True)
            continue
        chem = run_chemistry(e.geometry, e.basis, e.charge, e.spin, *e.active_space,
                             e.orbital_optimization)
        H, _ = build_of_bridge(chem, "jordan_wigner", verify_tol=None)
        wires = list(range(nq))
        try:
            H_sp = H.sparse_matrix(wire_order=wires).tocsr()
            Bs, B2s = [], []
            for g, w in gates:
                G = qml.generator(g(0.0, wires=w), format="observable")
                B = (2j * sv.pauli_csr(G, wires)).tocsr()
                Bs.append(B)
                B2s.append((B @ B).tocsr())
            psi0 = sv.hf_statevector(hf)
            idx = list(range(len(gates)))
            t, (E, _) = _timed(lambda: sv.energy_and_grad(H_sp, Bs, B2s, psi0, idx,
                                                          list(theta)), timeout)
            res["statevector"] = {"seconds": t, "energy": E}
        except (Timeout, MemoryError) as exc:
            res["statevector"] = {"seconds": None,
                                  "reason": f"{type(exc).__name__}: {str(exc)[:120]}"}
        for name, diff in (("default.qubit", "backprop" if nq <= 12 else "adjoint"),
                           ("lightning.qubit", "adjoint")):
            dev = qml.device(name, wires=wires)

            @qml.qnode(dev, diff_method=diff)
            def circuit(p):
                qml.BasisState(hf, wires=wires)
                for i, (g, w) in enumerate(gates):
                    g(p[i], wires=w)
                return qml.expval(H)

            def both():
                p = pnp.array(theta, requires_grad=True)
                return float(circuit(p)), qml.grad(circuit)(p)
            try:
                t, (E, _) = _timed(both, timeout)
                res[name] = {"seconds": t, "energy": E, "diff_method": diff}
            except (Timeout, MemoryError) as exc:
                res[name] = {"seconds": None,
                             "reason": f"{diff}: {type(exc).__name__}: {str(exc)[:120]}"}
                try:   # the energy alone, for scale
                    t, E = _timed(lambda: float(circuit(np.array(theta))), timeout)
                    res[name]["energy_only_seconds"] = t
                    res[name]["reason"] += f"; energy alone {t:.3g} s"
                except (Timeout, MemoryError) as exc2:
                    res[name]["reason"] += f"; energy alone: {type(exc2).__name__}"
        rows.append(res)
        print(json.dumps(res), flush=True)
    return rows


_ADAPT = r"""
import json, sys, time
from qencode_nb.notebook.pins import pin
PIN = pin(1, sys.argv[4] or None)
sys.path.insert(0, sys.argv[3])
import engines as B
from qencode_nb.rerun import adapt
from qencode_nb.rerun import ci_space as S
system, engine = sys.argv[1], sys.argv[2]
e = B._entry(system)
HOP = {"calls": 0, "seconds": 0.0}
_hop = S.CISpace.hop
def hop(self, c):
    t = time.perf_counter()
    try:
        return _hop(self, c)
    finally:
        HOP["calls"] += 1
        HOP["seconds"] += time.perf_counter() - t
S.CISpace.hop = hop
t0 = time.perf_counter()
if engine == "sector":
    sp = B._sector_problem(system, e)
    build = time.perf_counter() - t0
    res = adapt.run_adapt_sector(sp.ci_space, sp.generators,
        gradient_threshold=e.adapt["gradient_threshold"],
        max_operators=e.adapt["max_operators"], max_iterations=e.max_iterations,
        e_target=e.casci_energy, inner="l-bfgs-b")
else:
    from qencode_nb.problem.check import rebuild
    from qencode_nb.rerun.problem import build_problem
    p = build_problem(e, rebuild(e))
    build = time.perf_counter() - t0
    res = adapt.run_adapt(p.hamiltonian, p.pool, e.hf_tapered_state, p.wires,
        gradient_threshold=e.adapt["gradient_threshold"], max_operators=e.adapt["max_operators"],
        max_iterations=e.max_iterations, e_target=e.casci_energy, inner="l-bfgs-b",
        adapt_engine="statevector")
print(json.dumps({"system": system, "engine": engine, "build_s": build, "adapt_s": res.wall_s,
    "ops": len(res.selected_indices), "error_mha": (res.best_energy - e.casci_energy) * 1e3,
    "selection_as_recorded": (None if system == "H6" else
                              res.selected_indices == e.adapt["selected_operator_indices"]),
    "energy": res.best_energy, "published": e.published_energy, "nfev": res.nfev,
    "first_difference": next((i for i, (a, b) in enumerate(zip(res.selected_indices,
        e.adapt["selected_operator_indices"])) if a != b), None),
    "hop_calls": HOP["calls"], "hop_s": HOP["seconds"],
    "threads": PIN["blas_threads"], "coretype": PIN["blas_coretype"],
    "peak_mib": B.peak_mib()}))
"""


def peak_mib() -> float:
    """This process's peak resident memory (``VmHWM``, reset at exec, unlike
    ``ru_maxrss`` which a child inherits from its parent)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def adapt_run(system, engine, timeout, coretype=None) -> dict:
    """One ADAPT run of part 2 in its own process (``engine`` "sector" or
    "statevector"); a row with ``reason`` when it failed or timed out."""
    try:
        proc = subprocess.run([sys.executable, "-c", _ADAPT, system, engine,
                               str(Path(__file__).parent), coretype or ""],
                              capture_output=True, text=True, timeout=timeout)
        if proc.returncode:
            return {"system": system, "engine": engine,
                    "reason": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return {"system": system, "engine": engine, "reason": f"exceeded {timeout} s"}


def part2(systems, timeout, coretype=None):
    cases = [(s, "sector") for s in systems]
    if "H8" in systems:
        cases.append(("H8", "statevector"))
    rows = []
    for system, engine in cases:
        row = adapt_run(system, engine, timeout, coretype)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main(argv=None):
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
                    help="parts to run (default: evals adapt, the two parts above); "
                         "'kinds' and 'reruns' are in benchmarks/engines_kinds.py")
    ap.add_argument("--kinds", nargs="+", default=None, choices=[k for k, _ in K.KINDS],
                    metavar="KIND", help="part kinds: a subset of " + ", ".join(
                        repr(k) for k, _ in K.KINDS))
    ap.add_argument("--budget", type=float, default=2.0,
                    help="part kinds/reruns: seconds of repeats per timing (default 2; "
                         "at least 3 repeats, 1 above 20 s per call)")
    ap.add_argument("--reruns", action="store_true",
                    help="also run part reruns (opt-in: minutes on the fast engine)")
    ap.add_argument("--entries", nargs="+", default=None, choices=[k for k, _ in K.LONG],
                    metavar="LABEL", help="part reruns: a subset of " + ", ".join(
                        repr(k) for k, _ in K.LONG))
    ap.add_argument("--recorded", action="store_true",
                    help="part reruns: also run each full re-run on the recorded backend "
                         "(hours; own process each, --recorded-timeout)")
    ap.add_argument("--recorded-timeout", type=float, default=3600,
                    help="seconds allowed per recorded-backend re-run (default 3600)")
    ap.add_argument("--json", default=None, help="write all rows to this file")
    args = ap.parse_args(argv)
    parts = set(args.part or [p for p in ("evals", "adapt") if p != args.skip])
    if args.reruns:
        parts.add("reruns")
    out = {}
    if "kinds" in parts:
        out["kinds"] = K.part_kinds(args.kinds, args.eval_timeout, args.budget)
        K.print_kinds(out["kinds"])
        out["numba_first_calls"] = K.numba_first_calls()
        K.print_first_calls(out["numba_first_calls"])
    if "evals" in parts:
        out["evals"] = part1(args.systems, args.eval_timeout)
        print("\nenergy + gradient, seconds per evaluation (ratio = backend / sector):")
        print(f"{'system':6} {'ops':>4} {'sector':>10} " + " ".join(
            f"{n:>26}" for n in ("statevector", "default.qubit", "lightning.qubit")))
        for r in out["evals"]:
            base = r["sector"]["seconds"]
            cells = []
            for n in ("statevector", "default.qubit", "lightning.qubit"):
                t = r[n]["seconds"]
                cells.append(f"{'not run':>26}" if t is None else
                             f"{t:>12.4g} ({t / base:>9.1f}x)")
            print(f"{r['system']:6} {r['ops']:>4} {base:>10.4g} " + " ".join(cells))
            for n in ("statevector", "default.qubit", "lightning.qubit"):
                if r[n].get("energy") is not None:
                    print(f"    {n}: energy - sector energy = "
                          f"{r[n]['energy'] - r['sector']['energy']:+.2e} Ha")
                elif r[n].get("reason"):
                    print(f"    {n}: {r[n]['reason']}")
    if "adapt" in parts:
        out["adapt"] = part2(args.systems, args.adapt_timeout, args.coretype)
        print("\nADAPT-VQE to < 10 mHa at 1 thread (own process each):")
        for r in out["adapt"]:
            if "reason" in r:
                print(f"{r['system']:4} {r['engine']:11} not run: {r['reason']}")
                continue
            print(f"{r['system']:4} {r['engine']:11} adapt {r['adapt_s']:8.2f} s  build "
                  f"{r['build_s']:6.2f} s  ops {r['ops']:4d}  error {r['error_mha']:.4f} mHa  "
                  f"selection as recorded: {r['selection_as_recorded']}"
                  + (f" (first difference at operator {r['first_difference']})"
                     if r["selection_as_recorded"] is False else "")
                  + f"  H·psi {r['hop_calls']} calls {r['hop_s']:.1f} s  peak "
                  f"{r['peak_mib']:.0f} MiB  threads {r['threads']} {r['coretype'] or ''}")
        by = {(r["system"], r["engine"]): r for r in out["adapt"] if "reason" not in r}
        if ("H8", "sector") in by and ("H8", "statevector") in by:
            print(f"H8 ADAPT statevector / sector: "
                  f"{by['H8', 'statevector']['adapt_s'] / by['H8', 'sector']['adapt_s']:.1f}x")
    if "reruns" in parts:
        out["reruns"] = K.part_reruns(args.entries, args.eval_timeout, args.budget,
                                      args.adapt_timeout, args.coretype, args.recorded,
                                      args.recorded_timeout)
        K.print_reruns(out["reruns"])
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
