"""The problems the engine benchmarks time: shared entries bound to engines, the
untapered excitation circuits, and PennyLane QNodes over them.

Engines come from the registry (:func:`qencode_nb.engines.registry.get`, bound per
entry); nothing here imports numpy, PennyLane or PySCF at import time.  Energies
in Ha before the tapering constant correction, angles in radians.
"""

from __future__ import annotations

import harness

#: Excitations of H6's sector ansatz (its recorded pool is Pauli words, which do not
#: map to the sector engine: the first 28 spin-orbital excitations at random angles).
H6_OPS = 28


def adapt_entry(system: str):
    """The shared ``{system}_ccpvdz_JW_ADAPT_*`` entry (system "H6", "H8", "H10")."""
    from qencode_nb.entry import load

    return load(harness.db_path(f"{system}_ccpvdz_JW_ADAPT_*.json"))


def rebuild(entry):
    """The entry's rebuild (:func:`qencode_nb.hamiltonian.check.rebuild`, disk-cached)."""
    from qencode_nb.hamiltonian import check

    return check.rebuild(entry)


def bind(name: str, entry, rebuilt):
    """The entry bound to the registered engine ``name`` (``qnode``, ``statevector``,
    ``sector``, ``fast``).

    Raises:
        NotRunnable: the engine cannot run the entry (``.reason``).
    """
    from qencode_nb.engines import registry

    return registry.get(name).bind(entry, rebuilt)


def selection(entry) -> list[int]:
    """An ADAPT entry's recorded selection (pool indices in circuit order)."""
    return [int(k) for k in entry.adapt["selected_operator_indices"]]


def fast_energy(entry, rebuilt):
    """``(bound, energy)``: the entry on the compiled statevector engine (engine
    ``"fast"``) and its :class:`~qencode_nb.engines.fast.compiled.Energy` (ADAPT: of the
    recorded selection)."""
    bound = bind("fast", entry, rebuilt)
    return bound, bound.problem.energy(selection(entry) if entry.ansatz == "adapt" else None)


def qnode_circuit(bound, entry):
    """``circuit(p, wires)`` of an entry on the QNode engine (a
    :class:`~qencode_nb.engines.qnode.engine.QNodeBound`): its HEA or UCCSD circuit,
    or the ADAPT circuit of the recorded selection of its pool."""
    if bound.circuit is not None:
        return bound.circuit
    return adapt_circuit(bound.hf_state, [bound.pool[k] for k in selection(entry)])


def ansatz(system: str, entry):
    """``(selected, angles)`` of the sector ansatz: the entry's selection at its
    stored angles, or for H6 the first :data:`H6_OPS` excitations at fixed random
    angles in [-0.2, 0.2] (seed 6)."""
    import numpy as np

    if system == "H6":
        return list(range(H6_OPS)), np.random.default_rng(6).uniform(-0.2, 0.2, size=H6_OPS)
    return selection(entry), np.array(entry.optimal_params, dtype=float)


def sector_problem(system: str, entry, rebuilt):
    """The :class:`~qencode_nb.engines.sector.mapping.SectorProblem` of the system: the
    sector engine's binding (H8, H10: the generator's pool), or for H6 every
    spin-orbital excitation as the pool (the entry itself does not map)."""
    if system != "H6":
        return bind("sector", entry, rebuilt).problem
    import pennylane as qml

    from qencode_nb.engines.ansatz import uccsd_excitations
    from qencode_nb.engines.sector import space
    from qencode_nb.engines.sector.generators import generators
    from qencode_nb.engines.sector.mapping import SectorProblem

    sec = space.from_summary(rebuilt.chemistry)
    exc = uccsd_excitations(entry.active_space[0], 2 * entry.active_space[1])
    with qml.QueuingManager.stop_recording():
        gens = generators(sec, [qml.generator(g(0.0, wires=list(w)), format="observable")
                                for g, w in exc])
    return SectorProblem(ci_space=sec, generators=gens,
                         excitations=[(g.__name__, list(w)) for g, w in exc],
                         angle_factor=1.0)


def untapered_hamiltonian(entry):
    """The entry's active-space Hamiltonian on the untapered jordan_wigner qubits
    (PennyLane operator, Ha; a PySCF run and OpenFermion)."""
    from qencode_nb.hamiltonian.chemistry import run_chemistry
    from qencode_nb.hamiltonian.of_bridge import build_of_bridge

    chem = run_chemistry(entry.geometry, entry.basis, entry.charge, entry.spin,
                         *entry.active_space, entry.orbital_optimization)
    H, _ = build_of_bridge(chem, "jordan_wigner", verify_tol=None)
    return H


def excitation_gates(problem, selected) -> list:
    """``[(PennyLane gate class, wires)]`` of the selected excitations of a sector problem."""
    import pennylane as qml

    return [(getattr(qml, problem.excitations[k][0]), problem.excitations[k][1])
            for k in selected]


def hf_bits(entry) -> list[int]:
    """The untapered jordan_wigner HF occupation bits of the active space."""
    ne, nq = entry.active_space[0], 2 * entry.active_space[1]
    return [1] * ne + [0] * (nq - ne)


def excitation_circuit(hf, gates):
    """``circuit(p, wires)``: ``BasisState(hf)`` then ``gate(p[i], wires=w)`` per gate."""
    import numpy as np
    import pennylane as qml

    hf = np.array(hf)

    def circuit(params, wires):
        qml.BasisState(hf, wires=wires)
        for i, (g, w) in enumerate(gates):
            g(params[i], wires=w)

    return circuit


def adapt_circuit(hf_state, ops):
    """The ADAPT selection's circuit as ``circuit(p, wires)`` (the QNode engine's body:
    ``BasisState`` then :func:`qencode_nb.engines.ansatz.apply_tapered_op` per operator)."""
    import numpy as np
    import pennylane as qml

    from qencode_nb.engines.ansatz import apply_tapered_op

    hf = np.array(hf_state, dtype=int)

    def circuit(params, wires):
        qml.BasisState(hf, wires=wires)
        for i, op in enumerate(ops):
            apply_tapered_op(op, params[i])

    return circuit


def qnode(H, circuit, wires, device: str, diff_method: str):
    """``<psi(p)|H|psi(p)>`` (Ha) as a QNode on ``device`` with ``diff_method`` (as
    :func:`qencode_nb.engines.qnode.energy.qnode_energy`, with a diff method)."""
    import pennylane as qml

    dev = qml.device(device, wires=wires)

    @qml.qnode(dev, diff_method=diff_method)
    def energy(params):
        circuit(params, wires=wires)
        return qml.expval(H)

    return energy


def energy_and_grad(qnode_fn):
    """``f(p) -> (E, dE/dp)`` as the generator's L-BFGS-B step computes them
    (``qnode(p)`` then ``qml.grad(qnode)(p)``); float and float64 array."""
    import numpy as np
    import pennylane as qml
    from pennylane import numpy as pnp

    def both(p):
        pp = pnp.array(p, requires_grad=True)
        return float(qnode_fn(pp)), np.array(qml.grad(qnode_fn)(pp), dtype=float)

    return both
