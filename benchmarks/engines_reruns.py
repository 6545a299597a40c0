"""Part "reruns" of ``benchmarks/engines.py``: the six long entries (:data:`LONG`),
their full re-run on the fast engine and the recorded backend's time.

- HEA and UCCSD: :func:`qencode_nb.rerun.vqe.run_vqe` with the recorded optimiser,
  budgets, restarts and seed on the engine ``"fast"`` of the entry's problem
  (:func:`qencode_nb.rerun.problem.build_problem`; L-BFGS-B on the compiled
  engine's exact adjoint gradient), then an *estimate* of the recorded backend's
  time: seconds per energy (or energy+gradient for L-BFGS-B) on ``default.qubit``
  at the stored parameters x the evaluations the fast re-run made;
- H10 ADAPT: the sector engine's ADAPT run of part "adapt" (own process).

``--recorded`` really runs the recorded backend (own process each,
``--recorded-timeout``): :func:`qencode_nb.rerun.rerun.rerun` on the recorded
engines, and for H10 part "adapt"'s statevector run.  Beside them, the wall times
measured in the previous full sweep (:data:`SWEEP_SECONDS`).
"""

from __future__ import annotations

import time

import engines_adapt
import harness
import problems

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

#: The one ADAPT entry of :data:`LONG` (re-run by part "adapt"'s sector run).
ADAPT_LABEL = "H10 ADAPT"


def _fast_rerun(label, path, timeout, budget):
    import numpy as np

    from qencode_nb.entry import load
    from qencode_nb.rerun.problem import build_problem
    from qencode_nb.rerun.vqe import run_vqe

    t0 = time.perf_counter()
    E = load(path)
    R = problems.rebuild(E)
    P = build_problem(E, R, "fast")
    en = P.engines.rerun.energy()
    build = time.perf_counter() - t0
    theta = np.array(E.optimal_params, dtype=float)
    opt = E.optimizer.name
    en(theta)  # numba load / compile outside the timed run
    en.energy_and_grad(theta)
    en.calls = 0
    t = time.perf_counter()
    res = run_vqe(en, P.num_params, optimizer=opt, max_iterations=E.max_iterations,
                  restarts=E.restarts_requested, seed=E.seed, e_target=P.e_target,
                  early_stop=E.early_stop)
    wall = time.perf_counter() - t
    # the recorded backend's cost of one such evaluation, at the stored angles
    qb = problems.bind("qnode", E, R)
    q = problems.qnode(qb.hamiltonian, qb.circuit, qb.wires, E.backend, "backprop")
    fn = ((lambda: float(q(theta))) if opt == "cobyla"
          else (lambda: problems.energy_and_grad(q)(theta)))
    b = harness.bench(fn, timeout, budget)
    energy = res.best_energy + P.constant_ha
    return {"label": label, "entry": path.name, "optimizer": opt, "params": P.num_params,
            "qubits": E.tapered_num_qubits, "fast_s": wall, "build_s": build,
            "fast_engine": P.engines.rerun.label,
            "evaluations": en.calls, "nfev": res.nfev, "published_nfev": E.published_nfev,
            "restarts_run": res.restarts_run, "published_restarts_run": E.published_restarts_run,
            "energy": energy, "published_energy": E.published_energy,
            "energy_minus_published_ha": energy - E.published_energy,
            "recorded_s_per_eval": b["median"], "recorded_cpu_s_per_eval": b["cpu_median"],
            "recorded_eval": "energy" if opt == "cobyla" else "energy + qml.grad",
            "recorded_estimate_s": b["median"] * en.calls}


def _adapt_rerun(label, path, adapt_timeout, coretype):
    system = path.name.split("_")[0]
    row = engines_adapt.adapt_run(system, "sector", adapt_timeout, coretype)
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


def recorded_rerun(path: str) -> dict:
    """The full re-run of the entry at ``path`` on its recorded engines, in this
    process: ``{"recorded_s", "energy", "nfev", "calls"}`` (wall of ``rerun()``)."""
    from qencode_nb.entry import load
    from qencode_nb.rerun.problem import build_problem
    from qencode_nb.rerun.rerun import rerun

    E = load(path)
    P = build_problem(E, problems.rebuild(E))
    r, wall = harness.timed(lambda: rerun(E, P))
    return {"recorded_s": wall, "energy": r.energy, "nfev": r.nfev,
            "calls": r.details.get("energy_calls")}


def _recorded(label, path, timeout, coretype):
    """The recorded backend's full re-run in its own process."""
    if label == ADAPT_LABEL:
        row = engines_adapt.adapt_run("H10", "statevector", timeout, coretype)
        return ({"reason": row["reason"]} if "reason" in row else
                {"recorded_s": row["adapt_s"], "energy": row["energy"], "nfev": row["nfev"]})
    return harness.run_function("engines_reruns", "recorded_rerun", [path], timeout)


def part_reruns(labels=None, timeout: float = 300, budget: float = 2.0,
                adapt_timeout: float = 1800, coretype: str | None = None,
                recorded: bool = False, recorded_timeout: float = 3600) -> list[dict]:
    """Part "reruns": one row per entry of :data:`LONG` (``labels``: a subset)."""
    rows = []
    for label, pattern in LONG:
        if labels and label not in labels:
            continue
        path = harness.db_path(pattern)
        try:
            if label == ADAPT_LABEL:
                row = _adapt_rerun(label, path, adapt_timeout, coretype)
            else:
                row = _fast_rerun(label, path, timeout, budget)
        except Exception as exc:  # a benchmark row, not a crash of the whole run
            row = {"label": label, "entry": path.name, "reason": f"{type(exc).__name__}: {exc}"}
        row["sweep_recorded_s"] = SWEEP_SECONDS[label]
        if recorded:
            row["recorded"] = _recorded(label, path, recorded_timeout, coretype)
        rows.append(row)
        harness.print_row(row)
    return rows


def print_reruns(rows) -> None:
    """The table of part "reruns" (fast, estimate, sweep and measured seconds)."""
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
