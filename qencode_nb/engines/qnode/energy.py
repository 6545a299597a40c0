"""Energy backends: one interface, ``energy(params) -> float`` in Ha.

Today: PennyLane QNodes on ``default.qubit`` (the backend every QEncode v4
entry records) and ``lightning.qubit``.  A QNode here is built exactly as the
generator builds it (``run_vqe``: ``qml.device(backend, wires=wires)``,
``qml.expval(H)``), so energies are bit-identical where the arithmetic is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from qencode_nb.entry import vocabulary


@dataclass
class Energy:
    """An energy function over ansatz parameters.

    Attributes:
        qnode: the PennyLane QNode (params array of shape (num_params,) in
            radians -> expectation value in Ha, without any tapering
            constant correction).
        backend: canonical backend name.
        wires: wire labels, in order.
        calls: number of energy evaluations so far (an nfev cross-check).
    """

    qnode: Callable
    backend: str
    wires: list
    calls: int = 0

    def __call__(self, params) -> float:
        self.calls += 1
        return float(self.qnode(params))


def qnode_energy(hamiltonian, circuit, wires, backend: str = "default.qubit") -> Energy:
    """Build ``<psi(params)|H|psi(params)>`` as a PennyLane QNode.

    Args:
        hamiltonian: PennyLane operator (Ha).
        circuit: ``circuit(params, wires)`` preparing the ansatz state.
        wires: wire labels (list of int).
        backend: "default.qubit" or "lightning.qubit" (vocabulary aliases ok).

    Raises:
        EntryError: unknown backend (names the accepted ones).
    """
    import pennylane as qml

    name = vocabulary.backend(backend, "backend")
    dev = qml.device(name, wires=wires)

    @qml.qnode(dev)
    def energy(params):
        circuit(params, wires=wires)
        return qml.expval(hamiltonian)

    return Energy(qnode=energy, backend=name, wires=list(wires))
