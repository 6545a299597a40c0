"""Part "kinds" of ``benchmarks/engines.py``: the fast engine against PennyLane, one
real entry per kind at its stored optimal parameters (:data:`KINDS`), seconds per
energy and per energy+gradient on

- ``default.qubit``: the QNode engine's circuit (engine ``"qnode"`` bound to the
  entry); energy+gradient as the generator's L-BFGS-B step computes it
  (``qnode(p)`` then ``qml.grad(qnode)(p)``, backprop);
- ``lightning.qubit``: the same circuit, ``diff_method="adjoint"``, same pair;
- ``fast``: the engine ``"fast"`` bound to the entry
  (:class:`qencode_nb.engines.fast.compiled.Energy`, numba), ``en(p)`` and
  ``en.energy_and_grad(p)``.  ADAPT above 12 untapered qubits (H8): the sector
  engine (:mod:`qencode_nb.engines.sector.space`), and the circuit backends run
  the untapered excitation circuit of part "evals" (``default.qubit`` with
  ``diff_method="adjoint"`` there).

Each timing (:func:`harness.bench`): one warm-up call (reported as ``first``,
numba load or compile for the fast engine), then the median of repeats (at least
3, up to about ``--budget`` seconds; 1 repeat when a call takes over 20 s).
Beside them, the fast engine's first calls in a new process, with and without
numba's on-disk cache (:func:`numba_first_calls`).
"""

from __future__ import annotations

import json
import tempfile
import time

import harness
import problems

#: (kind, entry file glob) of part "kinds".
KINDS = (
    ("HEA JW", "H6_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_fa91*.json"),
    ("HEA PAR", "N2_ccpvdz_PAR_HEA_*.json"),
    ("HEA BK", "H2_ccpvdz_BK_HEA_*.json"),
    ("UCCSD", "N2_ccpvdz_JW_UCCSD_*.json"),
    ("ADAPT <= 12 q", "H6_ccpvdz_JW_ADAPT_*.json"),
    ("ADAPT > 12 q", "H8_ccpvdz_JW_ADAPT_*.json"),
)

#: The timed backends, in table order.
BACKENDS = ("default.qubit", "lightning.qubit", "fast")

#: The entry whose first calls :func:`numba_first_calls` times (HEA BK, H2).
FIRST_CALLS_KIND = "HEA BK"


def _bench_all(row, calls, timeout, budget):
    """Time ``calls[backend] = (energy(), energy_and_grad())`` into ``row[backend]``."""
    row["fast"] = {}
    for name in BACKENDS:
        f_e, f_eg = calls[name]
        for part, fn in (("energy", f_e), ("energy_grad", f_eg)):
            try:
                b = harness.bench(fn, timeout, budget)
            except (harness.Timeout, MemoryError) as exc:
                row[name][part] = {"reason": harness.reason(exc)}
                continue
            v = b.pop("value")
            if part == "energy":
                b["E"] = float(v)
            else:
                b["E"], b["grad"] = float(v[0]), [float(x) for x in v[1]]
            row[name][part] = b
    return row


def _add_circuit_backends(row, calls, H, circuit, wires, theta, default_diff):
    """``calls`` of default.qubit (``default_diff``) and lightning.qubit (adjoint)."""
    for name, diff in (("default.qubit", default_diff), ("lightning.qubit", "adjoint")):
        q = problems.qnode(H, circuit, wires, name, diff)
        both = problems.energy_and_grad(q)
        calls[name] = ((lambda q=q: float(q(theta))), (lambda both=both: both(theta)))
        row[name] = {"diff_method": diff}


def _circuit_kind(kind, path, timeout, budget):
    """HEA, UCCSD and <= 12-qubit ADAPT: the engines "fast" and "qnode" bound to the entry."""
    import numpy as np

    from qencode_nb.entry import load

    E = load(path)
    R = problems.rebuild(E)
    _, en = problems.fast_energy(E, R)
    qb = problems.bind("qnode", E, R)
    theta = np.array(E.optimal_params, dtype=float)
    row = {"kind": kind, "entry": path.name, "qubits": E.tapered_num_qubits,
           "params": len(theta), "fast_engine": "numba statevector"}
    calls = {"fast": (lambda: en(theta), lambda: en.energy_and_grad(theta))}
    _add_circuit_backends(row, calls, qb.hamiltonian, problems.qnode_circuit(qb, E),
                          qb.wires, theta, "backprop")
    return _bench_all(row, calls, timeout, budget)


def _sector_kind(kind, path, timeout, budget):
    """ADAPT above 12 untapered qubits: the sector engine vs the untapered excitation
    circuit on the circuit backends (part "evals")."""
    from qencode_nb.engines.sector import space as S
    from qencode_nb.entry import load

    e = load(path)
    system = path.name.split("_")[0]
    sp = problems.sector_problem(system, e, problems.rebuild(e))
    sel, theta = problems.ansatz(system, e)
    nq = 2 * e.active_space[1]
    row = {"kind": kind, "entry": path.name, "qubits": e.tapered_num_qubits,
           "params": len(sel), "fast_engine": f"sector ({sp.ci_space.dim} determinants)",
           "circuit_qubits": nq}
    space, gens = sp.ci_space, sp.generators
    calls = {"fast": (
        lambda: space.energy(S.build_state(space, gens, sel, theta).reshape(space.shape)),
        lambda: S.energy_and_grad(space, gens, sel, theta))}
    circuit = problems.excitation_circuit(problems.hf_bits(e),
                                          problems.excitation_gates(sp, sel))
    _add_circuit_backends(row, calls, problems.untapered_hamiltonian(e), circuit,
                          list(range(nq)), theta, "backprop" if nq <= 12 else "adjoint")
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


def first_calls(path: str) -> dict:
    """Seconds of the first ``en(p)`` and ``en.energy_and_grad(p)`` of the entry at
    ``path`` on the fast engine, in this process (run in a new one)."""
    import numpy as np

    from qencode_nb.entry import load

    E = load(path)
    _, en = problems.fast_energy(E, problems.rebuild(E))
    theta = np.array(E.optimal_params, dtype=float)
    _, first_e = harness.timed(lambda: en(theta))
    _, first_eg = harness.timed(lambda: en.energy_and_grad(theta))
    return {"energy_first_s": first_e, "energy_grad_first_s": first_eg}


def numba_first_calls(kind: str = FIRST_CALLS_KIND) -> dict:
    """:func:`first_calls` in a new process (numba import included): with an empty
    ``NUMBA_CACHE_DIR`` (``"compile"``) and with the default on-disk cache
    (``"cached"``)."""
    path = harness.db_path(dict(KINDS)[kind])
    out = {}
    for label, fresh_cache in (("compile", True), ("cached", False)):
        with tempfile.TemporaryDirectory() as tmp:
            env = harness.child_env({"NUMBA_CACHE_DIR": tmp} if fresh_cache else None)
            out[label] = harness.run_function("engines_kinds", "first_calls", [path],
                                              timeout=600, env=env)
    return out


def print_first_calls(res, kind: str = FIRST_CALLS_KIND) -> None:
    """The two first-call rows of :func:`numba_first_calls`."""
    print(f"\nfast engine, first calls in a new process (s; numba import included; entry "
          f"{harness.db_path(dict(KINDS)[kind]).name[:24]}):")
    for label, r in res.items():
        print(f"  {label:8} " + ("energy {energy_first_s:.3g}  energy+gradient "
                                 "{energy_grad_first_s:.3g}".format(**r)
                                 if "reason" not in r else r["reason"]))


def part_kinds(kinds=None, timeout: float = 300, budget: float = 2.0) -> list[dict]:
    """Part "kinds": one row per kind of :data:`KINDS` (``kinds``: a subset of the
    names), ``timeout`` seconds per call, ``budget`` seconds of repeats per timing."""
    rows = []
    for kind, pattern in KINDS:
        if kinds and kind not in kinds:
            continue
        path = harness.db_path(pattern)
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
        harness.print_row(slim)
    return rows


def _ms(cell):
    return f"{cell['median'] * 1e3:>11.4g}" if "median" in cell else f"{'n/a':>11}"


def print_kinds(rows) -> None:
    """The tables of part "kinds": ms per call, first calls, energies and cross-check."""
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
