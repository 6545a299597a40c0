"""Part "evals" of ``benchmarks/engines.py``: energy + gradient of one ansatz state,
per system (the problems of the shared H6/H8/H10 ADAPT entries: cc-pVDZ, CASSCF
active space, 1.0 Angstrom), on

- ``sector``: :func:`qencode_nb.engines.sector.space.energy_and_grad` (adjoint);
- ``statevector``: the generator's sparse statevector engine
  (:func:`qencode_nb.engines.statevector.sparse.energy_and_grad`, untapered CSR
  matrices);
- ``default.qubit``: a PennyLane QNode, ``qml.grad`` (backprop up to 12 qubits;
  above, ``diff_method="adjoint"``: backprop through the H8 Hamiltonian exhausted
  24 GiB);
- ``lightning.qubit``: a PennyLane QNode, ``diff_method="adjoint"``.

The ansatz is the entry's selected excitations at their stored angles (H8, H10)
or the first 28 excitations at fixed random angles (H6, whose recorded pool is
made of Pauli words); the circuit backends apply
``qml.DoubleExcitation``/``qml.SingleExcitation`` on the untapered jordan_wigner
Hamiltonian, whose energy equals the sector's (printed as a cross-check).  A
backend that would not fit (CSR matrices above :data:`CSR_MAX_QUBITS` qubits) or
that exceeds ``--eval-timeout`` is reported with its reason.

Each timing (:func:`harness.bench`): one warm-up call, then the median of
repeats for about a second (1 repeat above 5 s per call).
"""

from __future__ import annotations

import harness
import problems

#: Most untapered qubits the CSR matrices and circuit backends are run on.
CSR_MAX_QUBITS = 16

#: The backends compared with the sector engine, in table order.
OTHERS = ("statevector", "default.qubit", "lightning.qubit")


def _timing(fn, timeout):
    """``(seconds per call, value)``: :func:`harness.bench` for about 1 s of repeats."""
    b = harness.bench(fn, timeout, budget=1.0, min_reps=1, max_reps=20, slow_call_s=5.0)
    return b["median"], b["value"]


def _statevector(H, gates, hf, theta, nq, timeout) -> dict:
    from qencode_nb.engines.statevector import sparse as sv

    import pennylane as qml

    wires = list(range(nq))
    H_sp = H.sparse_matrix(wire_order=wires).tocsr()
    Bs, B2s = [], []
    for g, w in gates:
        B = (2j * sv.pauli_csr(qml.generator(g(0.0, wires=w), format="observable"),
                               wires)).tocsr()
        Bs.append(B)
        B2s.append((B @ B).tocsr())
    psi0 = sv.hf_statevector(hf)
    idx = list(range(len(gates)))
    t, (E, _) = _timing(lambda: sv.energy_and_grad(H_sp, Bs, B2s, psi0, idx, list(theta)),
                        timeout)
    return {"seconds": t, "energy": E}


def _circuit(name, diff, H, circuit, theta, nq, timeout) -> dict:
    import numpy as np

    q = problems.qnode(H, circuit, list(range(nq)), name, diff)
    both = problems.energy_and_grad(q)
    try:
        t, (E, _) = _timing(lambda: both(theta), timeout)
        return {"seconds": t, "energy": E, "diff_method": diff}
    except (harness.Timeout, MemoryError) as exc:
        cell = {"seconds": None, "reason": f"{diff}: {harness.reason(exc)}"}
    try:   # the energy alone, for scale
        t, _ = _timing(lambda: float(q(np.array(theta))), timeout)
        cell["energy_only_seconds"] = t
        cell["reason"] += f"; energy alone {t:.3g} s"
    except (harness.Timeout, MemoryError) as exc:
        cell["reason"] += f"; energy alone: {type(exc).__name__}"
    return cell


def evals_row(system: str, timeout: float) -> dict:
    """One system's row: seconds per energy + gradient on each backend."""
    from qencode_nb.engines.sector import space as S

    e = problems.adapt_entry(system)
    sp = problems.sector_problem(system, e, problems.rebuild(e))
    sel, theta = problems.ansatz(system, e)
    nq = 2 * e.active_space[1]
    res = {"system": system, "qubits": nq, "sector_dim": sp.ci_space.dim, "ops": len(sel)}
    t, (E, _) = _timing(lambda: S.energy_and_grad(sp.ci_space, sp.generators, sel, theta),
                        timeout)
    res["sector"] = {"seconds": t, "energy": E}
    if nq > CSR_MAX_QUBITS:
        why = (f"{nq} qubits: the untapered CSR Hamiltonian and the circuit backends "
               "need minutes per evaluation and many GB; not run")
        res.update({name: {"seconds": None, "reason": why} for name in OTHERS})
        return res
    gates = problems.excitation_gates(sp, sel)
    hf = problems.hf_bits(e)
    H = problems.untapered_hamiltonian(e)
    try:
        res["statevector"] = _statevector(H, gates, hf, theta, nq, timeout)
    except (harness.Timeout, MemoryError) as exc:
        res["statevector"] = {"seconds": None, "reason": harness.reason(exc)}
    circuit = problems.excitation_circuit(hf, gates)
    for name, diff in (("default.qubit", "backprop" if nq <= 12 else "adjoint"),
                       ("lightning.qubit", "adjoint")):
        res[name] = _circuit(name, diff, H, circuit, theta, nq, timeout)
    return res


def part_evals(systems, timeout: float) -> list[dict]:
    """Part "evals": :func:`evals_row` per system (``timeout`` seconds per call)."""
    rows = []
    for system in systems:
        rows.append(evals_row(system, timeout))
        harness.print_row(rows[-1])
    return rows


def print_evals(rows) -> None:
    """The table of part "evals" (ratio = backend / sector) and the energy cross-check."""
    print("\nenergy + gradient, seconds per evaluation (ratio = backend / sector):")
    print(f"{'system':6} {'ops':>4} {'sector':>10} " + " ".join(f"{n:>26}" for n in OTHERS))
    for r in rows:
        base = r["sector"]["seconds"]
        cells = []
        for n in OTHERS:
            t = r[n]["seconds"]
            cells.append(f"{'not run':>26}" if t is None else
                         f"{t:>12.4g} ({t / base:>9.1f}x)")
        print(f"{r['system']:6} {r['ops']:>4} {base:>10.4g} " + " ".join(cells))
        for n in OTHERS:
            if r[n].get("energy") is not None:
                print(f"    {n}: energy - sector energy = "
                      f"{r[n]['energy'] - r['sector']['energy']:+.2e} Ha")
            elif r[n].get("reason"):
                print(f"    {n}: {r[n]['reason']}")
