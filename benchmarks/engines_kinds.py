"""The fast engine against PennyLane, per entry kind, and the long re-runs.

Run through ``benchmarks/engines.py --part kinds`` / ``--part reruns`` (which
pins the BLAS threads before numpy loads); this module imports no numpy at
import time.

Part "kinds", one real entry per kind at its stored optimal parameters
(:data:`KINDS`): seconds per energy and per energy+gradient on

- ``default.qubit``: the recorded backend's QNode
  (:func:`qencode_nb.rerun.backends.qnode_energy`); energy+gradient as the
  generator's L-BFGS-B step computes it (``qnode(p)`` then
  ``qml.grad(qnode)(p)``, backprop);
- ``lightning.qubit``: the same circuit, ``diff_method="adjoint"``, same pair;
- ``fast``: :class:`qencode_nb.rerun.fast_engine.Energy` (numba), ``en(p)`` and
  ``en.energy_and_grad(p)``.  ADAPT above 12 untapered qubits (H8): the
  sector engine (:mod:`qencode_nb.rerun.ci_space`), and the circuit backends
  run the untapered excitation circuit of ``engines.py`` part 1
  (``default.qubit`` with ``diff_method="adjoint"`` there).

Each timing: one warm-up call (reported as ``first``, numba load or compile
for the fast engine), then the median of repeats (at least 3, up to about
``--budget`` seconds; 1 repeat when a call takes over 20 s).

Part "reruns", the six long entries (:data:`LONG`): the full re-run on the
fast engine (HEA, UCCSD: :func:`qencode_nb.rerun.vqe.run_vqe` with the
recorded optimiser, budgets, restarts and seed; H10 ADAPT: the sector
engine's ADAPT, as part 2) and an *estimate* of the recorded backend's time
(seconds per energy, or energy+gradient for L-BFGS-B, on ``default.qubit`` at
the stored parameters x the evaluations the fast re-run made).  ``--recorded``
really runs the recorded backend (own process each, ``--recorded-timeout``).
Beside them, the wall times measured in the previous full sweep
(:data:`SWEEP_SECONDS`).
"""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DB = ROOT.parent / "shared" / "qencode-v4" / "db"

#: (kind, entry file glob) of part "kinds".
KINDS = (
    ("HEA JW", "H6_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_fa91*.json"),
    ("HEA PAR", "N2_ccpvdz_PAR_HEA_*.json"),
    ("HEA BK", "H2_ccpvdz_BK_HEA_*.json"),
    ("UCCSD", "N2_ccpvdz_JW_UCCSD_*.json"),
    ("ADAPT <= 12 q", "H6_ccpvdz_JW_ADAPT_*.json"),
    ("ADAPT > 12 q", "H8_ccpvdz_JW_ADAPT_*.json"),
)

#: (label, entry file glob) of part "reruns".
LONG = (
    ("N2 JW/UCCSD", "N2_ccpvdz_JW_UCCSD_*.json"),
    ("H6 JW/HEA fa91", "H6_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_fa91*.json"),
    ("H10 ADAPT", "H10_ccpvdz_JW_ADAPT_*.json"),
    ("N2 PAR/HEA", "N2_ccpvdz_PAR_HEA_*.json"),
    ("N2 JW/HEA c238", "N2_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_c238*.json"),
    ("benzene JW/HEA", "benzene_ccpvdz_JW_HEA_*.json"),
)

#: Recorded-backend wall time of each long entry's full re-run (s), measured in
#: the previous full sweep on this 2-core machine (``qencode-nb sweep --mode full``).
SWEEP_SECONDS = {"N2 JW/UCCSD": 9577, "H6 JW/HEA fa91": 9312, "H10 ADAPT": 5483,
                 "N2 PAR/HEA": 4014, "N2 JW/HEA c238": 2453, "benzene JW/HEA": 1698}

SLOW_CALL_S = 20.0
BACKENDS = ("default.qubit", "lightning.qubit", "fast")


class Timeout(Exception):
    pass


@contextmanager
def _deadline(seconds):
    def handler(signum, frame):
        raise Timeout(f"exceeded {seconds:g} s")
    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(max(1, int(seconds)))
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def bench(fn, timeout, budget=2.0, min_reps=3, max_reps=50):
    """``{"first", "median", "reps", "value"}``: one warm-up call, then the
    median of repeats (seconds per call); ``timeout`` is per call."""
    with _deadline(timeout):
        t = time.perf_counter()
        value = fn()
        first = time.perf_counter() - t
    times, cpu = [], []
    reps = 1 if first > SLOW_CALL_S else min_reps
    while len(times) < max_reps and (len(times) < reps or sum(times) < budget):
        with _deadline(timeout):
            t, c = time.perf_counter(), time.process_time()
            value = fn()
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
    return {"first": first, "median": statistics.median(times),
            "cpu_median": statistics.median(cpu), "reps": len(times), "value": value}


def _path(pattern):
    hits = sorted(DB.glob(pattern))
    if len(hits) != 1:
        raise FileNotFoundError(f"{pattern}: {len(hits)} files in {DB}")
    return hits[0]


def _qnode(H, circuit, wires, device, diff_method):
    """``<psi(p)|H|psi(p)>`` as a QNode on ``device`` (as
    :func:`qencode_nb.rerun.backends.qnode_energy`, with a diff method)."""
    import pennylane as qml

    dev = qml.device(device, wires=wires)

    @qml.qnode(dev, diff_method=diff_method)
    def energy(params):
        circuit(params, wires=wires)
        return qml.expval(H)

    return energy


def _adapt_circuit(hf_state, ops):
    """The ADAPT selection's circuit (``qnode_energy_fn``'s body) as ``circuit(p, wires)``."""
    import numpy as np
    import pennylane as qml

    from qencode_nb.rerun.ansatz import apply_tapered_op

    hf = np.array(hf_state, dtype=int)

    def circuit(params, wires):
        qml.BasisState(hf, wires=wires)
        for i, op in enumerate(ops):
            apply_tapered_op(op, params[i])

    return circuit


def _pair(qnode):
    """Energy and gradient as the generator's L-BFGS-B step computes them."""
    import numpy as np
    import pennylane as qml
    from pennylane import numpy as pnp

    def both(p):
        pp = pnp.array(p, requires_grad=True)
        return float(qnode(pp)), np.array(qml.grad(qnode)(pp), dtype=float)
    return both


def fast_problem(path):
    """``(entry, problem, fast Energy)`` of a HEA, UCCSD or <= 12-qubit ADAPT entry."""
    from qencode_nb.entry import load
    from qencode_nb.problem.check import rebuild
    from qencode_nb.rerun import ansatz
    from qencode_nb.rerun import fast_engine as fe
    from qencode_nb.rerun.problem import build_problem

    E = load(path)
    R = rebuild(E)
    P = build_problem(E, R)
    H = fe.Hamiltonian.from_pauli_terms(E.pauli_terms, E.tapered_num_qubits)
    if E.ansatz == "hea":
        C = fe.hea_circuit(E.hf_tapered_state, E.reps)
    elif E.ansatz == "uccsd":
        tap = R.tapering
        ops = ansatz.tapered_uccsd_ops(E.active_space[0], tap.n_qubits_full, tap.generators,
                                       tap.paulixops, tap.z2_sectors)
        C = fe.word_circuit(E.hf_tapered_state, fe.pool_words(ops))
    else:
        C = fe.word_circuit(E.hf_tapered_state, fe.pool_words(P.pool),
                            E.adapt["selected_operator_indices"])
    return E, P, fe.Energy(C, H)


def _bench_all(row, calls, timeout, budget):
    """Time ``calls[backend] = (energy(), energy_and_grad())`` into ``row[backend]``."""
    row["fast"] = {}
    for name in BACKENDS:
        f_e, f_eg = calls[name]
        for part, fn in (("energy", f_e), ("energy_grad", f_eg)):
            try:
                b = bench(fn, timeout, budget)
            except (Timeout, MemoryError) as exc:
                row[name][part] = {"reason": f"{type(exc).__name__}: {str(exc)[:120]}"}
                continue
            v = b.pop("value")
            if part == "energy":
                b["E"] = float(v)
            else:
                b["E"], b["grad"] = float(v[0]), [float(x) for x in v[1]]
            row[name][part] = b
    return row


def _circuit_kind(kind, path, timeout, budget):
    import numpy as np

    E, P, en = fast_problem(path)
    theta = np.array(E.optimal_params, dtype=float)
    if E.ansatz == "adapt":
        sel = [int(k) for k in E.adapt["selected_operator_indices"]]
        circuit = _adapt_circuit(E.hf_tapered_state, [P.pool[k] for k in sel])
    else:
        circuit = P.circuit
    row = {"kind": kind, "entry": path.name, "qubits": E.tapered_num_qubits,
           "params": len(theta), "fast_engine": "numba statevector"}
    calls = {"fast": (lambda: en(theta), lambda: en.energy_and_grad(theta))}
    for name, diff in (("default.qubit", "backprop"), ("lightning.qubit", "adjoint")):
        q = _qnode(P.hamiltonian, circuit, P.wires, name, diff)
        both = _pair(q)
        calls[name] = ((lambda q=q: float(q(theta))), (lambda both=both: both(theta)))
        row[name] = {"diff_method": diff}
    return _bench_all(row, calls, timeout, budget)


def _sector_kind(kind, path, timeout, budget):
    """ADAPT above 12 untapered qubits: sector engine vs the untapered
    excitation circuit on the circuit backends (``engines.py`` part 1)."""
    import numpy as np
    import pennylane as qml

    import engines as B
    from qencode_nb.entry import load
    from qencode_nb.problem.chemistry import run_chemistry
    from qencode_nb.problem.of_bridge import build_of_bridge
    from qencode_nb.rerun import ci_space as S

    e = load(path)
    system = path.name.split("_")[0]
    sp = B._sector_problem(system, e)
    sel, theta = B._ansatz(system, e, sp)
    nq = 2 * e.active_space[1]
    row = {"kind": kind, "entry": path.name, "qubits": e.tapered_num_qubits,
           "params": len(sel), "fast_engine": f"sector ({sp.ci_space.dim} determinants)",
           "circuit_qubits": nq}
    space, gens = sp.ci_space, sp.generators
    calls = {"fast": (
        lambda: space.energy(S.build_state(space, gens, sel, theta).reshape(space.shape)),
        lambda: S.energy_and_grad(space, gens, sel, theta))}
    gates = [(getattr(qml, sp.excitations[k][0]), sp.excitations[k][1]) for k in sel]
    hf = np.array([1] * e.active_space[0] + [0] * (nq - e.active_space[0]))
    chem = run_chemistry(e.geometry, e.basis, e.charge, e.spin, *e.active_space,
                         e.orbital_optimization)
    H, _ = build_of_bridge(chem, "jordan_wigner", verify_tol=None)

    def circuit(p, wires):
        qml.BasisState(hf, wires=wires)
        for i, (g, w) in enumerate(gates):
            g(p[i], wires=w)

    wires = list(range(nq))
    for name, diff in (("default.qubit", "backprop" if nq <= 12 else "adjoint"),
                       ("lightning.qubit", "adjoint")):
        q = _qnode(H, circuit, wires, name, diff)
        both = _pair(q)
        calls[name] = ((lambda q=q: float(q(theta))), (lambda both=both: both(theta)))
        row[name] = {"diff_method": diff}
    return _bench_all(row, calls, timeout, budget)


def _cross_check(row):
    """Max |E - E_fast| over the backends and both calls (Ha), and max
    |grad - grad_fast| (Ha/rad)."""
    import numpy as np

    fast = row["fast"]
    if "E" not in fast.get("energy", {}) or "E" not in fast.get("energy_grad", {}):
        return None, None
    e0 = fast["energy"]["E"]
    de = [(abs(fast["energy_grad"]["E"] - e0), "fast energy_grad")]
    dg = []
    for name in ("default.qubit", "lightning.qubit"):
        for part in ("energy", "energy_grad"):
            if "E" in row[name].get(part, {}):
                de.append((abs(row[name][part]["E"] - e0), f"{name} {part}"))
        if "grad" in row[name].get("energy_grad", {}):
            dg.append(float(np.max(np.abs(np.array(row[name]["energy_grad"]["grad"])
                                          - np.array(fast["energy_grad"]["grad"])))))
    worst = max(de)
    row["max_energy_diff_at"] = worst[1]
    return worst[0], (max(dg) if dg else None)


_COMPILE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
import numpy as np
import engines_kinds as K
E, P, en = K.fast_problem(sys.argv[1])
theta = np.array(E.optimal_params, dtype=float)
t = time.perf_counter(); en(theta); first_e = time.perf_counter() - t
t = time.perf_counter(); en.energy_and_grad(theta); first_eg = time.perf_counter() - t
print(json.dumps({"energy_first_s": first_e, "energy_grad_first_s": first_eg}))
"""


def numba_first_calls(pattern=KINDS[2][1]):
    """First ``en(p)`` and ``en.energy_and_grad(p)`` in a new process (numba import
    included): with an empty ``NUMBA_CACHE_DIR`` (compile) and with the
    default on-disk cache (load)."""
    import os
    import tempfile

    out = {}
    for label, cache in (("compile", True), ("cached", False)):
        env = dict(os.environ)
        with tempfile.TemporaryDirectory() as tmp:
            if cache:
                env["NUMBA_CACHE_DIR"] = tmp
            proc = subprocess.run([sys.executable, "-c", _COMPILE, str(_path(pattern)),
                                   str(Path(__file__).parent)], capture_output=True,
                                  text=True, env=env, timeout=600)
        out[label] = (json.loads(proc.stdout.strip().splitlines()[-1]) if not proc.returncode
                      else {"reason": (proc.stderr.strip().splitlines() or ["failed"])[-1]})
    return out


def print_first_calls(res):
    print(f"\nfast engine, first calls in a new process (s; numba import included; entry "
          f"{_path(KINDS[2][1]).name[:24]}):")
    for label, r in res.items():
        print(f"  {label:8} " + ("energy {energy_first_s:.3g}  energy+gradient "
                                 "{energy_grad_first_s:.3g}".format(**r)
                                 if "reason" not in r else r["reason"]))


def part_kinds(kinds=None, timeout=300, budget=2.0):
    rows = []
    for kind, pattern in KINDS:
        if kinds and kind not in kinds:
            continue
        path = _path(pattern)
        t0 = time.perf_counter()
        try:
            if kind == "ADAPT > 12 q":
                row = _sector_kind(kind, path, timeout, budget)
            else:
                row = _circuit_kind(kind, path, timeout, budget)
        except Exception as exc:  # a benchmark row, not a crash of the whole run
            row = {"kind": kind, "entry": path.name, "reason": f"{type(exc).__name__}: {exc}"}
        row["max_energy_diff_ha"], row["max_grad_diff"] = _cross_check(row) \
            if "fast" in row else (None, None)
        row["wall_s"] = time.perf_counter() - t0
        rows.append(row)
        slim = json.loads(json.dumps(row))
        for name in BACKENDS:
            for part in ("energy", "energy_grad"):
                slim.get(name, {}).get(part, {}).pop("grad", None)
        print(json.dumps(slim), flush=True)
    return rows


def _ms(cell):
    return f"{cell['median'] * 1e3:>11.4g}" if "median" in cell else f"{'n/a':>11}"


def print_kinds(rows):
    print("\nper entry kind, at the stored optimal parameters, ms per call (median; "
          "ratio = backend / fast):")
    for part, title in (("energy", "energy"), ("energy_grad", "energy + gradient")):
        print(f"\n{title}:")
        print(f"{'kind':14} {'entry':24} {'qb':>3} {'par':>4} {'default ms':>11} "
              f"{'lightning ms':>12} {'fast ms':>11} {'def/fast':>9} {'light/fast':>10}")
        for r in rows:
            if "reason" in r:
                print(f"{r['kind']:14} {r['entry'][:24]:24} not run: {r['reason']}")
                continue
            d, l, f = (r[n].get(part, {}) for n in BACKENDS)
            ratio = lambda a: (f"{a['median'] / f['median']:>9.1f}x"  # noqa: E731
                               if "median" in a and "median" in f else f"{'n/a':>10}")
            print(f"{r['kind']:14} {r['entry'][:24]:24} {r['qubits']:>3} {r['params']:>4} "
                  f"{_ms(d)} {_ms(l):>12} {_ms(f)} {ratio(d)} {ratio(l):>10}")
    print("\nfirst call (warm-up) s: default.qubit, lightning.qubit, fast  [energy | "
          "energy+gradient]; repeats; fast engine")
    for r in rows:
        if "reason" in r:
            continue
        cells = []
        for part in ("energy", "energy_grad"):
            cells.append(" ".join(f"{r[n][part]['first']:.3g}" if "first" in r[n].get(part, {})
                                  else "n/a" for n in BACKENDS))
        reps = "/".join(str(r[n].get(p, {}).get("reps", "-")) for n in BACKENDS
                        for p in ("energy", "energy_grad"))
        print(f"{r['kind']:14} [{cells[0]} | {cells[1]}]  reps {reps}  {r['fast_engine']}")
    print("\nenergies (Ha) and cross-check (max over backends and calls of |E - E_fast|, "
          "max |grad - grad_fast|):")
    worst = 0.0
    for r in rows:
        if "reason" in r:
            continue
        es = "  ".join(f"{n}={r[n]['energy']['E']:.12f}" if "E" in r[n].get("energy", {})
                       else f"{n}: {r[n].get('energy', {}).get('reason', 'n/a')}"
                       for n in BACKENDS)
        de, dg = r["max_energy_diff_ha"], r["max_grad_diff"]
        worst = max(worst, de or 0.0)
        print(f"{r['kind']:14} {es}\n{'':14} max |dE| = {de:.2e} Ha "
              f"({r.get('max_energy_diff_at')} vs fast energy), max |dgrad| = "
              f"{dg if dg is None else format(dg, '.2e')}"
              + ("" if de is None or de < 1e-10 else "   ** above 1e-10 Ha **"))
        for n in BACKENDS:
            for part in ("energy", "energy_grad"):
                if "reason" in r[n].get(part, {}):
                    print(f"{'':14} {n} {part}: {r[n][part]['reason']}")
    print(f"max energy difference over all kinds: {worst:.2e} Ha "
          f"({'within' if worst < 1e-10 else 'ABOVE'} 1e-10 Ha)")


# --------------------------------------------------------------------------- reruns

@contextmanager
def _fast_lbfgsb():
    """run_vqe's restart loop with an L-BFGS-B runner on ``energy.energy_and_grad``
    (the generator's options), unless :mod:`qencode_nb.rerun.vqe` already takes
    an object with ``energy_and_grad`` (the lead is adding it)."""
    import inspect

    from qencode_nb.rerun import vqe

    if "energy_and_grad" in inspect.getsource(vqe._lbfgsb):
        yield "qencode_nb.rerun.vqe._lbfgsb"
        return

    def runner(energy, x0, max_iterations, e_target, learning_rate):
        from scipy.optimize import minimize

        from qencode_nb.rules import LBFGSB_FTOL, LBFGSB_GTOL

        res = minimize(energy.energy_and_grad, x0, jac=True, method="L-BFGS-B",
                       options={"maxiter": max_iterations, "ftol": LBFGSB_FTOL,
                                "gtol": LBFGSB_GTOL})
        return res.fun, res.x, int(res.nfev) * (1 + 2 * len(x0)), False

    saved = vqe._lbfgsb
    vqe._lbfgsb = runner
    try:
        yield "benchmark's L-BFGS-B runner on energy_and_grad (run_vqe's restart loop)"
    finally:
        vqe._lbfgsb = saved


def _fast_rerun(label, path, timeout, budget):
    import numpy as np

    from qencode_nb.rerun.vqe import run_vqe

    t0 = time.perf_counter()
    E, P, en = fast_problem(path)
    build = time.perf_counter() - t0
    theta = np.array(E.optimal_params, dtype=float)
    opt = E.optimizer.name
    en(theta)  # numba load / compile outside the timed run
    en.energy_and_grad(theta)
    en.calls = 0
    with _fast_lbfgsb() as how:
        t = time.perf_counter()
        res = run_vqe(en, P.num_params, optimizer=opt, max_iterations=E.max_iterations,
                      restarts=E.restarts_requested, seed=E.seed, e_target=P.e_target,
                      early_stop=E.early_stop)
        wall = time.perf_counter() - t
    # the recorded backend's cost of one such evaluation, at the stored angles
    q = _qnode(P.hamiltonian, P.circuit, P.wires, E.backend, "backprop")
    fn = (lambda: float(q(theta))) if opt == "cobyla" else (lambda: _pair(q)(theta))
    b = bench(fn, timeout, budget)
    energy = res.best_energy + P.constant_ha
    return {"label": label, "entry": path.name, "optimizer": opt, "params": P.num_params,
            "qubits": E.tapered_num_qubits, "fast_s": wall, "build_s": build,
            "fast_engine": "numba statevector", "lbfgsb_runner": how if opt != "cobyla" else None,
            "evaluations": en.calls, "nfev": res.nfev, "published_nfev": E.published_nfev,
            "restarts_run": res.restarts_run, "published_restarts_run": E.published_restarts_run,
            "energy": energy, "published_energy": E.published_energy,
            "energy_minus_published_ha": energy - E.published_energy,
            "recorded_s_per_eval": b["median"], "recorded_cpu_s_per_eval": b["cpu_median"],
            "recorded_eval": "energy" if opt == "cobyla" else "energy + qml.grad",
            "recorded_estimate_s": b["median"] * en.calls}


def _adapt_rerun(label, path, adapt_timeout, coretype):
    import engines as B

    system = path.name.split("_")[0]
    row = B.adapt_run(system, "sector", adapt_timeout, coretype)
    out = {"label": label, "entry": path.name, "optimizer": "adapt (l-bfgs-b inner)",
           "fast_engine": "sector (ADAPT, own process)", "recorded_estimate_s": None,
           "estimate_reason": "recorded engine is the generator's statevector engine "
                              "(18-qubit CSR pool), not default.qubit: not estimated"}
    if "reason" in row:
        out["reason"] = row["reason"]
        return out
    out.update({"fast_s": row["adapt_s"], "build_s": row["build_s"], "params": row["ops"],
                "evaluations": row["nfev"], "nfev": row["nfev"],
                "energy": row["energy"], "published_energy": row["published"],
                "energy_minus_published_ha": row["energy"] - row["published"],
                "selection_as_recorded": row["selection_as_recorded"]})
    return out


_RECORDED = r"""
import json, sys, time
from qencode_nb.entry import load
from qencode_nb.problem.check import rebuild
from qencode_nb.rerun.problem import build_problem
from qencode_nb.rerun.rerun import rerun
E = load(sys.argv[1]); P = build_problem(E, rebuild(E))
t = time.perf_counter(); r = rerun(E, P); wall = time.perf_counter() - t
print(json.dumps({"recorded_s": wall, "energy": r.energy, "nfev": r.nfev,
                  "calls": r.details.get("energy_calls")}))
"""


def _recorded(label, path, timeout, coretype):
    """The recorded backend's full re-run in its own process (wall of ``rerun()``)."""
    if label == "H10 ADAPT":
        import engines as B

        row = B.adapt_run("H10", "statevector", timeout, coretype)
        return ({"reason": row["reason"]} if "reason" in row else
                {"recorded_s": row["adapt_s"], "energy": row["energy"], "nfev": row["nfev"]})
    try:
        proc = subprocess.run([sys.executable, "-c", _RECORDED, str(path)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"reason": f"exceeded {timeout:g} s"}
    if proc.returncode:
        return {"reason": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def part_reruns(labels=None, timeout=300, budget=2.0, adapt_timeout=1800, coretype=None,
                recorded=False, recorded_timeout=3600):
    rows = []
    for label, pattern in LONG:
        if labels and label not in labels:
            continue
        path = _path(pattern)
        try:
            if label == "H10 ADAPT":
                row = _adapt_rerun(label, path, adapt_timeout, coretype)
            else:
                row = _fast_rerun(label, path, timeout, budget)
        except Exception as exc:
            row = {"label": label, "entry": path.name, "reason": f"{type(exc).__name__}: {exc}"}
        row["sweep_recorded_s"] = SWEEP_SECONDS[label]
        if recorded:
            row["recorded"] = _recorded(label, path, recorded_timeout, coretype)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def print_reruns(rows):
    print("\nfull re-runs of the long entries (s; 'estimate' = default.qubit seconds per "
          "evaluation at the stored angles x the fast re-run's evaluations, NOT a "
          "measurement; 'sweep' = the recorded backend's wall time measured in the previous "
          "full sweep):")
    print(f"{'entry':15} {'opt':8} {'par':>4} {'fast s':>9} {'evals':>7} {'s/eval rec':>10} "
          f"{'estimate s':>10} {'sweep s':>8} {'sweep/fast':>10} {'measured s':>10} "
          f"{'E - published (Ha)':>18} {'nfev (pub)':>16} {'restarts (pub)':>14}")
    for r in rows:
        if "fast_s" not in r:
            print(f"{r['label']:15} not run: {r.get('reason')}")
            continue
        est = r.get("recorded_estimate_s")
        sweep_per_eval = (r["sweep_recorded_s"] / r["evaluations"]
                          if r.get("recorded_estimate_s") else None)
        meas = r.get("recorded", {})
        meas_s = (f"{meas['recorded_s']:>10.0f}" if "recorded_s" in meas
                  else f"{'-' if not meas else 'timeout':>10}")
        spe = r.get("recorded_s_per_eval")
        print(f"{r['label']:15} {r['optimizer'][:8]:8} {r['params']:>4} {r['fast_s']:>9.2f} "
              f"{r['evaluations']:>7} {(f'{spe:.4g}' if spe else 'n/a'):>10} "
              f"{(f'{est:.0f}' if est else 'n/a'):>10} {r['sweep_recorded_s']:>8} "
              f"{r['sweep_recorded_s'] / r['fast_s']:>9.0f}x {meas_s} "
              f"{r['energy_minus_published_ha']:>+18.3e} "
              f"{str(r['nfev']) + ' (' + str(r.get('published_nfev', '-')) + ')':>16} "
              f"{str(r.get('restarts_run', 1)) + ' (' + str(r.get('published_restarts_run', '-')) + ')':>14}")
        if sweep_per_eval:
            print(f"{'':15} sweep s / fast evaluations = {sweep_per_eval:.4g} s per evaluation "
                  f"(vs {spe:.4g} s wall, {r.get('recorded_cpu_s_per_eval', float('nan')):.4g} s "
                  "CPU measured now: the estimate scales with the machine's load)")
        if r.get("estimate_reason"):
            print(f"{'':15} estimate: {r['estimate_reason']}; selection as recorded: "
                  f"{r.get('selection_as_recorded')}")
        if meas and "reason" in meas:
            print(f"{'':15} --recorded: {meas['reason']}")
        elif "energy" in meas:
            print(f"{'':15} --recorded: energy {meas['energy']:.12f}, fast - recorded "
                  f"{r['energy'] - meas['energy']:+.2e} Ha, nfev {meas['nfev']}")
    print("fast s excludes the problem build (rebuild from the disk cache, pool) and the "
          "numba warm-up; H10's fast s is the sector ADAPT run alone.")
